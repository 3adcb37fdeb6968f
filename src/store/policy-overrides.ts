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
  /** `fast` or `economy` (src/features/tx/fee-strategy.ts). */
  feeStrategy?: "fast" | "economy";
  /** Allowlists (src/features/projects/rules/sponsorship-rules.ts); `allowedContractIds` is kept as allow.contracts. */
  allow?: {
    contracts?: { contract: string; functions?: string[] }[];
    destinations?: string[];
    assets?: string[];
  };
  /** ISO 8601. */
  activeFrom?: string;
  activeUntil?: string;
  perUser?: { maxTransactionsPerDay?: number; maxFeePerDay?: string };
  /** The approval server; its whsec_ secret sealed (never stored in clear). */
  approval?: { url: string; timeoutMs?: number; onFailure?: "deny" | "approve"; sealedSecret: string };
}
