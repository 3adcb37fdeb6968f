/**
 * The one fee planner: the inclusion rate (stroops per operation) the relay bids first and when it
 * replaces it, used by sponsor and func+auth to reserve and bid, and by estimate to answer, so that
 * under surge both say the same. The rule is fee-strategy.ts's (`planBid`), on the network's market
 * as the gateway sees it; never below the floor (the protocol's base fee and the inner
 * transaction's own rate), never above MAX_FEE_RATE unless the floor is higher. The policy's maxFee
 * caps it further once the reservation is granted (the submission bids at most what it covers).
 */
import type { FeePercentile, Gateway } from "../../network/gateway.ts";
import { BASE_FEE } from "../../stellar/protocol.ts";
import { type Bid, DEFAULT_FEE_STRATEGY, type FeeStrategy, planBid } from "./fee-strategy.ts";

export type FeePlan = Bid;

const max = (a: bigint, b: bigint) => (a > b ? a : b);

/** The plan for a network rate, bidding that rate (pure: the rule of a plain percentile bid). */
export function planFee(networkRate: bigint, floor: bigint, maxFeeRate: bigint): { rate: bigint; floor: bigint } {
  const lowest = max(floor, BASE_FEE);
  const rate = max(lowest, networkRate);
  return { floor: lowest, rate: rate > maxFeeRate ? max(maxFeeRate, lowest) : rate };
}

export class FeePlanner {
  constructor(readonly config: { feePercentile: FeePercentile; maxFeeRate: bigint }) {}

  /** The plan on `gw` now for `strategy` (fee statistics read once per ledger by the gateway). */
  async plan(
    gw: Gateway,
    floor: bigint,
    soroban: boolean,
    strategy: FeeStrategy = DEFAULT_FEE_STRATEGY,
  ): Promise<FeePlan> {
    const market = await gw.market(this.config.feePercentile, soroban);
    return planBid(strategy, market, floor, this.config.maxFeeRate);
  }
}
