/**
 * Who waits for which transaction hash (a transaction's own, or a fee-bump's inner one): the ledger
 * watcher hands each transaction it reads here, and whoever waits for its hash or its inner hash
 * is told, with its result decoded whole.
 */
import { resultSummary } from "../stellar/xdr.ts";

/** A transaction found in a closed ledger. */
export interface Confirmed {
  /** The hash of what was applied (a fee-bump's outer hash). */
  hash: string;
  /** A fee-bump's inner transaction hash; null for a plain transaction. */
  innerHash: string | null;
  successful: boolean;
  ledger: number;
  resultXdr: string;
  feeCharged: bigint;
}

/** A transaction as getTransactions lists it. */
export interface ReadTx {
  status: string;
  txHash: string;
  ledger: number;
  resultXdr: string;
}

export class HashWaiters {
  private readonly pending = new Map<string, Set<(c: Confirmed) => void>>();

  /** Hashes waited for. */
  get size(): number {
    return this.pending.size;
  }

  /** Resolves with the transaction once it is read, or with null after `timeoutMs` or `cancel()`. */
  watch(hash: string, timeoutMs: number): { promise: Promise<Confirmed | null>; cancel: () => void } {
    let done!: (c: Confirmed | null) => void;
    const promise = new Promise<Confirmed | null>((resolve) => {
      let set = this.pending.get(hash);
      if (!set) this.pending.set(hash, (set = new Set()));
      done = (c) => {
        clearTimeout(timer);
        set!.delete(done);
        if (!set!.size && this.pending.get(hash) === set) this.pending.delete(hash);
        resolve(c);
      };
      const timer = setTimeout(() => done(null), timeoutMs);
      set.add(done);
    });
    return { promise, cancel: () => done(null) };
  }

  /**
   * A transaction read from a ledger: its waiters are told (true), or nobody waits for it (false).
   * Throws when its result cannot be decoded.
   */
  found(t: ReadTx): boolean {
    // a fee-bump the relay sent is waited for by its hash: its result is decoded once, whole; another
    // transaction's only as far as its inner hash, unless someone waits for that
    const byHash = this.pending.get(t.txHash);
    const inner = byHash ? null : resultSummary(t.resultXdr, false).innerHash;
    if (!byHash && !(inner && this.pending.has(inner))) return false;
    const summary = resultSummary(t.resultXdr); // a waiter's result is decoded whole before it is believed
    const waiting = [...(byHash ?? []), ...(summary.innerHash ? (this.pending.get(summary.innerHash) ?? []) : [])];
    const c: Confirmed = {
      hash: t.txHash,
      innerHash: summary.innerHash,
      successful: t.status === "SUCCESS",
      ledger: t.ledger,
      resultXdr: t.resultXdr,
      feeCharged: summary.feeCharged,
    };
    for (const fn of waiting) fn(c);
    return true;
  }
}
