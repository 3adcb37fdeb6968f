/**
 * Projects as the relay sees them: authentication of API keys to a paying principal, and the
 * operator's changes (projects, policies, keys, credits), each applied to Postgres and to the
 * project's actor so that it takes effect at once.
 */
import { RelayError, validationError } from "../../kernel/errors.ts";
import { hashKey } from "./keys/api-keys.ts";
import { KEY_SCOPES } from "./keys/key.model.ts";
import type { ProjectsRepo, ProjectRow, ProjectStatus } from "../../store/projects.repo.ts";
import type { Principal } from "./principal.ts";
import type { CreditsRepo, JournalEntry } from "../../store/credits.repo.ts";
import type { SubmissionsRepo } from "../../store/submissions.repo.ts";
import type { Logger } from "../../kernel/log.ts";
import { ask } from "../../../actors/ask.ts";
import { utcDay, type ProjectActor, type ProjectReply } from "../../../actors/projects/project.machine.ts";
import { effectivePolicy, policyView, type Policy, type PolicyPatch } from "./rules/policy.ts";
import type { Approvals } from "./rules/approval.ts";
import { PolicyChanges, withSecret } from "./rules/policy-changes.ts";
import type { ProjectActors } from "./project-actors.ts";
import { replyError } from "./project-asks.ts";
import { KeysService, keyView, type KeyNotice, type NewKey } from "./keys/keys.service.ts";
import type { CreatedKeyView, KeyView } from "./keys/key.model.ts";
import type { CreditBalance, CreditEntryView, CreditJournal, X402Settings } from "./project.model.ts";
import type { ProjectView } from "./admin.model.ts";

const noPublish = async (_: ProjectNotice) => {};
const unauthorized = (message: string) => new RelayError("UNAUTHORIZED", message);
const notFound = (what: string) => new RelayError("NOT_FOUND", `${what} not found`);

/** A change made through one instance that the others apply (several instances share Redis). */
export type ProjectNotice =
  | { topic: "project"; projectId: string }
  | { topic: "key-created"; hash: string }
  | { topic: "key-revoked"; keyId: string }
  | KeyNotice
  | { topic: "credits"; projectId: string; amount: string };

/** Whose open streams end: a revoked key's, or a suspended (or deleted) project's. */
export type CutOff = { keyId: string } | { projectId: string; reason: "suspended" | "deleted" };

export class ProjectsService {
  /** The API keys (revoking through this service forgets them at once). */
  private readonly keys: KeysService;
  private readonly changes: PolicyChanges;

  constructor(
    private readonly deps: {
      projects: ProjectsRepo;
      credits: CreditsRepo;
      submissions: SubmissionsRepo;
      actors: ProjectActors;
      defaults: Policy;
      log: Logger;
      /** Several instances reserve the credits: a top-up answers the journal's balance, not this instance's actor's. */
      sharedCredits?: boolean;
      /** Seals approval secrets (a policy's approval server). */
      approvals?: Approvals;
      /** WEBHOOK_ALLOW_PRIVATE: approval URLs may be private addresses too. */
      allowPrivate?: boolean;
      /** Tells the other instances about a change (several share Redis; failures are logged, not thrown). */
      publish?: (n: ProjectNotice) => Promise<void>;
      /** The outcomes already answered: a view of the balances reads once they are journaled. */
      outcomes?: { written(): Promise<void> };
      /**
       * What a revoked key, or a project suspended or gone, still holds open on this instance (its
       * event streams): ended for this instance's changes and others'; a key's expiry brought
       * forward (a rotation) ends them then.
       */
      streams?: { cutOff(who: CutOff): void; expire(keyId: string, at: Date): void };
    },
  ) {
    this.changes = new PolicyChanges(deps.defaults, deps.approvals, deps.allowPrivate ?? false);
    this.keys = new KeysService({
      projects: deps.projects,
      log: deps.log,
      tell: (n) => this.tell(n),
      expiring: (keyId, at) => deps.streams?.expire(keyId, at),
    });
  }

  /**
   * Starts an actor for every project with its balance and today's spend from Postgres, and caches the live keys: a key
   * this process does not know costs its caller's IP a rate-limit token (auth plugin), which valid keys should not.
   */
  async boot(): Promise<void> {
    const [rows, balances, spent, keys] = await Promise.all([
      this.deps.projects.list(),
      this.deps.credits.balances(),
      this.deps.submissions.spentSince(new Date(`${utcDay(Date.now())}T00:00:00Z`)),
      this.deps.projects.liveKeys(),
    ]);
    for (const p of rows) {
      await this.deps.actors.start({
        id: p.id,
        status: p.status,
        policy: effectivePolicy(this.deps.defaults, p.policy),
        balance: balances.get(p.id) ?? 0n,
        spent: spent.get(p.id) ?? 0n,
      });
    }
    for (const { hash, ...key } of keys) this.keys.cache.add(hash, key);
    if (rows.length) this.deps.log.info({ projects: rows.length, keys: keys.length }, "projects restored");
  }

