/**
 * The project actor: one per project (and one per client IP of the anonymous testnet project).
 * It holds the rate-limit bucket, the credit balance, the open reservations and the day's spend,
 * and answers each request in one event, so that the requests of a project are serialized without
 * locks: ADMIT takes a rate-limit token; RESERVE checks the policy and reserves the fee; SETTLE
 * turns reservations into what the network charged (several in one event: the settlements of the
 * answers of one turn). No I/O: time comes with the events, replies
 * are emitted (`reply` with the request's id), journaling is the caller's.
 *
 * `balance` mirrors the credit journal: a credit reservation lowers it at once (the caller
 * journals it), and SETTLE applies what the journal released and charged.
 */
import { setup, enqueueActions, type Actor } from "xstate";
import { dropHold, putHold } from "../pool/holds.ts";
import { checkRules, type Policy, type SpendRequest } from "./policy.ts";

export interface Hold {
  amount: bigint;
  /** Drawn on the credit balance (mainnet) or only counted against the daily spend. */
  credits: boolean;
  /** A testnet transaction's: also counted against the testnet daily spend. */
  testnet?: boolean;
}

export interface ProjectContext {
  projectId: string;
  policy: Policy;
  balance: bigint;
  holds: Map<string, Hold>;
  /** The sum of the holds' amounts. */
  held: bigint;
  /** UTC day (YYYY-MM-DD) that `spent` counts. */
  spentDay: string;
  spent: bigint;
  /** Of `spent`, what testnet transactions cost (the same day), and the testnet holds' sum. */
  testnetSpent: bigint;
  testnetHeld: bigint;
  tokens: number;
  refilledAt: number;
}

/** A project takes requests while active; suspended, it is refused (403). */
export type ProjectStatus = "active" | "suspended";

/** A new actor starts active; a suspended project is sent CONFIGURE right away. */
export interface ProjectInput {
  projectId: string;
  policy: Policy;
  balance: bigint;
  spent: bigint;
  now: number;
}

export type ProjectEvent =
  | { type: "ADMIT"; id: string; now: number }
  | { type: "RESERVE"; id: string; now: number; credits: boolean; request: SpendRequest }
  | { type: "SETTLE"; now: number; settlements: ReservationSettled[] }
  /** A top-up or positive adjustment already journaled. */
  | { type: "CREDIT"; amount: bigint }
  /** A negative adjustment: checked against the balance and taken before it is journaled (CREDIT gives it back if that fails). */
  | { type: "DEBIT"; id: string; amount: bigint }
  | { type: "CONFIGURE"; policy: Policy; status: ProjectStatus }
  /** The durable truth after a restore: balance and today's spend from Postgres (kept when not given); in-flight holds died with the process. */
  | { type: "SYNC"; now: number; balance: bigint; spent?: bigint; policy: Policy; status: ProjectStatus };

/** What became of one reservation (`id`). */
export interface ReservationSettled {
  id: string;
  charged: bigint;
  released: bigint;
  /** The reservation reached the journal (its release is in `released`); otherwise it is dropped here. */
  journaled: boolean;
}

export interface RateState {
  limit: number;
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
}

export type ReplyError = {
  code: "RATE_LIMIT_EXCEEDED" | "FORBIDDEN" | "POLICY_VIOLATION" | "INSUFFICIENT_CREDITS";
  message: string;
  details?: Record<string, unknown>;
  retryAfterSeconds?: number;
};

export type ProjectReply =
  | { type: "reply"; id: string; ok: true; rate?: RateState; grant?: bigint }
  | { type: "reply"; id: string; ok: false; error: ReplyError; rate?: RateState };

const DAY_MS = 86_400_000;
/** The last day asked for (most events fall on the same day as the one before). */
let lastDay = { start: 0, name: "1970-01-01" };
/** The UTC day (YYYY-MM-DD) of epoch-ms `now`. */
export function utcDay(now: number): string {
  const start = now - (((now % DAY_MS) + DAY_MS) % DAY_MS);
  if (start !== lastDay.start) lastDay = { start, name: new Date(start).toISOString().slice(0, 10) };
  return lastDay.name;
}

/** The bucket refilled up to `now`. */
function refill(c: ProjectContext, now: number): number {
  const elapsed = Math.max(0, now - c.refilledAt) / 1000;
  return Math.min(c.policy.burst, c.tokens + elapsed * c.policy.requestsPerSecond);
}

export function rateState(policy: Policy, tokens: number): RateState {
  return {
    limit: policy.burst,
    remaining: Math.floor(tokens),
    resetSeconds: Math.ceil((policy.burst - tokens) / policy.requestsPerSecond),
  };
}

