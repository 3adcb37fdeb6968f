/**
 * The one fee planner: the inclusion rate (stroops per operation) the relay bids first, used by
 * sponsor and func+auth to reserve and bid, and by estimate to answer, so that under surge both
 * say the same. The network's fee statistics at FEE_PERCENTILE, never below the floor (the
 * protocol's base fee and the inner transaction's own rate), never above MAX_FEE_RATE unless the
 * floor is higher.
 */
import type { FeePercentile, Gateway } from "../network/gateway.ts";
import { BASE_FEE } from "../stellar/protocol.ts";

export interface FeePlan {
  /** The first bid (stroops per operation). */
  rate: bigint;
  /** The lowest valid bid. */
  floor: bigint;
}

const max = (a: bigint, b: bigint) => (a > b ? a : b);

/** The plan for a network rate (pure: the rule itself). */
export function planFee(networkRate: bigint, floor: bigint, maxFeeRate: bigint): FeePlan {
  const lowest = max(floor, BASE_FEE);
  const rate = max(lowest, networkRate);
  return { floor: lowest, rate: rate > maxFeeRate ? max(maxFeeRate, lowest) : rate };
}

export class FeePlanner {
  constructor(readonly config: { feePercentile: FeePercentile; maxFeeRate: bigint }) {}

  /** The plan on `gw` now (fee statistics read once per ledger by the gateway). */
  async plan(gw: Gateway, floor: bigint, soroban: boolean): Promise<FeePlan> {
    return planFee(await gw.feeRate(this.config.feePercentile, soroban), floor, this.config.maxFeeRate);
  }
}
