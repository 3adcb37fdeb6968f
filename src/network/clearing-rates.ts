/**
 * What the last ledgers cleared at, from the transactions the ledger watcher already reads: under
 * surge stellar-core charges every classic transaction of a ledger the same rate per operation (the
 * lowest bid it included; the base fee when the ledger was not full), so a few results of a ledger
 * give its rate: fee charged / (operations + 1 for a fee-bump). Soroban transactions (their fee
 * holds the resource fee) are left out. A handful of samples per ledger, their median (a fee capped
 * at a fee source's balance is an outlier), for the last few ledgers.
 */
import { X, fromB64, Tx } from "../stellar/xdr.ts";

/** Rates kept per ledger (every classic transaction of a ledger pays the same rate), and results decoded at most. */
const SAMPLES = 5;
const TRIES = 20;
/** Ledgers kept. */
const KEPT = 8;
/** Operation types of the Soroban lane (invokeHostFunction, extendFootprintTtl, restoreFootprint). */
const SOROBAN_OP_TYPES = new Set([24, 25, 26]);

interface OpResultLike {
  code: number;
  tr?: { type: number };
}

/** The rate per operation a classic transaction was charged, from its result; null when the result cannot say. */
export function chargedRate(resultXdr: string): bigint | null {
  let r: { feeCharged: bigint; result: { code: number; results?: OpResultLike[]; innerResultPair?: unknown } };
  try {
    r = X.result.decode(fromB64(resultXdr)) as unknown as typeof r;
  } catch {
    return null;
  }
  const feeBump = r.result.code === Tx.feeBumpInnerSuccess || r.result.code === Tx.feeBumpInnerFailed;
  const body = feeBump
    ? (r.result.innerResultPair as { result: { result: { results?: OpResultLike[] } } }).result.result
    : r.result;
  const ops = body.results;
  if (!ops?.length || ops.some((o) => o.tr && SOROBAN_OP_TYPES.has(o.tr.type))) return null;
  return BigInt(r.feeCharged) / BigInt(ops.length + (feeBump ? 1 : 0));
}

/** What the relay knows of the market of one lane (classic or Soroban), stroops per operation. */
export interface Market {
  /** The clearing rates of the last few ledgers the relay read itself (newest last; may be empty). */
  recent: readonly bigint[];
  /** The network's fee statistics (recent fees charged per operation): the median and the configured percentile. */
  median: bigint;
  percentile: bigint;
}

export class ClearingRates {
  private readonly ledgers = new Map<number, bigint[]>();
  private readonly tries = new Map<number, number>();
  /** Samples kept or dropped so far: what `recent` last answered stands while it has not moved. */
  private changes = 0;
  private last: { latest: number; window: number; changes: number; rates: readonly bigint[] } | null = null;

  /** A transaction of ledger `ledger` (its result XDR), as the watcher reads it. */
  see(ledger: number, resultXdr: string): void {
    const tried = this.tries.get(ledger) ?? 0;
    if (tried >= TRIES || (this.ledgers.get(ledger)?.length ?? 0) >= SAMPLES) return;
    if (tried === 0)
      for (const l of this.tries.keys())
        if (l <= ledger - KEPT) {
          this.tries.delete(l);
          if (this.ledgers.delete(l)) this.changes++;
        }
    this.tries.set(ledger, tried + 1);
    const rate = chargedRate(resultXdr);
    if (rate === null) return;
    const samples = this.ledgers.get(ledger);
    if (samples) samples.push(rate);
    else this.ledgers.set(ledger, [rate]);
    this.changes++;
  }

  /**
   * The clearing rates of the ledgers after `latest - window` read so far (oldest first). Every
   * sponsorship's fee plan asks: worked out again only when a sample or the latest ledger changed.
   */
  recent(latest: number, window = 5): readonly bigint[] {
    const last = this.last;
    if (last && last.latest === latest && last.window === window && last.changes === this.changes) return last.rates;
    const rates = [...this.ledgers.entries()]
      .filter(([l]) => l > latest - window)
      .sort(([a], [b]) => a - b)
      .map(([, s]) => [...s].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))[Math.floor(s.length / 2)]!);
    this.last = { latest, window, changes: this.changes, rates };
    return rates;
  }
}