  // ---- authentication -------------------------------------------------------------------------

  /** The principal of a request: its key's project (`known`: its hash, from `knownKey`), or the client IP's. */
  async authenticate(apiKey: string | null, ip: string, known?: string): Promise<Principal> {
    const { actors } = this.deps;
    if (apiKey === null) {
      const actor = await actors.anonymousFor(ip);
      const payer = actors.payer(actor, null, `ip:${ip}`);
      return { projectId: null, keyId: null, environment: null, scopes: KEY_SCOPES, expiresAt: null, actor, payer };
    }
    const row = await this.keys.resolve(apiKey, known);
    const actor = actors.project(row.projectId);
    if (!actor) throw unauthorized("unknown or revoked API key");
    this.keys.used(row.id);
    return {
      projectId: row.projectId,
      keyId: row.id,
      environment: row.environment,
      scopes: row.scopes,
      expiresAt: row.expiresAt,
      actor,
      payer: actors.payer(actor, row.projectId, `project:${row.projectId}`),
    };
  }

  /** A key's hash when this process knows it as valid, not expired (authenticating it needs no database lookup). */
  knownKey(apiKey: string): string | null {
    return this.keys.known(apiKey);
  }

  // ---- projects ---------------------------------------------------------------------------------

  private actorOf(id: string): ProjectActor {
    const a = this.deps.actors.project(id);
    if (!a) throw notFound("project");
    return a;
  }

  /** From a row read once the outcomes answered are written: its credits the journal's (a 504's reservation too). */
  private view(p: ProjectRow): ProjectView {
    const c = this.actorOf(p.id).getSnapshot().context;
    return {
      id: p.id,
      name: p.name,
      status: p.status,
      creditBalance: p.creditBalance.toString(),
      creditReserved: p.creditReserved.toString(),
      policy: policyView(c.policy),
      x402: { payTo: p.x402PayTo },
      createdAt: p.createdAt.toISOString(),
      updatedAt: p.updatedAt.toISOString(),
    };
  }

  async create(name: string, patch: PolicyPatch = {}): Promise<ProjectView> {
    const id = crypto.randomUUID();
    const { policy, secret } = await this.changes.apply(id, {}, patch);
    const row = await this.deps.projects.create({ id, name, policy });
    await this.deps.actors.start({
      id: row.id,
      status: row.status,
      policy: effectivePolicy(this.deps.defaults, row.policy),
      balance: 0n,
      spent: 0n,
    });
    await this.tell({ topic: "project", projectId: row.id });
    return withSecret(this.view(row), secret);
  }

  async list(): Promise<ProjectView[]> {
    await this.deps.outcomes?.written();
    const rows = (await this.deps.projects.list()).filter((p) => this.deps.actors.project(p.id));
    return rows.map((p) => this.view(p));
  }

  /** Read once the outcomes answered so far are written: it shows their credits. */
  private async row(id: string): Promise<ProjectRow> {
    await this.deps.outcomes?.written();
    const row = await this.deps.projects.get(id);
    if (!row) throw notFound("project");
    return row;
  }

  async get(id: string): Promise<ProjectView> {
    return this.view(await this.row(id));
  }

  async update(
    id: string,
    change: { name?: string; status?: ProjectStatus; policy?: PolicyPatch; x402?: X402Settings },
  ): Promise<ProjectView> {
    const current = await this.row(id);
    const changed = change.policy ? await this.changes.apply(id, current.policy, change.policy) : null;
    const policy = changed?.policy;
    const row = (await this.deps.projects.update(id, {
      ...(change.name !== undefined ? { name: change.name } : {}),
      ...(change.status ? { status: change.status } : {}),
      ...(policy ? { policy } : {}),
      ...(change.x402 ? { x402PayTo: change.x402.payTo } : {}),
      // a new alert (or none) is checked afresh: the journal's next entry under it alerts again
      ...(change.policy?.lowBalanceAlert !== undefined &&
      change.policy.lowBalanceAlert !== (current.policy.lowBalanceAlert ?? null)
        ? { lowBalanceAlerted: false }
        : {}),
    }))!;
    this.actorOf(id).send({
      type: "CONFIGURE",
      policy: effectivePolicy(this.deps.defaults, row.policy),
      status: row.status,
    });
    if (row.status !== "active") this.deps.streams?.cutOff({ projectId: id, reason: "suspended" });
    await this.tell({ topic: "project", projectId: id });
    return withSecret(this.view(row), changed?.secret ?? null);
  }

  // ---- keys ---------------------------------------------------------------------------------------

  async createKey(projectId: string, k: NewKey): Promise<CreatedKeyView> {
    const created = await this.keys.create(projectId, k);
    await this.tell({ topic: "key-created", hash: hashKey(created.key) });
    return created;
  }

