/**
 * The project actor: one per project (and one per client IP of the anonymous testnet project).
 * It holds the credit balance, the open reservations and the day's spend, and answers requests in
 * events, so that the requests of a project are serialized without locks: RESERVE checks the policy
 * and reserves the fee for each of a turn's requests, in order (each sees what those before it
 * reserved); SETTLE turns reservations into what the network charged (the settlements of the answers
 * of one turn). One event for a turn's requests, not one each: the actor's interpretation is most of
 * an event's cost. The rate limit is not its: a token is arithmetic on a bucket (rate-bucket.ts).
 * No I/O: time comes with the events, replies are emitted (`reply` with the event's id, one answer per
 * request), journaling is the caller's.
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

/** A request's fee to reserve (`id`: its reservation's), drawn on the credits or only counted in the day's spend. */
export interface SpendAsk {
  id: string;
  credits: boolean;
  request: SpendRequest;
}

export type ProjectEvent =
  /** The policy checked and the fee reserved for each request, in order. */
  | { type: "RESERVE"; id: string; now: number; asks: SpendAsk[] }
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

export type ReplyError = {
  code: "RATE_LIMIT_EXCEEDED" | "FORBIDDEN" | "POLICY_VIOLATION" | "INSUFFICIENT_CREDITS";
  message: string;
  details?: Record<string, unknown>;
  retryAfterSeconds?: number;
};

/** One request's answer: reserved (with the grant), or refused. */
export type Answer = { ok: true; grant?: bigint } | { ok: false; error: ReplyError };

/** DEBIT's reply. */
export type ProjectReply = { type: "reply"; id: string } & Answer;
/** RESERVE's: each request's answer, in the order asked. */
export type EachReply = { type: "reply"; id: string; each: Answer[] };

const DAY_MS = 86_400_000;
/** The last day asked for (most events fall on the same day as the one before). */
let lastDay = { start: 0, name: "1970-01-01" };
/** The UTC day (YYYY-MM-DD) of epoch-ms `now`. */
export function utcDay(now: number): string {
  const start = now - (((now % DAY_MS) + DAY_MS) % DAY_MS);
  if (start !== lastDay.start) lastDay = { start, name: new Date(start).toISOString().slice(0, 10) };
  return lastDay.name;
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

/** What a turn's reservations change, as each is made. */
type Totals = Pick<ProjectContext, "balance" | "held" | "spent" | "testnetSpent" | "testnetHeld">;

/** One request's reservation: the policy's rules, the day's spends and the credits checked against `t`, then held. */
function reserveOne(c: ProjectContext, t: Totals, a: SpendAsk, now: number): Answer {
  const fail = (error: ReplyError): Answer => ({ ok: false, error });
  const checked = checkRules(c.policy, a.request, now);
  if ("rule" in checked)
    return fail({
      code: "POLICY_VIOLATION",
      message: checked.message,
      details: { rule: checked.rule, ...checked.details },
    });
  const { grant } = checked;
  const limit = c.policy.dailySpendLimit;
  if (limit !== null && t.spent + t.held + grant > limit)
    return fail(dailySpendExceeded(limit, t.spent, t.held, grant));
  const testnet = a.request.network === "testnet";
  const testnetLimit = c.policy.testnetDailySpendLimit;
  if (testnet && testnetLimit != null && t.testnetSpent + t.testnetHeld + grant > testnetLimit) {
    const e = dailySpendExceeded(testnetLimit, t.testnetSpent, t.testnetHeld, grant);
    return fail({
      ...e,
      message: `the testnet daily spend limit of ${testnetLimit} stroops would be exceeded`,
      details: { ...e.details, rule: "testnetDailySpendLimit" },
    });
  }
  if (a.credits && grant > t.balance)
    return fail({
      code: "INSUFFICIENT_CREDITS",
      message: `the credit balance of ${t.balance} stroops cannot cover a fee of up to ${grant} stroops`,
      details: { balance: t.balance.toString(), required: grant.toString() },
    });
  const hold = testnet ? { amount: grant, credits: a.credits, testnet } : { amount: grant, credits: a.credits };
  t.held = putHold(c.holds, t.held, a.id, hold, amountOf);
  if (a.credits) t.balance -= grant;
  if (testnet) t.testnetHeld += grant;
  return { ok: true, grant };
}

export const projectMachine = setup({
  types: {
    context: {} as ProjectContext,
    input: {} as ProjectInput,
    events: {} as ProjectEvent,
    emitted: {} as ProjectReply | EachReply,
  },
  actions: {
    reserve: enqueueActions(({ context: c, event, enqueue }) => {
      if (event.type !== "RESERVE") return;
      const t: Totals = {
        balance: c.balance,
        held: c.held,
        spent: spentToday(c, event.now),
        testnetSpent: testnetToday(c, event.now),
        testnetHeld: c.testnetHeld ?? 0n,
      };
      const each = event.asks.map((a) => reserveOne(c, t, a, event.now));
      enqueue.assign({ holds: c.holds, ...t, spentDay: utcDay(event.now) }); // holds: updated in place (holds.ts)
      enqueue.emit({ type: "reply", id: event.id, each });
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
      enqueue.assign({ policy: event.policy });
      if (event.type !== "SYNC") return;
      enqueue.assign({ balance: event.balance, holds: new Map(), held: 0n, testnetHeld: 0n });
      // the testnet share is the actor's own count (its checkpoint's): kept for the same day
      if (event.spent !== undefined)
        enqueue.assign({ spent: event.spent, testnetSpent: testnetToday(c, event.now), spentDay: utcDay(event.now) });
    }),
    refuseSuspended: enqueueActions(({ event, enqueue }) => {
      if (event.type !== "RESERVE") return;
      const each: Answer[] = event.asks.map(() => ({ ok: false, error: suspended }));
      enqueue.emit({ type: "reply", id: event.id, each });
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
  }),
  initial: "active",
  states: {
    active: {
      on: {
        RESERVE: { actions: "reserve" },
        CONFIGURE: [{ guard: "toSuspended", target: "suspended", actions: "configure" }, { actions: "configure" }],
        SYNC: [{ guard: "toSuspended", target: "suspended", actions: "configure" }, { actions: "configure" }],
      },
    },
    suspended: {
      on: {
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