/** RATE_LIMIT_EXCEEDED with `tokens` left in the bucket. */
export function rateLimited(policy: Policy, tokens: number): ReplyError {
  const retryAfterSeconds = Math.max(1, Math.ceil((1 - tokens) / policy.requestsPerSecond));
  return {
    code: "RATE_LIMIT_EXCEEDED",
    message: `rate limit of ${policy.requestsPerSecond} requests per second (burst ${policy.burst}) exceeded; retry in ${retryAfterSeconds} s`,
    details: { limit: policy.burst, requestsPerSecond: policy.requestsPerSecond, retryAfter: retryAfterSeconds },
    retryAfterSeconds,
  };
}

/** POLICY_VIOLATION of `dailySpendLimit`: what was spent today and is reserved, and what this request needs. */
export function dailySpendExceeded(limit: bigint, spent: bigint, reserved: bigint, required: bigint): ReplyError {
  return {
    code: "POLICY_VIOLATION",
    message: `the daily spend limit of ${limit} stroops would be exceeded`,
    details: {
      rule: "dailySpendLimit",
      limit: limit.toString(),
      spent: spent.toString(),
      reserved: reserved.toString(),
      required: required.toString(),
    },
  };
}

const spentToday = (c: ProjectContext, now: number): bigint => (c.spentDay === utcDay(now) ? c.spent : 0n);
const testnetToday = (c: ProjectContext, now: number): bigint =>
  c.spentDay === utcDay(now) ? (c.testnetSpent ?? 0n) : 0n;
const amountOf = (h: Hold) => h.amount;
export const suspended: ReplyError = {
  code: "FORBIDDEN",
  message: "the project is suspended",
  details: { reason: "project_suspended" },
};

