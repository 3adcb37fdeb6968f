/** Projects and their API keys (only the key's SHA-256 is stored). */
import { and, asc, eq, gt, inArray, isNull, sql } from "drizzle-orm";
import { rowsOf } from "./batch-sql.ts";
import { apiKeys, projects } from "./schema.ts";
import type { Db } from "./db.ts";
import type { ProjectStatus } from "../../actors/projects/project.machine.ts";
import type { PolicyOverrides } from "./policy-overrides.ts";
import type { KeyScope } from "../kernel/scopes.ts";
import type { KeyEnvironment } from "../stellar/networks.ts";

export type { ProjectStatus };

export interface ProjectRow {
  id: string;
  name: string;
  status: ProjectStatus;
  policy: PolicyOverrides;
  /** The addresses it accepts x402 payments to. */
  x402PayTo: string[];
  /** Its credit journal's sum and outstanding reservations (kept by the journal's trigger). */
  creditBalance: bigint;
  creditReserved: bigint;
  createdAt: Date;
  updatedAt: Date;
}

export interface KeyRow {
  id: string;
  projectId: string;
  environment: KeyEnvironment;
  prefix: string;
  label: string | null;
  scopes: KeyScope[];
  createdAt: Date;
  /** When the key stops working (null: never). */
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

const asProject = ({ lowBalanceAlerted: _, ...r }: typeof projects.$inferSelect): ProjectRow => ({
  ...r,
  policy: r.policy as PolicyOverrides,
});
const keyColumns = {
  id: apiKeys.id,
  projectId: apiKeys.projectId,
  environment: apiKeys.environment,
  prefix: apiKeys.prefix,
  label: apiKeys.label,
  scopes: sql<KeyScope[]>`${apiKeys.scopes}`,
  createdAt: apiKeys.createdAt,
  expiresAt: apiKeys.expiresAt,
  lastUsedAt: apiKeys.lastUsedAt,
  revokedAt: apiKeys.revokedAt,
};

export class ProjectsRepo {
  constructor(private readonly db: Db) {}

  async create(p: { id: string; name: string; policy: PolicyOverrides }): Promise<ProjectRow> {
    const [r] = await this.db.insert(projects).values(p).returning();
    return asProject(r!);
  }

  async list(): Promise<ProjectRow[]> {
    return (await this.db.select().from(projects).orderBy(asc(projects.createdAt), asc(projects.id))).map(asProject);
  }

  async get(id: string): Promise<ProjectRow | null> {
    const [r] = await this.db.select().from(projects).where(eq(projects.id, id));
    return r ? asProject(r) : null;
  }

  async update(
    id: string,
    change: {
      name?: string;
      status?: ProjectStatus;
      policy?: PolicyOverrides;
      lowBalanceAlerted?: boolean;
      x402PayTo?: string[];
    },
  ): Promise<ProjectRow | null> {
    const [r] = await this.db
      .update(projects)
      .set({ ...change, updatedAt: sql`now()` })
      .where(eq(projects.id, id))
      .returning();
    return r ? asProject(r) : null;
  }

  async createKey(k: {
    id: string;
    projectId: string;
    environment: KeyEnvironment;
    hash: string;
    prefix: string;
    label: string | null;
    scopes: KeyScope[];
    expiresAt: Date | null;
  }): Promise<KeyRow> {
    const [r] = await this.db.insert(apiKeys).values(k).returning(keyColumns);
    return r!;
  }

  async keys(projectId: string): Promise<KeyRow[]> {
    return this.db
      .select(keyColumns)
      .from(apiKeys)
      .where(eq(apiKeys.projectId, projectId))
      .orderBy(asc(apiKeys.createdAt), asc(apiKeys.id));
  }

