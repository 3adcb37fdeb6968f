/**
 * Order flow for one network: a client's transactions are sent one per source account, in sequence
 * order, each once its predecessor is applied (the network queues one transaction per source account
 * and refuses a sequence number that is not the account's next). An account's actor
 * (actors/sponsor/account.machine.ts) decides; this gate does what it decides: it lets a transaction go,
 * holds it, refuses it, reads the account's sequence number from the network when the chain must say
 * (a predecessor sent by another instance, or outside the relay: read once per ledger while one waits).
 *
 * A held transaction waits until its own maxTime at most, and at most SEQUENCE_HOLD_MS without
 * progress on its account (a gap never filled), then it is refused as tx_bad_seq naming the number it
 * waited for. Holds count per paying project (or client IP) and per
 * account, with limits (429 past them).
 */
import { createActor, type Actor } from "xstate";
import {
  accountMachine,
  type AccountEvent,
  type HeldTx,
  idle,
  waitsFor,
} from "../../../../actors/sponsor/account.machine.ts";
import { type RelayError, unavailable } from "../../../kernel/errors.ts";
import { neverCame, predecessorRejected, tooMany, tooManyBytes } from "./refusals.ts";
import type { Logger } from "../../../kernel/log.ts";
import type { AccountState, NetworkName } from "../../../network/gateway.ts";

export interface OrderLimits {
  /** How long a transaction may be held for its predecessor (SEQUENCE_HOLD_MS). */
  holdMs: number;
  /** Transactions held at once per paying project or client IP (SEQUENCE_MAX_HELD_PER_PROJECT). */
  perPayer: number;
  /** Transactions held at once per source account (SEQUENCE_MAX_HELD_PER_ACCOUNT). */
  perAccount: number;
  /** Bytes of held transactions (their base64 XDR) at once per paying project or client IP (SEQUENCE_MAX_HELD_BYTES_PER_PROJECT). */
  perPayerBytes: number;
}

export const DEFAULT_ORDER_LIMITS: OrderLimits = {
  holdMs: 30_000,
  perPayer: 1_000,
  perAccount: 100,
  perPayerBytes: 16 * 1024 * 1024,
};

export interface OrderDeps {
  network: NetworkName;
  /** Sequence numbers of accounts, read from the network. */
  accounts(publicKeys: string[]): Promise<Map<string, AccountState>>;
  /** Resolves when a ledger after the one read now has been read (false: timed out or stopped). */
  nextLedger(timeoutMs: number): Promise<boolean>;
  limits: OrderLimits;
  log: Logger;
}

/** A transaction's place in its account's order. */
export interface OrderedTx {
  /** The submission (its inner hash). */
  id: string;
  account: string;
  seq: bigint;
  /** Who pays: its holds count against this scope's limit. */
  scope: string;
  /** Its maxTime (unix seconds, 0: none): it is not held past it. */
  maxTime: bigint;
  /** Its size as it came (base64 XDR): held transactions' bytes count against the scope's limit too. */
  bytes: number;
}

/** How a sent transaction ended, for its successors. */
export type OrderResult = "applied" | "rejected" | "unknown" | "out_of_order";

/** A held transaction as a look-up shows it: who pays, since when, and what it waits for. */
export interface HeldView {
  scope: string;
  since: number;
  waitingFor: { account: string; sequence: string; waitingFor: string };
}

interface Waiter {
  tx: OrderedTx;
  /** When it was held (epoch ms). */
  since: number;
  resolve(): void;
  reject(e: RelayError): void;
  /** Gives up on it: SEQUENCE_HOLD_MS without progress on its account, or its maxTime. */
  timer: ReturnType<typeof setTimeout>;
}

type AccountActor = Actor<typeof accountMachine>;

export class SequenceGate {
  private readonly accounts = new Map<string, AccountActor>();
  private readonly waiters = new Map<string, Waiter>();
  private readonly heldBy = new Map<string, { count: number; bytes: number }>();
  /**
   * Accounts with one transaction sent and nothing else here (most): no actor, no hold, no timer. The
   * actor is made when a second one arrives, or when this one ends otherwise than applied.
   */
  private readonly lone = new Map<string, HeldTx>();
  /** Accounts with transactions held and none sent here: their sequence is read after each ledger (follow). */
  private readonly stalled = new Set<string>();
  private reading = false;
  private stopped = false;

