/**
 * The transaction queue as stellar-core keeps it: one pending transaction per sequence-source
 * account, fee-source totals, two lanes (classic by operations, Soroban by transactions) with a
 * capacity of twice a ledger's, eviction of cheaper transactions, aging and bans.
 */
import type { Frame } from "./frame.ts";
import { rateLess, laneSize, type LaneCapacity } from "./surge.ts";

export interface Queued {
  frame: Frame;
  /** Ledgers this transaction has waited through. */
  age: number;
}

export const QUEUE_TIMEOUT_LEDGERS = 4;
export const BAN_LEDGERS = 10;
export const QUEUE_SIZE_MULTIPLIER = 2;
export const REPLACE_BY_FEE_MULTIPLIER = 10n;

export class TxQueue {
  readonly bySource = new Map<string, Queued>();
  private readonly byHash = new Map<string, Queued>();
  private readonly feeTotals = new Map<string, bigint>();
  private readonly bans = new Map<string, number>(); // hash -> last banned ledger
  private used = { classic: 0, soroban: 0 };

  /** `capacity`: a ledger's (the queue holds QUEUE_SIZE_MULTIPLIER times as much). */
  constructor(private readonly capacity: LaneCapacity) {}

  get size(): number {
    return this.bySource.size;
  }
  isBanned(hashHex: string): boolean {
    return this.bans.has(hashHex);
  }
  ban(hashHex: string, untilLedger: number): void {
    this.bans.set(hashHex, untilLedger);
  }
  /** Queued transaction by outer or inner hash. */
  byAnyHash(hashHex: string): Queued | undefined {
    return this.byHash.get(hashHex);
  }
  queuedFees(feeSource: string): bigint {
    return this.feeTotals.get(feeSource) ?? 0n;
  }

  /** Queues `frame`; `age` carries over the age of a transaction it replaces by fee. */
  add(frame: Frame, age = 0): void {
    const q: Queued = { frame, age };
    this.bySource.set(frame.inner.source, q);
    this.byHash.set(frame.hashHex, q);
    if (frame.isFeeBump) this.byHash.set(frame.inner.hashHex, q);
    this.feeTotals.set(frame.feeSource, this.queuedFees(frame.feeSource) + frame.fullFee);
    this.used[frame.inner.isSoroban ? "soroban" : "classic"] += laneSize(frame);
  }

  remove(frame: Frame): void {
    const q = this.bySource.get(frame.inner.source);
    if (!q || q.frame !== frame) return;
    this.bySource.delete(frame.inner.source);
    this.byHash.delete(frame.hashHex);
    if (frame.isFeeBump) this.byHash.delete(frame.inner.hashHex);
    const left = this.queuedFees(frame.feeSource) - frame.fullFee;
    if (left > 0n) this.feeTotals.set(frame.feeSource, left);
    else this.feeTotals.delete(frame.feeSource);
    this.used[frame.inner.isSoroban ? "soroban" : "classic"] -= laneSize(frame);
  }

  /**
   * Room for `frame` in its lane, evicting cheaper transactions if needed. Returns the frames to
   * evict, or the fee that would make room (null when no fee would).
   */
  makeRoom(frame: Frame): { evict: Frame[] } | { needFee: bigint | null } {
    const lane = frame.inner.isSoroban ? "soroban" : "classic";
    const cap = this.capacity[lane] * QUEUE_SIZE_MULTIPLIER;
    const size = laneSize(frame);
    if (size > cap) return { needFee: null };
    let free = cap - this.used[lane];
    if (free >= size) return { evict: [] };
    const cheaper = [...this.bySource.values()]
      .map((q) => q.frame)
      .filter((f) => f.inner.isSoroban === frame.inner.isSoroban)
      .sort((a, b) => (rateLess(a, b) ? -1 : rateLess(b, a) ? 1 : 0));
    const evict: Frame[] = [];
    for (const f of cheaper) {
      if (free >= size) break;
      if (!rateLess(f, frame)) {
        // would have to beat f: its rate, plus one stroop per op
        const need = (f.inclusionFee * BigInt(frame.feeOps)) / BigInt(f.feeOps) + 1n + frame.inner.resourceFee;
        return { needFee: need };
      }
      evict.push(f);
      free += laneSize(f);
    }
    return free >= size ? { evict } : { needFee: null };
  }

  /** Ages every queued transaction by one ledger; returns those past the timeout. */
  age(): Frame[] {
    const expired: Frame[] = [];
    for (const q of this.bySource.values()) if (++q.age >= QUEUE_TIMEOUT_LEDGERS) expired.push(q.frame);
    return expired;
  }

  /** Lifts bans older than BAN_LEDGERS. */
  unban(ledgerSeq: number): void {
    for (const [h, until] of this.bans) if (until <= ledgerSeq) this.bans.delete(h);
  }

  frames(): Frame[] {
    return [...this.bySource.values()].map((q) => q.frame);
  }
}
