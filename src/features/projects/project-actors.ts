/**
 * The running project actors: one per project (created at boot from Postgres, restored from its
 * checkpoint) and one per client IP for the anonymous testnet relay (created on first use).
 * Checkpoints are written after changes, debounced; at restore Postgres overrides the checkpoint
 * for money (balance, today's spend) and the in-flight holds are dropped.
 *
 * Anonymous actors are a hard-capped LRU (`maxAnonymousClients`), so memory is bounded whatever the
 * number of client IPs: a new IP takes the place of an idle one (bucket full, nothing in flight; its
 * checkpoint is written), and when none of the least recently used is idle, it shares one overflow
 * actor with the other newcomers (one bucket and one daily spend for all of them) until room frees.
 */
import {
  type ReservationSettled,
  dailySpendExceeded,
  suspended,
  utcDay,
  type ProjectActor,
  type ProjectInput,
  type ProjectStatus,
} from "../../../actors/projects/project.machine.ts";
import {
  type Bucket,
  fullBucket,
  isFull,
  type RateState,
  rateLimited,
  rateState,
  take,
} from "../../../actors/projects/rate-bucket.ts";
import type { RelayError } from "../../kernel/errors.ts";
import type { CheckpointStore } from "../../store/checkpoints.ts";
import type { Logger } from "../../kernel/log.ts";
import type { Policy } from "./rules/policy.ts";
import type { Payer } from "./principal.ts";
import { CheckpointWriter, restore } from "./project-checkpoints.ts";
import { clientGroup } from "./client-group.ts";
import { ProjectAsks, replyError } from "./project-asks.ts";

/** Limits shared by every instance (Redis): a rate bucket and a day's spend per project or client IP. */
export interface SharedLimits {
  take(name: string, perSecond: number, burst: number): Promise<{ taken: boolean; tokens: number }>;
  reserveSpend(name: string, grant: bigint, seed: bigint): Promise<{ spent: bigint; held: bigint }>;
  settleSpend(name: string, grant: bigint, charged: bigint): Promise<void>;
}

export interface ActorsConfig {
  anonymousPolicy: Policy;
  debounceMs: number;
  /** Most anonymous client actors kept in memory (a hard cap: beyond it, newcomers share the overflow actor). */
  maxAnonymousClients: number;
}

const ANON_TTL_SECONDS = 2 * 24 * 3600;
/** Least recently used anonymous clients looked at to make room for a new one (bounded work per request). */
const DROP_SCAN = 16;
const OVERFLOW_KEY = "anonymous-overflow";
const OVERFLOW_WARN_MS = 60_000;

/** An anonymous client's actor; `actor` is set once its checkpoint has been read. */
interface AnonymousClient {
  ready: Promise<ProjectActor>;
  actor?: ProjectActor;
}

export class ProjectActors {
  private readonly projects = new Map<string, ProjectActor>();
  /** By client IP, least recently used first. */
  private readonly anonymous = new Map<string, AnonymousClient>();
  private overflow?: Promise<ProjectActor>;
  private overflowWarnedAt = 0;
  private readonly checkpoints: CheckpointWriter;
  /** Each actor's rate-limit bucket (rate-bucket.ts); none: full (it has taken no token yet). */
  private readonly buckets = new WeakMap<ProjectActor, Bucket>();
  private readonly asks = new WeakMap<ProjectActor, ProjectAsks>();
  private sharedFailedAt = 0;
  /** Open holds against a shared day's spend, by reservation id. */
  private readonly spendHolds = new Map<string, { name: string; grant: bigint }>();
  /** Settlements not yet sent to their actor (see `settle`). */
  private readonly unsent = new Map<ProjectActor, ReservationSettled[]>();
  private sendScheduled = false;

  /** `shared`: several instances share the rate limits and daily spends there; null: each actor's own. */
  constructor(
    private readonly store: CheckpointStore,
    private readonly config: ActorsConfig,
    private readonly log: Logger,
    private readonly shared: SharedLimits | null = null,
  ) {
    this.checkpoints = new CheckpointWriter(
      store,
      config.debounceMs,
      log,
      (a) => this.buckets.get(a),
      (a) => this.sendSettlements(a),
    );
  }

  /** Starts (or restores) a project's actor with the durable truth from Postgres. */
  async start(p: {
    id: string;
    policy: Policy;
    status: ProjectStatus;
    balance: bigint;
    spent: bigint;
  }): Promise<ProjectActor> {
    const key = `project:${p.id}`;
    const snapshot = await this.store.get(key).catch((e) => {
      this.log.warn({ err: String(e) }, "reading a checkpoint failed");
      return null;
    });
    const now = Date.now();
    const input = { projectId: p.id, policy: p.policy, balance: p.balance, spent: p.spent, now };
    const actor = this.restored(snapshot, input);
    actor.send({ type: "SYNC", now, balance: p.balance, spent: p.spent, policy: p.policy, status: p.status });
    this.checkpoints.watch(actor, key);
    this.projects.get(p.id)?.stop();
    this.projects.set(p.id, actor);
    return actor;
  }