  /** Revokes a key of a project; null when the project has no such key. Revoking twice keeps the first time. */
  async revokeKey(projectId: string, keyId: string): Promise<KeyRow | null> {
    await this.db
      .update(apiKeys)
      .set({ revokedAt: sql`now()` })
      .where(and(eq(apiKeys.projectId, projectId), eq(apiKeys.id, keyId), isNull(apiKeys.revokedAt)));
    const [r] = await this.db
      .select(keyColumns)
      .from(apiKeys)
      .where(and(eq(apiKeys.projectId, projectId), eq(apiKeys.id, keyId)));
    return r ?? null;
  }

  /**
   * A rotated key's end: its expiry brought forward to `at` (one already sooner stays); the row, or null when the
   * project has no such key not revoked.
   */
  async expireKey(projectId: string, keyId: string, at: Date): Promise<KeyRow | null> {
    const [r] = await this.db
      .update(apiKeys)
      .set({
        expiresAt: sql`least(coalesce(${apiKeys.expiresAt}, 'infinity'::timestamptz), ${at.toISOString()}::timestamptz)`,
      })
      .where(and(eq(apiKeys.projectId, projectId), eq(apiKeys.id, keyId), isNull(apiKeys.revokedAt)))
      .returning(keyColumns);
    return r ?? null;
  }

  /** A live key of a project, or null. */
  async liveKey(projectId: string, keyId: string): Promise<KeyRow | null> {
    const [r] = await this.db
      .select(keyColumns)
      .from(apiKeys)
      .where(and(eq(apiKeys.projectId, projectId), eq(apiKeys.id, keyId), isNull(apiKeys.revokedAt)));
    return r ?? null;
  }

  /** Marks keys used now (last_used_at): one statement for the keys a minute's first uses name. */
  async touchKeys(keyIds: string[]): Promise<void> {
    if (keyIds.length) await this.db.update(apiKeys).set({ lastUsedAt: sql`now()` }).where(inArray(apiKeys.id, keyIds));
  }

  /** Every key not revoked, with its hash (the authentication cache is filled with them at boot). */
  async liveKeys(): Promise<(KeyRow & { hash: string })[]> {
    return this.db
      .select({ ...keyColumns, hash: apiKeys.hash })
      .from(apiKeys)
      .where(isNull(apiKeys.revokedAt));
  }

  /** The database's clock, as text (microseconds kept): where a look for changes starts. */
  async clock(): Promise<string> {
    const [row] = rowsOf<{ now: string }>(await this.db.execute(sql`select now()::text as now`));
    return row!.now;
  }

  /**
   * The keys revoked and the projects changed (updated_at) after `since` (the database's clock, as
   * `clock()` answers it) less `overlapMs`, by the partial index on revoked_at and the index on
   * updated_at; each with its time as text. And the live keys whose expiry is later than that (a
   * rotation may have brought it forward).
   */
  async changedSince(
    since: string,
    overlapMs: number,
  ): Promise<{
    keys: { id: string; at: string }[];
    projects: { id: string; at: string }[];
    expiring: { id: string; expiresAt: Date }[];
  }> {
    const after = sql`${since}::timestamptz - make_interval(secs => ${overlapMs / 1000})`;
    const [keys, changed, expiring] = await Promise.all([
      this.db
        .select({ id: apiKeys.id, at: sql<string>`${apiKeys.revokedAt}::text` })
        .from(apiKeys)
        .where(gt(apiKeys.revokedAt, after)),
      this.db
        .select({ id: projects.id, at: sql<string>`${projects.updatedAt}::text` })
        .from(projects)
        .where(gt(projects.updatedAt, after)),
      // live keys with an expiry not long past (a rotation's among them): each instance checks its cache's
      this.db
        .select({ id: apiKeys.id, expiresAt: apiKeys.expiresAt })
        .from(apiKeys)
        .where(and(gt(apiKeys.expiresAt, after), isNull(apiKeys.revokedAt))),
    ]);
    return { keys, projects: changed, expiring: expiring as { id: string; expiresAt: Date }[] };
  }

  async keyByHash(hash: string): Promise<KeyRow | null> {
    const [r] = await this.db.select(keyColumns).from(apiKeys).where(eq(apiKeys.hash, hash));
    return r ?? null;
  }
}
