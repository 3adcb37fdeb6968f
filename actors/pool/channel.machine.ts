/**
 * The channel actor: one per relay account on a network (each channel account, and the funder).
 * It knows the account's balance, the fees it has in flight (holds), its sequence number and its
 * state. It serializes the transactions whose source is the account itself: stellar-core keeps one
 * pending transaction per source account, so TAKE grants the next sequence number to one
 * transaction at a time, and DONE ends it (a transaction that never reached a ledger gives its
 * sequence number back). No I/O: balances and sequence numbers read from the network come in SYNC.
 *
 * States: creating (the createAccount is on its way), active (pays fee-bumps, runs own
 * transactions), draining (takes no new work; its own merge still runs). A merged channel's actor
 * is stopped by the pool (REMOVE).
 */
import { setup, enqueueActions } from "xstate";
import { dropHold, putHold } from "./holds.ts";

export interface ChannelContext {
  publicKey: string;
  /** The account's balance as last known, less the fees charged since. */
  balance: bigint;
  /** The account's minimum balance: the part of `balance` that can never pay a fee. */
  reserve: bigint;
  /** The last sequence number used (the next own transaction uses seq + 1). */
  seq: bigint;
  /** Fees in flight by request id: fee-bumps it pays for, and its own pending transaction. */
  holds: Map<string, bigint>;
  /** The sum of `holds`. */
  held: bigint;
  /** The id of its own pending transaction, if any. */
  own: string | null;
  /** The state it was started in (a restored channel may be creating or draining). */
  startIn: ChannelInput["state"];
}

export interface ChannelInput {
  publicKey: string;
  balance: bigint;
  reserve: bigint;
  seq: bigint;
  state: "creating" | "active" | "draining";
}

/** A fee-bump's fee (up to `fee`) for request `id`. */
export interface FeeHold {
  id: string;
  fee: bigint;
}

/** A fee-bump's end: what the network charged for request `id`'s hold. */
export interface FeeEnd {
  id: string;
  charged: bigint;
}

export type ChannelEvent =
  /** Pay the fees of fee-bumps, in order; each refused unless active and its fee is affordable then. */
  | { type: "HOLD"; holds: FeeHold[] }
  /**
   * Pay again for a fee-bump this channel signed before (a resumed submission sends the same
   * envelope): held in any state, unchecked (its fee was granted when it was first sent), so a
   * draining channel is not merged while the envelope may still be charged to it.
   */
  | { type: "KEEP"; id: string; fee: bigint }
  /** Fee-bumps' ends: what the network charged each (0 when it never reached a ledger). */
  | { type: "RELEASE"; ends: FeeEnd[] }
  /**
   * Run an own transaction of fee up to `fee`: the reply carries the sequence number to use.
   * `internal`: the relay's own upkeep (a merge), allowed while draining.
   */
  | { type: "TAKE"; id: string; fee: bigint; internal?: boolean }
  /** The own transaction's end: `consumed` when it reached a ledger (its sequence number is spent). */
  | { type: "DONE"; id: string; charged: bigint; consumed: boolean }
  /** Values read from the network: the balance is taken as is, the sequence number only raises. */
  | { type: "SYNC"; balance?: bigint; seq?: bigint }
  /**
   * After tx_bad_seq, the pending own transaction `id` moves to the number after the network's
   * (`seq`, read from it). Raise-only, unless `allowLower` (a repeated tx_bad_seq: a transaction
   * counted as spent never reached a ledger).
   */
  | { type: "RESEQ"; id: string; seq: bigint; allowLower: boolean }
  /** Lumens received (a top-up). */
  | { type: "CREDIT"; amount: bigint }
  | { type: "ACTIVATE"; balance: bigint; seq: bigint }
  | { type: "RETIRE" };

export type ChannelReply =
  | { type: "reply"; id: string; ok: true; seq?: bigint }
  | { type: "reply"; id: string; ok: false; reason: "not_active" | "busy" | "insufficient_balance" };

/** What the account can still pay: balance less its reserve and every fee in flight. */
export const available = (c: ChannelContext): bigint => c.balance - c.reserve - c.held;
/** Nothing of the channel in flight: no own transaction, no fee-bump hold. */
export const idle = (c: ChannelContext): boolean => c.own === null && c.holds.size === 0;

const fee = (f: bigint) => f;
/** The hold of `id` set to `amount` (in place: holds.ts). */
const put = (c: ChannelContext, id: string, amount: bigint) => ({
  holds: c.holds,
  held: putHold(c.holds, c.held, id, amount, fee),
});
const drop = (c: ChannelContext, id: string) => ({ holds: c.holds, held: dropHold(c.holds, c.held, id, fee) });

