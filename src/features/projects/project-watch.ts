/**
 * Several instances: each one's certain way to learn of a key revoked, a key's expiry brought
 * forward (a rotation) or a project changed through another. Notices (Redis pub/sub) are fast but not certain: a subscriber that reconnects misses
 * what was published meanwhile. So every `intervalMs` (CLUSTER_CHECK_MS, 5 s) each instance also
 * asks Postgres for the keys revoked and the projects changed since its last look, and applies each
 * exactly as its notice (ProjectsService.applyNotice: the key forgotten and its streams ended, the
 * project's actor reconfigured and, suspended, its streams ended). A missed notice is repaired
 * within one interval and one read.
 *
 * The times are the database's (one clock for all instances). A change is stamped with its
 * transaction's start (now()), which can precede its commit: each look reaches back OVERLAP_MS
 * before the last one, and what was already applied (by id and time) is not applied again.
 */
import type { Logger } from "../../kernel/log.ts";
import type { ProjectsRepo } from "../../store/projects.repo.ts";
import type { ProjectNotice } from "./projects.service.ts";

/** How far each look reaches back before the last one (a change committed that long after its start is missed). */
export const OVERLAP_MS = 60_000;

export class ProjectWatch {
  /** The database's clock at the last look (null: not begun). */
  private since: string | null = null;
  /** What was applied, by `<kind>:<id>@<time>`, while a look still reaches it. */
  private applied = new Set<string>();
  private timer: ReturnType<typeof setInterval> | null = null;
  private looking: Promise<void> | null = null;
  private failing = false;

  constructor(
    private readonly deps: {
      repo: Pick<ProjectsRepo, "clock" | "changedSince">;
      apply: (n: ProjectNotice) => Promise<void>;
      log: Logger;
    },
  ) {}

  /** Marks where the first look starts: call it before reading the projects and keys at boot. */
  async begin(): Promise<void> {
    this.since = await this.deps.repo.clock();
  }

  /** Looks every `intervalMs`. */
  start(intervalMs: number): void {
    this.timer ??= setInterval(() => void this.check(), intervalMs);
  }

  /** Stops looking (after the look under way). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.looking;
  }

  /** One look (one at a time): the changes since the last, each applied once. Failures are logged. */
  check(): Promise<void> {
    this.looking ??= this.look()
      .then(() => {
        if (this.failing) this.deps.log.info("checking for revoked keys works again");
        this.failing = false;
      })
      .catch((e) => {
        if (!this.failing)
          this.deps.log.warn({ err: e instanceof Error ? e.message : String(e) }, "checking for revoked keys failed");
        this.failing = true;
      })
      .finally(() => {
        this.looking = null;
      });
    return this.looking;
  }

  private async look(): Promise<void> {
    const since = this.since ?? (await this.deps.repo.clock());
    const now = await this.deps.repo.clock();
    const changes = await this.deps.repo.changedSince(since, OVERLAP_MS);
    const notices: [string, ProjectNotice][] = [
      ...changes.keys.map((k): [string, ProjectNotice] => [
        `key:${k.id}@${k.at}`,
        { topic: "key-revoked", keyId: k.id },
      ]),
      ...changes.projects.map((p): [string, ProjectNotice] => [
        `project:${p.id}@${p.at}`,
        { topic: "project", projectId: p.id },
      ]),
      ...changes.expiring.map((k): [string, ProjectNotice] => {
        const expiresAt = k.expiresAt.toISOString();
        return [`expiry:${k.id}@${expiresAt}`, { topic: "key-expiry", keyId: k.id, expiresAt }];
      }),
    ];
    const seen = new Set<string>();
    for (const [id, notice] of notices) {
      seen.add(id);
      if (!this.applied.has(id)) await this.deps.apply(notice);
      this.applied.add(id);
    }
    // the looks' reach only moves forward: what this one did not see, no later one will
    this.applied = seen;
    this.since = now;
  }
}
