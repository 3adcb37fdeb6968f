/**
 * The running project actors: one per project (created at boot from Postgres, restored from its
 * checkpoint) and one per client IP for the anonymous testnet relay (created on first use).
 * Checkpoints are written after changes, debounced; at restore Postgres overrides the checkpoint
 * for money (balance, today's spend) and the in-flight holds are dropped.
 */
import { createActor, type Actor } from "xstate";
import { projectMachine, type ProjectReply, type ProjectStatus, type RateState, type ReplyError } from "../../actors/project.machine.ts";
import { ask } from "../../actors/ask.ts";
import { RelayError } from "../http/errors.ts";
import type { CheckpointStore } from "../store/checkpoints.ts";
import type { Logger } from "../log.ts";
import type { Policy, SpendRequest } from "./policy.ts";

export type ProjectActor = Actor<typeof projectMachine>;

/** Who pays for a request: a project, or the anonymous relay for one client IP. */
export interface Payer {
  projectId: string | null;
  /** Idempotency and submission scope: `project:<id>` or `ip:<address>`. */
  scope: string;
  /** Policy check and fee reservation in one event; resolves with the fee the relay may spend. */
  reserve(id: string, credits: boolean, request: SpendRequest): Promise<bigint>;
  /** Ends a reservation with what the journal released and the network charged. */
  settle(id: string, s: { charged: bigint; released: bigint; journaled: boolean }): void;
}

export interface ActorsConfig {
  anonymousPolicy: Policy;
  debounceMs: number;
  /** Anonymous clients kept in memory before idle ones are dropped. */
  maxAnonymousClients: number;
}

const ANON_TTL_SECONDS = 2 * 24 * 3600;

export function replyError(e: ReplyError): RelayError {
  return new RelayError(e.code, e.message, e.details, e.retryAfterSeconds ? { "Retry-After": String(e.retryAfterSeconds) } : {});
}

export class ProjectActors {
  private readonly projects = new Map<string, ProjectActor>();
  private readonly anonymous = new Map<string, Promise<ProjectActor>>();
  private readonly timers = new Map<ProjectActor, { key: string; ttl?: number; timer: ReturnType<typeof setTimeout> }>();

  constructor(private readonly store: CheckpointStore, private readonly config: ActorsConfig, private readonly log: Logger) {}

  /** Starts (or restores) a project's actor with the durable truth from Postgres. */
  async start(p: { id: string; policy: Policy; status: ProjectStatus; balance: bigint; spent: bigint }): Promise<ProjectActor> {
    const key = `project:${p.id}`;
    const snapshot = await this.store.get(key).catch((e) => { this.log.warn({ err: String(e) }, "reading a checkpoint failed"); return null; });
    const now = Date.now();
    const actor = snapshot
      ? createActor(projectMachine, { snapshot: snapshot as never, input: { projectId: p.id, policy: p.policy, balance: p.balance, spent: p.spent, now } })
      : createActor(projectMachine, { input: { projectId: p.id, policy: p.policy, balance: p.balance, spent: p.spent, now } });
    actor.start();
    actor.send({ type: "SYNC", now, balance: p.balance, spent: p.spent, policy: p.policy, status: p.status });
    this.watch(actor, key);
    this.projects.get(p.id)?.stop();
    this.projects.set(p.id, actor);
    return actor;
  }

  project(id: string): ProjectActor | undefined {
    return this.projects.get(id);
  }

  /** The anonymous relay's actor for a client IP. */
  async anonymousFor(ip: string): Promise<ProjectActor> {
    let a = this.anonymous.get(ip);
    if (!a) {
      a = this.startAnonymous(ip);
      this.anonymous.set(ip, a);
      if (this.anonymous.size > this.config.maxAnonymousClients) void this.dropIdleAnonymous();
    }
    return a;
  }

  private async startAnonymous(ip: string): Promise<ProjectActor> {
    const key = `anonymous:${ip}`;
    const snapshot = await this.store.get(key).catch(() => null);
    const input = { projectId: "anonymous", policy: this.config.anonymousPolicy, balance: 0n, spent: 0n, now: Date.now() };
    const actor = createActor(projectMachine, snapshot ? { snapshot: snapshot as never, input } : { input });
    actor.start();
    // the configured policy wins over the checkpoint's; the day's spend is the checkpoint's
    actor.send({ type: "SYNC", now: Date.now(), balance: 0n, policy: this.config.anonymousPolicy, status: "active" });
    this.watch(actor, key, ANON_TTL_SECONDS);
    return actor;
  }

  /** Forgets anonymous clients whose bucket is full and that have nothing in flight (their checkpoint stays). */
  private async dropIdleAnonymous(): Promise<void> {
    const now = Date.now();
    for (const [ip, pending] of this.anonymous) {
      const actor = await pending;
      const c = actor.getSnapshot().context;
      const full = c.tokens + ((now - c.refilledAt) / 1000) * c.policy.requestsPerSecond >= c.policy.burst;
      if (full && Object.keys(c.holds).length === 0) {
        this.flush(actor);
        actor.stop();
        this.anonymous.delete(ip);
      }
      if (this.anonymous.size <= this.config.maxAnonymousClients * 0.9) break;
    }
  }

  /** Takes a rate-limit token (the first thing every /v1 request does). */
  async admit(actor: ProjectActor): Promise<{ ok: true; rate: RateState } | { ok: false; error: RelayError; rate?: RateState }> {
    const r = await ask<ProjectReply>(actor, { type: "ADMIT", id: crypto.randomUUID(), now: Date.now() } as never);
    return r.ok ? { ok: true, rate: r.rate! } : { ok: false, error: replyError(r.error), rate: r.rate };
  }

  payer(actor: ProjectActor, projectId: string | null, scope: string): Payer {
    return {
      projectId, scope,
      async reserve(id, credits, request) {
        const r = await ask<ProjectReply>(actor, { type: "RESERVE", id, now: Date.now(), credits, request } as never);
        if (!r.ok) throw replyError(r.error);
        return r.grant!;
      },
      settle(id, s) {
        actor.send({ type: "SETTLE", id, now: Date.now(), ...s });
      },
    };
  }

  private watch(actor: ProjectActor, key: string, ttl?: number): void {
    actor.subscribe(() => {
      if (this.timers.has(actor)) return;
      this.timers.set(actor, { key, ttl, timer: setTimeout(() => this.flush(actor), this.config.debounceMs) });
    });
  }

  private flush(actor: ProjectActor): Promise<void> {
    const t = this.timers.get(actor);
    if (!t) return Promise.resolve();
    clearTimeout(t.timer);
    this.timers.delete(actor);
    return this.store.set(t.key, actor.getPersistedSnapshot(), t.ttl).catch((e) => this.log.warn({ err: String(e), key: t.key }, "writing a checkpoint failed"));
  }

  /** Writes every pending checkpoint and stops the actors. */
  async stop(): Promise<void> {
    await Promise.all([...this.timers.keys()].map((a) => this.flush(a)));
    for (const a of this.projects.values()) a.stop();
    for (const a of this.anonymous.values()) (await a).stop();
  }
}