export const channelMachine = setup({
  types: {
    context: {} as ChannelContext,
    input: {} as ChannelInput,
    events: {} as ChannelEvent,
    emitted: {} as ChannelReply,
  },
  actions: {
    hold: enqueueActions(({ context: c, event, enqueue }) => {
      if (event.type !== "HOLD") return;
      let held = c.held;
      for (const h of event.holds) {
        const ok = c.balance - c.reserve - held >= h.fee;
        if (ok) held = putHold(c.holds, held, h.id, h.fee, fee); // in place: holds.ts
        enqueue.emit(
          ok ? { type: "reply", id: h.id, ok } : { type: "reply", id: h.id, ok, reason: "insufficient_balance" },
        );
      }
      enqueue.assign({ holds: c.holds, held });
    }),
    keep: enqueueActions(({ context: c, event, enqueue }) => {
      if (event.type === "KEEP") enqueue.assign(put(c, event.id, event.fee));
    }),
    release: enqueueActions(({ context: c, event, enqueue }) => {
      if (event.type !== "RELEASE") return;
      let { held, balance } = c;
      for (const e of event.ends) {
        if (!c.holds.has(e.id)) continue; // released already
        held = dropHold(c.holds, held, e.id, fee); // in place: holds.ts
        balance -= e.charged;
      }
      enqueue.assign({ holds: c.holds, held, balance });
    }),
    take: enqueueActions(({ context: c, event, enqueue }) => {
      if (event.type !== "TAKE") return;
      if (c.own !== null) return enqueue.emit({ type: "reply", id: event.id, ok: false, reason: "busy" });
      if (available(c) < event.fee)
        return enqueue.emit({ type: "reply", id: event.id, ok: false, reason: "insufficient_balance" });
      enqueue.assign({ own: event.id, seq: c.seq + 1n, ...put(c, event.id, event.fee) });
      enqueue.emit({ type: "reply", id: event.id, ok: true, seq: c.seq + 1n });
    }),
    done: enqueueActions(({ context: c, event, enqueue }) => {
      if (event.type !== "DONE" || c.own !== event.id) return;
      enqueue.assign({
        own: null,
        ...drop(c, event.id),
        balance: c.balance - event.charged,
        seq: event.consumed ? c.seq : c.seq - 1n,
      });
    }),
    sync: enqueueActions(({ context: c, event, enqueue }) => {
      if (event.type !== "SYNC") return;
      if (event.balance !== undefined) enqueue.assign({ balance: event.balance });
      if (event.seq !== undefined && event.seq > c.seq) enqueue.assign({ seq: event.seq });
    }),
    reseq: enqueueActions(({ context: c, event, enqueue }) => {
      if (event.type !== "RESEQ" || c.own !== event.id) return;
      const next = event.seq + 1n;
      if (next > c.seq || event.allowLower) enqueue.assign({ seq: next });
    }),
    credit: enqueueActions(({ context: c, event, enqueue }) => {
      if (event.type === "CREDIT") enqueue.assign({ balance: c.balance + event.amount });
    }),
    activate: enqueueActions(({ event, enqueue }) => {
      if (event.type === "ACTIVATE") enqueue.assign({ balance: event.balance, seq: event.seq });
    }),
    refuse: enqueueActions(({ event, enqueue }) => {
      const ids = event.type === "HOLD" ? event.holds.map((h) => h.id) : event.type === "TAKE" ? [event.id] : [];
      for (const id of ids) enqueue.emit({ type: "reply", id, ok: false, reason: "not_active" });
    }),
  },
  guards: {
    internal: ({ event }) => event.type === "TAKE" && event.internal === true,
  },
}).createMachine({
  id: "channel",
  context: ({ input }) => ({
    publicKey: input.publicKey,
    balance: input.balance,
    reserve: input.reserve,
    seq: input.seq,
    holds: new Map(),
    held: 0n,
    own: null,
    startIn: input.state,
  }),
  initial: "init",
  states: {
    init: {
      always: [
        { guard: ({ context }) => context.startIn === "creating", target: "creating" },
        { guard: ({ context }) => context.startIn === "draining", target: "draining" },
        { target: "active" },
      ],
    },
    creating: {
      on: {
        ACTIVATE: { target: "active", actions: "activate" },
        HOLD: { actions: "refuse" },
        TAKE: { actions: "refuse" },
        RETIRE: "draining",
      },
    },
    active: { on: { HOLD: { actions: "hold" }, TAKE: { actions: "take" }, RETIRE: "draining" } },
    // retired while being created: its account still comes into being (and is then merged)
    draining: {
      on: {
        HOLD: { actions: "refuse" },
        TAKE: [{ guard: "internal", actions: "take" }, { actions: "refuse" }],
        ACTIVATE: { actions: "activate" },
      },
    },
  },
  on: {
    KEEP: { actions: "keep" },
    RELEASE: { actions: "release" },
    DONE: { actions: "done" },
    SYNC: { actions: "sync" },
    RESEQ: { actions: "reseq" },
    CREDIT: { actions: "credit" },
  },
});