  /** A new key for an old one, which works `overlapSeconds` more (then KEY_EXPIRED): the new key shown once. */
  async rotateKey(projectId: string, keyId: string, overlapSeconds: number): Promise<CreatedKeyView> {
    const { created, hash } = await this.keys.rotate(projectId, keyId, overlapSeconds);
    await this.tell({ topic: "key-created", hash });
    return created;
  }

  async listKeys(projectId: string): Promise<KeyView[]> {
    return this.keys.list(projectId);
  }

  async revokeKey(projectId: string, keyId: string): Promise<KeyView> {
    const row = await this.deps.projects.revokeKey(projectId, keyId);
    if (!row) throw notFound("key");
    this.forget(keyId);
    await this.tell({ topic: "key-revoked", keyId });
    return keyView(row);
  }

  private forget(keyId: string): void {
    this.keys.cache.forget(keyId);
    this.deps.streams?.cutOff({ keyId });
  }

  // ---- several instances ---------------------------------------------------------------------

  private async tell(n: ProjectNotice): Promise<void> {
    await (this.deps.publish ?? noPublish)(n).catch((e) =>
      this.deps.log.error({ err: String(e), topic: n.topic }, "telling the other instances of a change failed"),
    );
  }

  /** Applies a change another instance made: its caches and the project's actor here. */
  async applyNotice(n: ProjectNotice): Promise<void> {
    switch (n.topic) {
      case "key-created":
        this.keys.cache.created(n.hash);
        return;
      case "key-expiry":
        this.keys.apply(n);
        return;
      case "key-revoked":
        this.forget(n.keyId);
        return;
      case "credits":
        this.deps.actors.project(n.projectId)?.send({ type: "CREDIT", amount: BigInt(n.amount) });
        return;
      case "project": {
        const row = await this.deps.projects.get(n.projectId);
        if (!row) return this.deps.streams?.cutOff({ projectId: n.projectId, reason: "deleted" });
        if (row.status !== "active") this.deps.streams?.cutOff({ projectId: row.id, reason: "suspended" });
        const policy = effectivePolicy(this.deps.defaults, row.policy);
        const actor = this.deps.actors.project(row.id);
        if (actor) actor.send({ type: "CONFIGURE", policy, status: row.status });
        else {
          const balance = (await this.deps.credits.balances()).get(row.id) ?? 0n;
          await this.deps.actors.start({ id: row.id, status: row.status, policy, balance, spent: 0n });
        }
        return;
      }
      default:
        return n satisfies never;
    }
  }

  // ---- credits ------------------------------------------------------------------------------------

  /** A top-up (positive, no reason) or an adjustment (a reason; negative ones may not overdraw). */
  async addCredits(
    projectId: string,
    amount: bigint,
    reference: string | null,
    reason: string | null,
  ): Promise<CreditBalance> {
    await this.row(projectId);
    const actor = this.actorOf(projectId);
    if (amount === 0n) throw validationError("amount: must not be zero", { field: "amount", reason: "zero_amount" });
    if (amount < 0n && !reason)
      throw validationError("reason: a negative adjustment needs a reason", {
        field: "reason",
        reason: "reason_required",
      });
    const kind = amount > 0n && !reason ? "topup" : "adjustment";
    if (amount < 0n) {
      const r = await ask<ProjectReply>(actor, { type: "DEBIT", id: crypto.randomUUID(), amount: -amount });
      if (!r.ok) throw replyError(r.error);
      try {
        await this.deps.credits.append({ projectId, kind, amount, reference, reason });
      } catch (e) {
        actor.send({ type: "CREDIT", amount: -amount });
        throw e;
      }
    } else {
      await this.deps.credits.append({ projectId, kind, amount, reference, reason });
      actor.send({ type: "CREDIT", amount });
    }
    await this.tell({ topic: "credits", projectId, amount: amount.toString() });
    const balance = this.deps.sharedCredits
      ? (await this.deps.credits.summary(projectId)).balance
      : actor.getSnapshot().context.balance;
    return { creditBalance: balance.toString() };
  }

  async journal(projectId: string, limit: number, before?: bigint): Promise<CreditJournal> {
    await Promise.all([this.row(projectId), this.deps.outcomes?.written()]);
    const rows = await this.deps.credits.page(projectId, { limit, before });
    return {
      entries: rows.map(entryView),
      nextCursor: rows.length === limit ? rows[rows.length - 1]!.id.toString() : null,
    };
  }
}

const entryView = (e: JournalEntry): CreditEntryView => ({
  id: e.id.toString(),
  kind: e.kind,
  amount: e.amount.toString(),
  submissionId: e.submissionId,
  txHash: e.txHash,
  reference: e.reference,
  reason: e.reason,
  createdAt: e.createdAt.toISOString(),
});
