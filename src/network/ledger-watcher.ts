/**
 * One watcher per network confirms every pending submission: when a new ledger closes it reads
 * that ledger's transactions once (getTransactions, paged) and resolves all waiting hashes, instead
 * of a poll loop per request. It also tracks the network's latest ledger for health and fees.
 */
import type { rpc } from "@stellar/stellar-sdk";
import { X, fromB64 } from "../stellar/xdr.ts";
import type { Logger } from "../log.ts";

/** A transaction found in a closed ledger. */
export interface Confirmed {
  hash: string;
  successful: boolean;
  ledger: number;
  resultXdr: string;
  feeCharged: bigint;
}

interface RawTx { status: string; txHash: string; ledger: number; resultXdr: string }
interface RawPage { transactions: RawTx[] | null; latestLedger: number; cursor: string }

const PAGE = 200;

export class LedgerWatcher {
  private readonly pending = new Map<string, Set<(c: Confirmed) => void>>();
  private last = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private polling: Promise<void> | null = null;
  private again = false;
  /** Latest ledger seen and when it was first seen (ms). */
  latestLedger = 0;
  latestSeenAt = 0;
  lastError: string | null = null;
  private readonly newLedger = new Set<(seq: number) => void>();

  constructor(private readonly server: rpc.Server, private readonly opts: { pollMs: number; log: Logger; network: string }) {}

  /** Starts watching from the current ledger; an unreachable network is retried on every poll. */
  async start(): Promise<void> {
    await this.poll();
    this.schedule();
  }
  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Calls `fn` with the sequence of every newly seen ledger. */
  onLedger(fn: (seq: number) => void): () => void {
    this.newLedger.add(fn);
    return () => this.newLedger.delete(fn);
  }

  /**
   * Watches for `hash`: the promise resolves when it is in a closed ledger, or with null after
   * `timeoutMs` or `cancel()`. Register before sending, so that no ledger can be missed.
   */
  watch(hash: string, timeoutMs: number): { promise: Promise<Confirmed | null>; cancel: () => void } {
    let done!: (c: Confirmed | null) => void;
    const promise = new Promise<Confirmed | null>((resolve) => {
      let set = this.pending.get(hash);
      if (!set) this.pending.set(hash, (set = new Set()));
      done = (c) => { clearTimeout(timer); set!.delete(done); if (!set!.size) this.pending.delete(hash); resolve(c); };
      const timer = setTimeout(() => done(null), timeoutMs);
      set.add(done);
    });
    return { promise, cancel: () => done(null) };
  }

  /** Polls now (e.g. when an embedded network says a ledger closed). */
  poke(): void {
    if (this.polling) { this.again = true; return; }
    this.polling = this.poll().finally(() => {
      this.polling = null;
      if (this.again) { this.again = false; this.poke(); }
    });
  }

  private schedule(): void {
    this.timer = setTimeout(() => { this.poke(); this.schedule(); }, this.opts.pollMs);
  }

  private async poll(): Promise<void> {
    try {
      const latest = (await this.server._getLatestLedger()) as { sequence: number };
      this.lastError = null;
      if (this.last === 0) {
        // the first answer: watch from here on
        this.last = this.latestLedger = latest.sequence;
        this.latestSeenAt = Date.now();
        return;
      }
      if (latest.sequence <= this.last) return;
      this.latestLedger = latest.sequence;
      this.latestSeenAt = Date.now();
      if (this.pending.size) await this.scan(this.last + 1, latest.sequence);
      this.last = latest.sequence;
      for (const fn of this.newLedger) fn(latest.sequence);
    } catch (e) {
      this.lastError = e instanceof Error ? e.message : String(e);
      this.opts.log.warn({ network: this.opts.network, err: this.lastError }, "ledger watcher poll failed");
    }
  }

  /** Reads the transactions of ledgers [from, to] and resolves the waiting ones. */
  private async scan(from: number, to: number): Promise<void> {
    let page = (await this.server._getTransactions({ startLedger: from, pagination: { limit: PAGE } })) as unknown as RawPage;
    for (;;) {
      const txs = page.transactions ?? [];
      for (const t of txs) {
        if (t.ledger > to) return;
        const waiting = this.pending.get(t.txHash);
        if (!waiting) continue;
        const result = X.result.decode(fromB64(t.resultXdr));
        const c: Confirmed = { hash: t.txHash, successful: t.status === "SUCCESS", ledger: t.ledger, resultXdr: t.resultXdr, feeCharged: result.feeCharged };
        for (const fn of [...waiting]) fn(c);
      }
      if (txs.length < PAGE) return;
      page = (await this.server._getTransactions({ pagination: { cursor: page.cursor, limit: PAGE } })) as unknown as RawPage;
    }
  }
}
