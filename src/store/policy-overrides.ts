/** A project's policy overrides as stored (jsonb): the policy fields set, absent ones default. Stroops are decimal strings. */
export interface PolicyOverrides {
  requestsPerSecond?: number;
  burst?: number;
  maxFee?: string;
  allowedOperations?: string[];
  allowedContractIds?: string[];
  maxOperations?: number;
  dailySpendLimit?: string;
  testnetDailySpendLimit?: string;
  /** Read by the credit journal's trigger (migration 0008) as `policy->>'lowBalanceAlert'`. */
  lowBalanceAlert?: string;
  /** `fast` or `economy` (src/relay/fee-strategy.ts). */
  feeStrategy?: "fast" | "economy";
}