  /** A project's actor, with the settlements given to it sent (so that what it holds is current). */
  project(id: string): ProjectActor | undefined {
    const actor = this.projects.get(id);
    if (actor) this.sendSettlements(actor);
    return actor;
  }

  /** Settles what the journal released and charged for a project's submission outside any reservation of this run. */
  settleJournaled(projectId: string, s: { charged: bigint; released: bigint }): void {
    const actor = this.projects.get(projectId);
    if (actor) this.settle(actor, crypto.randomUUID(), { ...s, journaled: true });
  }

  /** Anonymous client actors in memory (at most `maxAnonymousClients`; the overflow actor not counted). */
  get anonymousClients(): number {
    return this.anonymous.size;
  }

  /** The anonymous actor of a client IP (IPv6: its /64, clientGroup); the overflow actor at the cap, if none is idle. */
  async anonymousFor(address: string): Promise<ProjectActor> {
    const ip = clientGroup(address);
    const known = this.anonymous.get(ip);
    if (known) {
      this.anonymous.delete(ip); // to the back: most recently used
      this.anonymous.set(ip, known);
      return known.ready;
    }
    if (this.anonymous.size >= this.config.maxAnonymousClients && !this.dropIdleAnonymous())
      return this.overflowActor();
    const client: AnonymousClient = { ready: this.startAnonymous(`anonymous:${ip}`) };
    client.ready.then(
      (a) => {
        client.actor = a;
      },
      () => this.anonymous.delete(ip),
    );
    this.anonymous.set(ip, client);
    return client.ready;
  }

  private async startAnonymous(key: string): Promise<ProjectActor> {
    const snapshot = await this.store.get(key).catch(() => null);
    const input = {
      projectId: "anonymous",
      policy: this.config.anonymousPolicy,
      balance: 0n,
      spent: 0n,
      now: Date.now(),
    };
    const actor = this.restored(snapshot, input);
    // the configured policy wins over the checkpoint's; the day's spend is the checkpoint's
    actor.send({ type: "SYNC", now: Date.now(), balance: 0n, policy: this.config.anonymousPolicy, status: "active" });
    this.checkpoints.watch(actor, key, ANON_TTL_SECONDS);
    return actor;
  }

  /** An actor started from its checkpoint (none: new), with the bucket the checkpoint kept. */
  private restored(checkpoint: unknown, input: ProjectInput): ProjectActor {
    const { actor, bucket } = restore(checkpoint, input);
    if (bucket) this.buckets.set(actor, bucket);
    return actor;
  }

  /** Whether dropping an anonymous actor loses nothing: its bucket is full again and nothing of it is in flight. */
  private idle(actor: ProjectActor, now: number): boolean {
    const { policy, holds } = actor.getSnapshot().context;
    const bucket = this.buckets.get(actor);
    return (!bucket || isFull(bucket, policy, now)) && holds.size === 0;
  }

  /**
   * Makes room for one anonymous client: drops the first idle one among the DROP_SCAN least recently used (its
   * checkpoint is written); the busy ones looked at go to the back, so that the next scan looks further. False: no room.
   */
  private dropIdleAnonymous(): boolean {
    const now = Date.now();
    let scanned = 0;
    for (const [ip, client] of this.anonymous) {
      if (scanned++ >= DROP_SCAN) break;
      this.anonymous.delete(ip);
      if (client.actor && this.idle(client.actor, now)) {
        // not stopped: a request admitted by it may still reserve and settle through it; unreferenced, it is collected
        void this.checkpoints.flush(client.actor);
        return true;
      }
      this.anonymous.set(ip, client);
    }
    return false;
  }

  /** The actor new anonymous clients share while the cap is reached and no client is idle. */
  private overflowActor(): Promise<ProjectActor> {
    if (Date.now() - this.overflowWarnedAt > OVERFLOW_WARN_MS) {
      this.overflowWarnedAt = Date.now();
      this.log.warn(
        { clients: this.anonymous.size },
        "ANONYMOUS_MAX_CLIENTS reached, none idle: new client IPs share the overflow bucket",
      );
    }
    this.overflow ??= this.startAnonymous(OVERFLOW_KEY);
    return this.overflow;
  }

  /**
   * Takes a rate-limit token (the first thing every /v1 request does; a suspended project is refused
   * first): from the global bucket when instances share one (the actor's own if Redis fails to
   * answer: the limit is then per instance for that request, and a warning says so, at most once a
   * minute).
   */
  async admit(
    actor: ProjectActor,
  ): Promise<{ ok: true; rate: RateState } | { ok: false; error: RelayError; rate?: RateState }> {
    const snapshot = actor.getSnapshot();
    if (snapshot.value === "suspended") return { ok: false, error: replyError(suspended) };
    const { policy } = snapshot.context;
    const key = this.checkpoints.key(actor);
    if (this.shared && key) {
      try {
        const { taken, tokens } = await this.shared.take(key, policy.requestsPerSecond, policy.burst);
        const rate = rateState(policy, tokens);
        return taken ? { ok: true, rate } : { ok: false, error: replyError(rateLimited(policy, tokens)), rate };
      } catch (e) {
        this.sharedFailed(e, "the global rate-limit bucket did not answer: this instance's own is used");
      }
    }
    const now = Date.now();
    const { bucket, taken } = take(this.buckets.get(actor) ?? fullBucket(policy, now), policy, now);
    this.buckets.set(actor, bucket);
    this.checkpoints.changed(actor);
    return taken.ok ? taken : { ok: false, error: replyError(taken.error), rate: taken.rate };
  }

