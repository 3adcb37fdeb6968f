/**
 * Surge pricing, as stellar-core's SurgePricingUtils and transaction-set building do it: two lanes
 * (classic counted in operations, Soroban in transactions), transactions ordered by fee rate, and
 * when a lane holds more than fits, its base fee rises to the lowest rate it included.
 */
import type { Frame } from "./frame.ts";

/** a/b < c/d for fee rates (inclusion fee per operation). */
export const rateLess = (a: Frame, b: Frame): boolean =>
  a.inclusionFee * BigInt(b.feeOps) < b.inclusionFee * BigInt(a.feeOps);

/** The size of a transaction in its lane: operations (classic) or one transaction (Soroban). */
export const laneSize = (f: Frame): number => (f.inner.isSoroban ? 1 : f.feeOps);

/** Per-lane capacities of one ledger: classic operations, Soroban transactions. */
export interface LaneCapacity {
  classic: number;
  soroban: number;
}

/** A ledger's transaction set: its transactions in apply order and each lane's base fee per operation. */
export interface TxSet {
  frames: Frame[];
  laneBaseFee: { classic: bigint; soroban: bigint };
}

/** Picks a lane's transactions by fee rate; returns them and the lane's base fee per operation. */
function selectLane(frames: Frame[], capacity: number, baseFee: bigint): { take: Frame[]; baseFee: bigint } {
  const sorted = frames.sort((a, b) => (rateLess(b, a) ? -1 : rateLess(a, b) ? 1 : a.hashHex < b.hashHex ? -1 : 1));
  const take: Frame[] = [];
  let used = 0;
  let overflow = false;
  for (const f of sorted) {
    if (used + laneSize(f) > capacity) {
      overflow = true;
      continue;
    }
    take.push(f);
    used += laneSize(f);
  }
  let laneFee = baseFee;
  if (overflow && take.length) {
    const lowest = take.reduce((m, f) => (rateLess(f, m) ? f : m));
    const rate = lowest.inclusionFee / BigInt(lowest.feeOps);
    if (rate > laneFee) laneFee = rate;
  }
  return { take, baseFee: laneFee };
}

/** The transaction set of the next ledger from the queued transactions (`baseFee`: the header's). */
export function buildTxSet(queued: Frame[], capacity: LaneCapacity, baseFee: number): TxSet {
  const base = BigInt(baseFee);
  const classic = selectLane(
    queued.filter((f) => !f.inner.isSoroban),
    capacity.classic,
    base,
  );
  const soroban = selectLane(
    queued.filter((f) => f.inner.isSoroban),
    capacity.soroban,
    base,
  );
  // apply order: by hash, as stellar-core shuffles a set deterministically
  const frames = [...classic.take, ...soroban.take].sort((a, b) => (a.hashHex < b.hashHex ? -1 : 1));
  return { frames, laneBaseFee: { classic: classic.baseFee, soroban: soroban.baseFee } };
}
