/**
 * The fee strategy as a pure function: what to bid first (stroops per operation) and after how many
 * missed ledgers to replace the bid by fee, from what the last ledgers cleared at and the network's
 * fee statistics. docs/fees.md explains the reasoning; in short, stellar-core charges every
 * transaction of a ledger the lowest bid it included (the clearing rate), not its own bid, so a
 * bid well above the clearing rate costs nothing more and is the cheapest way into the next ledger
 * (a replacement must bid 10x, and waits a ledger first).
 *
 * - `fast` (the default): 10x the highest rate the recent ledgers cleared at (never below 10x the
 *   base fee), replaced at 10x after one missed ledger.
 * - `economy`: the fee statistic's median, replaced at 10x after two missed ledgers (in by the third).
 *
 * Both never bid below the floor (the base fee, the inner transaction's own rate) nor above the
 * cap (MAX_FEE_RATE and the policy's maxFee), unless the floor itself is above the cap.
 */
import { BASE_FEE } from "../../stellar/protocol.ts";
import type { Market } from "../../network/clearing-rates.ts";

export const FEE_STRATEGIES = ["fast", "economy"] as const;
export type FeeStrategy = (typeof FEE_STRATEGIES)[number];
export const DEFAULT_FEE_STRATEGY: FeeStrategy = "fast";

/** A fast bid is this many times the recent clearing rate: what one missed ledger would force anyway. */
export const FAST_MULTIPLIER = 10n;
/** Missed ledgers before a replacement by fee. */
export const REPLACE_AFTER: Record<FeeStrategy, number> = { fast: 1, economy: 2 };

export interface Bid {
  /** The first bid, stroops per operation. */
  rate: bigint;
  /** The lowest valid bid. */
  floor: bigint;
  /** What the bid follows: the recent clearing rate (recentClearing), stroops per operation. */
  clearing: bigint;
  /**
   * The highest rate the last ledgers cleared at as the relay read them (null: it read none lately): what
   * the network most likely charges now, and the figure its errors quote (SUBMISSION_TIMEOUT, expired).
   */
  cleared: bigint | null;
  strategy: FeeStrategy;
  /** Missed ledgers before the bid is replaced at 10x. */
  replaceAfterLedgers: number;
}

const max = (...xs: bigint[]) => xs.reduce((a, b) => (a > b ? a : b));

/** The highest rate the recent ledgers cleared at: the relay's own reading, else the fee statistic; at least the base fee. */
export function recentClearing(m: Market): bigint {
  return max(BASE_FEE, m.percentile, ...m.recent);
}

/**
 * The first bid of `strategy` on market `m`, at least `floor` (and the base fee), at most `cap`
 * (the most the reservation covers, stroops per operation) unless the floor is above it.
 */
export function planBid(strategy: FeeStrategy, m: Market, floor: bigint, cap: bigint): Bid {
  const lowest = max(floor, BASE_FEE);
  const clearing = recentClearing(m);
  const want = strategy === "fast" ? max(clearing * FAST_MULTIPLIER, m.median) : max(m.median, BASE_FEE);
  const capped = want > cap ? cap : want;
  return {
    rate: max(lowest, capped),
    floor: lowest,
    clearing,
    cleared: m.recent.length ? max(...m.recent) : null,
    strategy,
    replaceAfterLedgers: REPLACE_AFTER[strategy],
  };
}

/**
 * What the network most likely charges per operation: what the last ledgers cleared at (the relay's own
 * reading, the same figure its errors quote), else the fee statistics' `mode` (recent fees charged, over a
 * longer window); at least the base fee, at most the bid.
 */
export function likelyRate(plan: Bid, mode: bigint): bigint {
  const market = plan.cleared ?? mode;
  return max(BASE_FEE, market < plan.rate ? market : plan.rate);
}

/** A policy's strategy as stored (anything else: the default). */
export const asFeeStrategy = (v: unknown): FeeStrategy =>
  (FEE_STRATEGIES as readonly unknown[]).includes(v) ? (v as FeeStrategy) : DEFAULT_FEE_STRATEGY;