  constructor(private readonly deps: OrderDeps) {}

  /** Transactions held now (waiting for a predecessor). */
  get held(): number {
    return this.waiters.size;
  }

  /** What a held transaction waits for, by its inner hash (a look-up's `waitingFor`); null if not held here. */
  waiting(id: string): HeldView | null {
    const w = this.waiters.get(id);
    if (!w) return null;
    return {
      scope: w.tx.scope,
      since: w.since,
      waitingFor: { account: w.tx.account, sequence: String(w.tx.seq), waitingFor: String(waitsFor(w.tx.seq)) },
    };
  }

  /** Resolves when `tx` may be sent (at once when its account has nothing before it); throws if it never may. */
  async enter(tx: OrderedTx): Promise<void> {
    if (this.stopped) return;
    // nothing of its account here: it goes at once (what a new account's actor decides), without one
    if (!this.accounts.has(tx.account) && !this.lone.has(tx.account)) {
      this.lone.set(tx.account, { id: tx.id, seq: tx.seq });
      return;
    }
    this.checkLimits(tx);
    const held = this.hold(tx);
    this.send(tx.account, { type: "ARRIVE", id: tx.id, seq: tx.seq });
    return await held;
  }

  /**
   * Holds `tx` until it is released; it gives up after SEQUENCE_HOLD_MS without progress on its account
   * (the timer starts anew whenever one of the account's numbers is used), or at its maxTime.
   */
  private hold(tx: OrderedTx): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiters.set(tx.id, { tx, since: Date.now(), resolve, reject, timer: this.timer(tx) });
      const by = this.heldBy.get(tx.scope);
      if (by) {
        by.count++;
        by.bytes += tx.bytes;
      } else this.heldBy.set(tx.scope, { count: 1, bytes: tx.bytes });
    });
  }

  private timer(tx: OrderedTx): ReturnType<typeof setTimeout> {
    const holdMs = Math.max(0, Math.min(this.deps.limits.holdMs, untilMaxTime(tx.maxTime)));
    return setTimeout(() => this.timedOut(tx), holdMs);
  }

  /** The account moved on (a number used): its held transactions' time without progress starts anew. */
  private progressed(account: string): void {
    for (const w of this.waiters.values()) {
      if (w.tx.account !== account) continue;
      clearTimeout(w.timer);
      w.timer = this.timer(w.tx);
    }
  }

  /**
   * A sent transaction's end. `out_of_order` (tx_bad_seq before any ledger): the account's number
   * is read, and a transaction ahead of it is held again (the promise resolves when it may be sent
   * again: true) or is really behind the chain (false: the rejection stands).
   */
  async ended(tx: OrderedTx, result: OrderResult): Promise<boolean> {
    if (this.stopped) return false;
    // a lone transaction applied: its account has nothing else here (any other outcome goes to an actor)
    if (result === "applied" && this.lone.get(tx.account)?.id === tx.id) {
      this.lone.delete(tx.account);
      return false;
    }
    switch (result) {
      case "applied":
        this.send(tx.account, { type: "APPLIED", id: tx.id, seq: tx.seq });
        return false;
      case "rejected":
        this.send(tx.account, { type: "REJECTED", id: tx.id, seq: tx.seq });
        return false;
      case "unknown":
        this.send(tx.account, { type: "UNKNOWN", id: tx.id, seq: tx.seq });
        return false;
      case "out_of_order": {
        let chainSeq: bigint | undefined;
        try {
          chainSeq = (await this.deps.accounts([tx.account])).get(tx.account)?.seq;
        } catch (e) {
          this.deps.log.warn(
            { network: this.deps.network, account: tx.account, err: String(e) },
            "reading a sequence failed",
          );
        }
        if (chainSeq === undefined || tx.seq <= chainSeq + 1n) {
          this.send(tx.account, { type: "LEAVE", id: tx.id });
          return false;
        }
        this.checkLimits(tx);
        const again = this.hold(tx);
        this.send(tx.account, { type: "GAP", id: tx.id, seq: tx.seq, chainSeq });
        await again;
        return true;
      }
      default:
        return result satisfies never;
    }
  }

  /** A transaction of the account refused by the relay itself before it was sent (policy, credits). */
  refusedBefore(account: string, seq: bigint): void {
    if (this.accounts.has(account) || this.lone.has(account)) this.send(account, { type: "REJECTED", id: null, seq });
  }

  stop(): void {
    this.stopped = true;
    for (const w of this.waiters.values()) {
      clearTimeout(w.timer);
      w.reject(unavailable("the relay is stopping: nothing of this transaction was sent", { reason: "stopping" }, 1));
    }
    this.waiters.clear();
    for (const a of this.accounts.values()) a.stop();
    this.accounts.clear();
    this.lone.clear();
    this.stalled.clear();
  }

  private checkLimits(tx: OrderedTx): void {
    const { perPayer, perAccount, perPayerBytes } = this.deps.limits;
    const account = this.accounts.get(tx.account)?.getSnapshot().context.held.length ?? 0;
    const by = this.heldBy.get(tx.scope);
    const payer = by?.count ?? 0;
    if ((by?.bytes ?? 0) + tx.bytes > perPayerBytes) throw tooManyBytes(tx, by?.bytes ?? 0, perPayerBytes);
    if (payer < perPayer && account < perAccount) return;
    throw payer >= perPayer ? tooMany(tx, "payer", perPayer) : tooMany(tx, "account", perAccount);
  }

  /** Sends an account's actor an event (started on a first arrival) and carries out its decisions. */
  private send(account: string, event: AccountEvent): void {
    let actor = this.accounts.get(account);
    if (!actor) {
      const inFlight = this.lone.get(account);
      if (!inFlight && event.type !== "ARRIVE") return; // nothing is held or sent for it: nothing to decide
      this.lone.delete(account);
      actor = createActor(accountMachine, { input: { account, ...(inFlight ? { inFlight } : {}) } }).start();
      this.accounts.set(account, actor);
    }
    const before = actor.getSnapshot().context.chainSeq;
    actor.send(event);
    const snap = actor.getSnapshot();
    if (snap.context.chainSeq !== before) this.progressed(account);
    for (const tx of snap.context.go) this.release(tx.id)?.resolve();
    for (const r of snap.context.refused) this.release(r.id)?.reject(predecessorRejected(account, r.rejected));
    if (idle(snap.context)) {
      this.accounts.delete(account);
      this.stalled.delete(account);
      actor.stop();
    } else if (snap.context.inFlight === null && snap.context.held.length > 0) {
      // stalled as of now: known here, not found by a scan of every account
      this.stalled.add(account);
      this.follow();
    } else this.stalled.delete(account);
  }

  private release(id: string): Waiter | null {
    const w = this.waiters.get(id);
    if (!w) return null;
    clearTimeout(w.timer);
    this.waiters.delete(id);
    const by = this.heldBy.get(w.tx.scope);
    if (by && --by.count > 0) by.bytes -= w.tx.bytes;
    else this.heldBy.delete(w.tx.scope);
    return w;
  }

  private timedOut(tx: OrderedTx): void {
    const w = this.release(tx.id);
    if (!w) return;
    const actor = this.accounts.get(tx.account);
    const chain = actor?.getSnapshot().context.chainSeq ?? null;
    this.send(tx.account, { type: "LEAVE", id: tx.id });
    w.reject(neverCame(tx, chain, this.deps.limits.holdMs));
  }

  /**
   * While an account's next number is not in flight here (sent by another instance, or outside the
   * relay), its sequence number is read from the network after each ledger: all such accounts in one call.
   */
  private follow(): void {
    if (this.reading || this.stopped || !this.stalled.size) return;
    const stalled = () => [...this.stalled];
    this.reading = true;
    void (async () => {
      try {
        while (!this.stopped) {
          await this.deps.nextLedger(this.deps.limits.holdMs);
          const list = stalled();
          if (!list.length || this.stopped) return;
          const read = await this.deps.accounts(list).catch((e) => {
            this.deps.log.warn({ network: this.deps.network, err: String(e) }, "reading held accounts failed");
            return new Map<string, AccountState>();
          });
          for (const [pk, a] of read) this.send(pk, { type: "CHAIN", seq: a.seq });
        }
      } finally {
        this.reading = false;
      }
    })();
  }
}

const untilMaxTime = (maxTime: bigint): number =>
  maxTime === 0n ? Number.POSITIVE_INFINITY : Number(maxTime) * 1000 - Date.now();
