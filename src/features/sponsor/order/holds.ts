/**
 * What a sequence gate holds for their predecessors (sequence-gate.ts): each transaction's promise and
 * its timer (given up on after SEQUENCE_HOLD_MS without progress on its account, or at its maxTime),
 * and the counts its limits are checked against: per paying project or client IP (transactions and
 * bytes) and per source account.
 */
import type { RelayError } from "../../../kernel/errors.ts";
import { waitsFor } from "../../../../actors/sponsor/account.machine.ts";
import { tooMany, tooManyBytes } from "./refusals.ts";

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

/** A held transaction as a look-up shows it: who pays, since when, and what it waits for. */
export interface HeldView {
  scope: string;
  since: number;
  waitingFor: { account: string; sequence: string; waitingFor: string };
}

export interface Waiter {
  tx: OrderedTx;
  /** When it was held (epoch ms). */
  since: number;
  /** Its turn came: it may be sent. */
  go(): void;
  /** It never may be sent: why, as its promise's value. */
  refuse(e: RelayError): void;
  /** Gives up on it: SEQUENCE_HOLD_MS without progress on its account, or its maxTime. */
  timer: ReturnType<typeof setTimeout>;
}

const untilMaxTime = (maxTime: bigint): number =>
  maxTime === 0n ? Number.POSITIVE_INFINITY : Number(maxTime) * 1000 - Date.now();

export class Holds {
  private readonly waiters = new Map<string, Waiter>();
  private readonly byScope = new Map<string, { count: number; bytes: number }>();
  private readonly byAccount = new Map<string, number>();

  constructor(
    private readonly limits: OrderLimits,
    /** Called when a held transaction's time runs out (it is released already). */
    private readonly timedOut: (w: Waiter) => void,
  ) {}

  get size(): number {
    return this.waiters.size;
  }

  has(id: string): boolean {
    return this.waiters.has(id);
  }

  /** What a held transaction waits for (a look-up's `waitingFor`); null if not held. */
  view(id: string): HeldView | null {
    const w = this.waiters.get(id);
    if (!w) return null;
    return {
      scope: w.tx.scope,
      since: w.since,
      waitingFor: { account: w.tx.account, sequence: String(w.tx.seq), waitingFor: String(waitsFor(w.tx.seq)) },
    };
  }

  /** The 429 holding `tx` would earn past a limit (its payer's count or bytes, its account's count), or null. */
  check(tx: OrderedTx): RelayError | null {
    const { perPayer, perAccount, perPayerBytes } = this.limits;
    const account = this.byAccount.get(tx.account) ?? 0;
    const by = this.byScope.get(tx.scope);
    const payer = by?.count ?? 0;
    if ((by?.bytes ?? 0) + tx.bytes > perPayerBytes) return tooManyBytes(tx, by?.bytes ?? 0, perPayerBytes);
    if (payer < perPayer && account < perAccount) return null;
    return payer >= perPayer ? tooMany(tx, "payer", perPayer) : tooMany(tx, "account", perAccount);
  }

  /** Holds `tx` until it is released (its timer started): null when its turn comes, else why it never may go. */
  hold(tx: OrderedTx): Promise<RelayError | null> {
    return new Promise<RelayError | null>((resolve) => {
      const go = () => resolve(null);
      this.waiters.set(tx.id, { tx, since: Date.now(), go, refuse: resolve, timer: this.timer(tx) });
      this.byAccount.set(tx.account, (this.byAccount.get(tx.account) ?? 0) + 1);
      const by = this.byScope.get(tx.scope);
      if (by) {
        by.count++;
        by.bytes += tx.bytes;
      } else this.byScope.set(tx.scope, { count: 1, bytes: tx.bytes });
    });
  }

  /** Takes a held transaction out (its promise left to the caller), or null if it is not held. */
  release(id: string): Waiter | null {
    const w = this.waiters.get(id);
    if (!w) return null;
    clearTimeout(w.timer);
    this.waiters.delete(id);
    const left = (this.byAccount.get(w.tx.account) ?? 1) - 1;
    if (left > 0) this.byAccount.set(w.tx.account, left);
    else this.byAccount.delete(w.tx.account);
    const by = this.byScope.get(w.tx.scope);
    if (by && --by.count > 0) by.bytes -= w.tx.bytes;
    else this.byScope.delete(w.tx.scope);
    return w;
  }

  /** The account moved on (a number used): its held transactions' time without progress starts anew. */
  progressed(account: string): void {
    for (const w of this.waiters.values()) {
      if (w.tx.account !== account) continue;
      clearTimeout(w.timer);
      w.timer = this.timer(w.tx);
    }
  }

  /** Gives up on every held transaction with `error`. */
  refuseAll(error: () => RelayError): void {
    for (const w of this.waiters.values()) {
      clearTimeout(w.timer);
      w.refuse(error());
    }
    this.waiters.clear();
    this.byAccount.clear();
    this.byScope.clear();
  }

  private timer(tx: OrderedTx): ReturnType<typeof setTimeout> {
    const holdMs = Math.max(0, Math.min(this.limits.holdMs, untilMaxTime(tx.maxTime)));
    return setTimeout(() => {
      const w = this.release(tx.id);
      if (w) this.timedOut(w);
    }, holdMs);
  }
}