  /** A warning (at most once a minute) that Redis did not answer and this instance's own view was used. */
  private sharedFailed(e: unknown, message: string): void {
    if (Date.now() - this.sharedFailedAt < OVERFLOW_WARN_MS) return;
    this.sharedFailedAt = Date.now();
    this.log.warn({ err: String(e) }, message);
  }

  payer(actor: ProjectActor, projectId: string | null, scope: string): Payer {
    return {
      projectId,
      scope,
      reserve: async (id, credits, request) => {
        // the shared day's spend counts it in the day the actor did (`now`)
        const { answer: r, now } = await this.asksOf(actor).reserve({ id, credits, request });
        if (!r.ok) return replyError(r.error);
        return (await this.reserveShared(actor, id, r.grant!, now)) ?? r.grant!;
      },
      settle: (id, s) => this.settle(actor, id, s),
      feeStrategy: () => actor.getSnapshot().context.policy.feeStrategy,
      policy: () => actor.getSnapshot().context.policy,
    };
  }

  /**
   * Settles a reservation: queued, and sent with the turn's other settlements in one SETTLE once
   * the turn's answers are out (a burst of confirmations is answered first), or before anything
   * asks or reads the actor, whichever is first.
   */
  private settle(actor: ProjectActor, id: string, s: Omit<ReservationSettled, "id">): void {
    const queued = this.unsent.get(actor);
    if (queued) queued.push({ id, ...s });
    else this.unsent.set(actor, [{ id, ...s }]);
    if (!this.sendScheduled) {
      this.sendScheduled = true;
      setImmediate(() => {
        this.sendScheduled = false;
        for (const a of [...this.unsent.keys()]) this.sendSettlements(a);
      });
    }
    const hold = this.spendHolds.get(id);
    if (!hold || !this.shared) return;
    this.spendHolds.delete(id);
    this.shared
      .settleSpend(hold.name, hold.grant, s.charged)
      .catch((e) => this.sharedFailed(e, "a settlement of the shared daily spend was lost"));
  }

  /**
   * With shared limits, the day's spend is checked again across instances after the actor's own
   * check (which sees only this instance's holds): over the limit, the actor's hold is dropped and
   * the request refused. Held and spent amounts are exact int64 in Redis; two reservations racing
   * for the last room may both be refused, never both granted. Without an answer from Redis the
   * actor's check stands (a warning says so).
   */
  private async reserveShared(actor: ProjectActor, id: string, grant: bigint, now: number): Promise<RelayError | null> {
    const key = this.checkpoints.key(actor);
    const c = actor.getSnapshot().context;
    const limit = c.policy.dailySpendLimit;
    if (!this.shared || !key || limit === null) return null;
    const name = `${key}:${utcDay(now)}`;
    const seed = c.spentDay === utcDay(now) ? c.spent : 0n;
    let totals: { spent: bigint; held: bigint };
    try {
      totals = await this.shared.reserveSpend(name, grant, seed);
    } catch (e) {
      this.sharedFailed(e, "the shared daily spend did not answer: this instance's own is used");
      return null;
    }
    this.spendHolds.set(id, { name, grant });
    if (totals.spent + totals.held <= limit) return null;
    this.settle(actor, id, { charged: 0n, released: 0n, journaled: false }); // never used
    return replyError(dailySpendExceeded(limit, totals.spent, totals.held - grant, grant));
  }

  /** An actor's asks, a turn's together (project-asks.ts). */
  private asksOf(actor: ProjectActor): ProjectAsks {
    let asks = this.asks.get(actor);
    if (!asks) this.asks.set(actor, (asks = new ProjectAsks(actor, () => this.sendSettlements(actor))));
    return asks;
  }

  private sendSettlements(actor: ProjectActor): void {
    const settlements = this.unsent.get(actor);
    if (!settlements) return;
    this.unsent.delete(actor);
    actor.send({ type: "SETTLE", now: Date.now(), settlements });
  }

  /** Writes every pending checkpoint and stops the actors. */
  async stop(): Promise<void> {
    for (const a of [...this.unsent.keys()]) this.sendSettlements(a);
    await this.checkpoints.flushAll();
    for (const a of this.projects.values()) a.stop();
    for (const c of this.anonymous.values()) (await c.ready).stop();
    if (this.overflow) (await this.overflow).stop();
  }
}