export const projectMachine = setup({
  types: {
    context: {} as ProjectContext,
    input: {} as ProjectInput,
    events: {} as ProjectEvent,
    emitted: {} as ProjectReply,
  },
  actions: {
    admit: enqueueActions(({ context: c, event, enqueue }) => {
      if (event.type !== "ADMIT") return;
      const tokens = refill(c, event.now);
      if (tokens >= 1) {
        enqueue.assign({ tokens: tokens - 1, refilledAt: event.now });
        enqueue.emit({ type: "reply", id: event.id, ok: true, rate: rateState(c.policy, tokens - 1) });
        return;
      }
      enqueue.assign({ tokens, refilledAt: event.now });
      enqueue.emit({
        type: "reply",
        id: event.id,
        ok: false,
        rate: rateState(c.policy, tokens),
        error: rateLimited(c.policy, tokens),
      });
    }),
    reserve: enqueueActions(({ context: c, event, enqueue }) => {
      if (event.type !== "RESERVE") return;
      const fail = (error: ReplyError) => enqueue.emit({ type: "reply", id: event.id, ok: false, error });
      const checked = checkRules(c.policy, event.request, event.now);
      if ("rule" in checked)
        return fail({
          code: "POLICY_VIOLATION",
          message: checked.message,
          details: { rule: checked.rule, ...checked.details },
        });
      const { grant } = checked;
      const limit = c.policy.dailySpendLimit;
      const spent = spentToday(c, event.now);
      if (limit !== null && spent + c.held + grant > limit) {
        return fail(dailySpendExceeded(limit, spent, c.held, grant));
      }
      const testnet = event.request.network === "testnet";
      const testnetLimit = c.policy.testnetDailySpendLimit;
      const testnetSpent = testnetToday(c, event.now);
      const testnetHeld = c.testnetHeld ?? 0n;
      if (testnet && testnetLimit != null && testnetSpent + testnetHeld + grant > testnetLimit) {
        const e = dailySpendExceeded(testnetLimit, testnetSpent, testnetHeld, grant);
        return fail({
          ...e,
          message: `the testnet daily spend limit of ${testnetLimit} stroops would be exceeded`,
          details: { ...e.details, rule: "testnetDailySpendLimit" },
        });
      }
      if (event.credits && grant > c.balance) {
        return fail({
          code: "INSUFFICIENT_CREDITS",
          message: `the credit balance of ${c.balance} stroops cannot cover a fee of up to ${grant} stroops`,
          details: { balance: c.balance.toString(), required: grant.toString() },
        });
      }
      enqueue.assign({
        holds: c.holds, // updated in place (holds.ts)
        held: putHold(
          c.holds,
          c.held,
          event.id,
          testnet ? { amount: grant, credits: event.credits, testnet } : { amount: grant, credits: event.credits },
          amountOf,
        ),
        balance: event.credits ? c.balance - grant : c.balance,
        spent,
        testnetSpent,
        testnetHeld: testnet ? testnetHeld + grant : testnetHeld,
        spentDay: utcDay(event.now),
      });
      enqueue.emit({ type: "reply", id: event.id, ok: true, grant });
    }),
    settle: enqueueActions(({ context: c, event, enqueue }) => {
      if (event.type !== "SETTLE") return;
      let { balance, held } = c;
      let spent = spentToday(c, event.now);
      let testnetSpent = testnetToday(c, event.now);
      let testnetHeld = c.testnetHeld ?? 0n;
      for (const s of event.settlements) {
        const hold = c.holds.get(s.id);
        if (hold?.testnet) {
          testnetHeld -= hold.amount;
          testnetSpent += s.charged;
        }
        // a testnet hold only counts toward the daily spend; a credit hold (or a journal settlement without one) moves the balance
        const credits = hold ? hold.credits : s.journaled;
        const dropped = hold?.credits && !s.journaled ? hold.amount : 0n;
        if (credits) balance += dropped + s.released - s.charged;
        held = dropHold(c.holds, held, s.id, amountOf); // in place (holds.ts)
        spent += s.charged;
      }
      enqueue.assign({ held, balance, spent, testnetSpent, testnetHeld, spentDay: utcDay(event.now) });
    }),
    credit: enqueueActions(({ context: c, event, enqueue }) => {
      if (event.type === "CREDIT") enqueue.assign({ balance: c.balance + event.amount });
    }),
    debit: enqueueActions(({ context: c, event, enqueue }) => {
      if (event.type !== "DEBIT") return;
      if (event.amount > c.balance) {
        enqueue.emit({
          type: "reply",
          id: event.id,
          ok: false,
          error: {
            code: "INSUFFICIENT_CREDITS",
            message: `the credit balance of ${c.balance} stroops (after open reservations) is lower than ${event.amount}`,
            details: { balance: c.balance.toString(), required: event.amount.toString() },
          },
        });
        return;
      }
      enqueue.assign({ balance: c.balance - event.amount });
      enqueue.emit({ type: "reply", id: event.id, ok: true });
    }),
    configure: enqueueActions(({ context: c, event, enqueue }) => {
      if (event.type !== "CONFIGURE" && event.type !== "SYNC") return;
      // a new rate keeps the tokens (capped by a smaller burst)
      enqueue.assign({ policy: event.policy, tokens: Math.min(c.tokens, event.policy.burst) });
      if (event.type !== "SYNC") return;
      enqueue.assign({ balance: event.balance, holds: new Map(), held: 0n, testnetHeld: 0n });
      // the testnet share is the actor's own count (its checkpoint's): kept for the same day
      if (event.spent !== undefined)
        enqueue.assign({ spent: event.spent, testnetSpent: testnetToday(c, event.now), spentDay: utcDay(event.now) });
    }),
    refuseSuspended: enqueueActions(({ event, enqueue }) => {
      if (event.type === "ADMIT" || event.type === "RESERVE")
        enqueue.emit({ type: "reply", id: event.id, ok: false, error: suspended });
    }),
  },
  guards: {
    toSuspended: ({ event }) => (event.type === "CONFIGURE" || event.type === "SYNC") && event.status === "suspended",
    toActive: ({ event }) => (event.type === "CONFIGURE" || event.type === "SYNC") && event.status === "active",
  },
}).createMachine({
  id: "project",
  context: ({ input }) => ({
    projectId: input.projectId,
    policy: input.policy,
    balance: input.balance,
    holds: new Map(),
    held: 0n,
    spentDay: utcDay(input.now),
    spent: input.spent,
    testnetSpent: 0n,
    testnetHeld: 0n,
    tokens: input.policy.burst,
    refilledAt: input.now,
  }),
  initial: "active",
  states: {
    active: {
      on: {
        ADMIT: { actions: "admit" },
        RESERVE: { actions: "reserve" },
        CONFIGURE: [{ guard: "toSuspended", target: "suspended", actions: "configure" }, { actions: "configure" }],
        SYNC: [{ guard: "toSuspended", target: "suspended", actions: "configure" }, { actions: "configure" }],
      },
    },
    suspended: {
      on: {
        ADMIT: { actions: "refuseSuspended" },
        RESERVE: { actions: "refuseSuspended" },
        CONFIGURE: [{ guard: "toActive", target: "active", actions: "configure" }, { actions: "configure" }],
        SYNC: [{ guard: "toActive", target: "active", actions: "configure" }, { actions: "configure" }],
      },
    },
  },
  on: {
    SETTLE: { actions: "settle" },
    CREDIT: { actions: "credit" },
    DEBIT: { actions: "debit" },
  },
});

/** A project's running actor. */
export type ProjectActor = Actor<typeof projectMachine>;
