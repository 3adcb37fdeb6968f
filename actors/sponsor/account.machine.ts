/**
 * A source account's transactions in order (order flow): the network queues one transaction per
 * source account and refuses a sequence number that is not the account's next, so the relay sends
 * an account's transactions one at a time, each once its predecessor is applied. No I/O: the
 * sequence gate (src/features/sponsor/order/) sends it what happened and acts on what it decides.
 *
 * - ARRIVE: a transaction of the account wants to be sent; it is held until it may go.
 * - APPLIED: one was included in a ledger (succeeded or failed: either way its number is used).
 * - REJECTED: one was refused before any ledger: its number is not used, and the account's held
 *   transactions after it can never go (they are refused, naming it).
 * - UNKNOWN: one was sent and may still land (no answer in time): nothing is sent after it until
 *   the chain says (CHAIN) that it landed.
 * - GAP: one was refused as out of order, and the account's sequence number read from the network
 *   is `chainSeq`: a later one waits again for its predecessor.
 * - CHAIN: the account's sequence number as read from the network.
 * - LEAVE: one gives up (its hold timed out) or is done without a verdict for its successors.
 *
 * After each event the context says what to do: `go`, the transactions to send now (at most one
 * in flight, the account's next; one already behind the chain goes too, for the network to judge);
 * `refused`, those whose predecessor was rejected. When the account knows nothing yet (chainSeq
 * null), its lowest transaction goes first: most arrive in order, and the network says if not.
 */
import { assign, setup } from "xstate";

export interface HeldTx {
  id: string;
  seq: bigint;
}

export interface AccountContext {
  account: string;
  /** The last sequence number known to be used on the chain; null: not known (not read yet). */
  chainSeq: bigint | null;
  /** The transaction sent and not yet settled (at most one). */
  inFlight: HeldTx | null;
  /** Held transactions, lowest sequence number first. */
  held: HeldTx[];
  /** Decided by the last event: send these now. */
  go: HeldTx[];
  /** Decided by the last event: refused, their predecessor `rejected` having been refused before any ledger. */
  refused: { id: string; rejected: bigint }[];
  /** Numbers refused before any ledger (and not used since): a later arrival after one is refused too. */
  rejected: bigint[];
}

export type AccountEvent =
  | { type: "ARRIVE"; id: string; seq: bigint }
  | { type: "APPLIED"; id: string; seq: bigint }
  | { type: "REJECTED"; id: string | null; seq: bigint }
  | { type: "UNKNOWN"; id: string; seq: bigint }
  | { type: "GAP"; id: string; seq: bigint; chainSeq: bigint }
  | { type: "CHAIN"; seq: bigint }
  | { type: "LEAVE"; id: string };

const maxSeq = (a: bigint | null, b: bigint): bigint => (a === null || b > a ? b : a);
const sorted = (xs: HeldTx[]) => [...xs].sort((a, b) => (a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0));

/** What may be sent now: those behind the chain (the network judges them), then the account's next. */
function decide(c: Omit<AccountContext, "go" | "refused">, refused: AccountContext["refused"] = []): AccountContext {
  let held = c.held;
  let inFlight = c.inFlight;
  const go: HeldTx[] = [];
  const rejected = c.chainSeq === null ? c.rejected : c.rejected.filter((r) => r > c.chainSeq!);
  if (c.chainSeq !== null) {
    const chain = c.chainSeq;
    go.push(...held.filter((h) => h.seq <= chain));
    held = held.filter((h) => h.seq > chain);
  }
  // after a number refused before any ledger nothing can go until that number comes again
  const gap = rejected.length ? rejected.reduce((a, b) => (a < b ? a : b)) : null;
  if (gap !== null) {
    refused = [...refused, ...held.filter((h) => h.seq > gap).map((h) => ({ id: h.id, rejected: gap }))];
    held = held.filter((h) => h.seq <= gap);
  }
  if (inFlight === null && held.length) {
    const next = c.chainSeq === null ? held[0]! : held.find((h) => h.seq === c.chainSeq! + 1n);
    if (next) {
      inFlight = next;
      go.push(next);
      held = held.filter((h) => h !== next);
    }
  }
  return { ...c, held, inFlight, go, refused, rejected };
}

/** The in-flight transaction ends if it is `id`. */
const landed = (c: AccountContext, id: string | null) => (c.inFlight && c.inFlight.id === id ? null : c.inFlight);

export const accountMachine = setup({
  types: {
    context: {} as AccountContext,
    events: {} as AccountEvent,
    /** `inFlight`: a transaction the gate sent before the account had an actor (a lone one, sent at once). */
    input: {} as { account: string; inFlight?: HeldTx },
  },
}).createMachine({
  id: "account",
  context: ({ input }) => ({
    account: input.account,
    chainSeq: null,
    inFlight: input.inFlight ?? null,
    held: [],
    go: [],
    refused: [],
    rejected: [],
  }),
  initial: "active",
  states: {
    active: {
      on: {
        ARRIVE: {
          // a number refused before comes again: it may go, and what follows it too
          actions: assign(({ context: c, event: e }) =>
            decide({ ...c, held: sorted([...c.held, e]), rejected: c.rejected.filter((r) => r !== e.seq) }),
          ),
        },
        APPLIED: {
          actions: assign(({ context: c, event: e }) =>
            decide({ ...c, inFlight: landed(c, e.id), chainSeq: maxSeq(c.chainSeq, e.seq) }),
          ),
        },
        REJECTED: {
          actions: assign(({ context: c, event: e }) => {
            // another transaction with that number is still held or sent (the refused one was a copy): it may go
            const same = (h: HeldTx | null) => h !== null && h.seq === e.seq && h.id !== e.id;
            if (same(c.inFlight) || c.held.some(same)) return decide({ ...c, inFlight: landed(c, e.id) });
            // its successors cannot go before the same number is used by another transaction
            return decide({ ...c, inFlight: landed(c, e.id), rejected: [...c.rejected, e.seq] });
          }),
        },
        UNKNOWN: {
          // it may still land: its successors wait for the chain to say so (the number stays unknown)
          actions: assign(({ context: c, event: e }) =>
            decide({ ...c, inFlight: landed(c, e.id), chainSeq: c.chainSeq ?? e.seq - 1n }),
          ),
        },
        GAP: {
          actions: assign(({ context: c, event: e }) => {
            const chainSeq = maxSeq(c.chainSeq, e.chainSeq);
            const held = e.seq > chainSeq ? sorted([...c.held, { id: e.id, seq: e.seq }]) : c.held;
            return decide({ ...c, held, chainSeq, inFlight: landed(c, e.id) });
          }),
        },
        CHAIN: {
          actions: assign(({ context: c, event: e }) => decide({ ...c, chainSeq: maxSeq(c.chainSeq, e.seq) })),
        },
        LEAVE: {
          actions: assign(({ context: c, event: e }) =>
            decide({ ...c, held: c.held.filter((h) => h.id !== e.id), inFlight: landed(c, e.id) }),
          ),
        },
      },
    },
  },
});

/** Whether the account has nothing held or sent: its actor can stop. */
export const idle = (c: AccountContext): boolean => c.inFlight === null && c.held.length === 0;

/** The sequence number a held transaction waits for: its predecessor's. */
export const waitsFor = (seq: bigint): bigint => seq - 1n;
