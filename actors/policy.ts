/**
 * A project's policy as the project actor applies it, and its static rules. Plain data and pure
 * functions: the schemas, defaults and wire conversions are src/relay/policy.ts's.
 */

export interface Policy {
  /** Sustained requests per second (token refill rate). */
  requestsPerSecond: number;
  /** Bucket size: requests that may arrive at once. */
  burst: number;
  /** Highest fee the relay pays for one transaction, stroops. */
  maxFee: bigint;
  /** Operation types allowed; null: any. */
  allowedOperations: string[] | null;
  /** Contracts invokeHostFunction may call; null: any. */
  allowedContractIds: string[] | null;
  maxOperations: number;
  /** Fees the relay may pay for the project per UTC day, stroops; null: no limit. */
  dailySpendLimit: bigint | null;
  /**
   * Fees the relay may pay for the project's testnet transactions per UTC day, stroops, beside
   * dailySpendLimit (which counts both networks); null: no testnet limit of its own.
   */
  testnetDailySpendLimit: bigint | null;
  /**
   * Mainnet credits (stroops) under which the project's webhooks get a `credits.low` event; null: no
   * alert. The journal's trigger applies it (migration 0008); the actor only shows it.
   */
  lowBalanceAlert: bigint | null;
  /**
   * How the relay bids under surge: `fast` (into the next ledger; it pays the clearing rate, not
   * the bid) or `economy` (the fee statistic's median, accepting a few ledgers). docs/fees.md.
   */
  feeStrategy: "fast" | "economy";
}

export type PolicyRule =
  | "maxFee"
  | "allowedOperations"
  | "allowedContractIds"
  | "maxOperations"
  | "dailySpendLimit"
  | "testnetDailySpendLimit";

/** What a sponsor request asks of a policy. */
export interface SpendRequest {
  operationTypes: string[];
  contractIds: (string | null)[];
  /** Fee at the lowest valid bid. */
  minFee: bigint;
  /** Fee at the highest bid the relay would escalate to. */
  maxFee: bigint;
  /** The network it is sent to (testnet: testnetDailySpendLimit applies too). */
  network?: "testnet" | "mainnet";
}

export interface Violation {
  rule: PolicyRule;
  message: string;
  details: Record<string, unknown>;
}

/**
 * The static rules (everything but the daily spend, which depends on the day's spending): a
 * violation, or the fee the relay may reserve (the wanted maximum capped by the policy).
 */
export function checkRules(p: Policy, r: SpendRequest): Violation | { grant: bigint } {
  const ops = r.operationTypes.length;
  if (ops > p.maxOperations)
    return {
      rule: "maxOperations",
      message: `the transaction has ${ops} operations; the policy allows at most ${p.maxOperations}`,
      details: { limit: p.maxOperations, actual: ops },
    };
  if (p.allowedOperations) {
    const bad = r.operationTypes.find((t) => !p.allowedOperations!.includes(t));
    if (bad)
      return {
        rule: "allowedOperations",
        message: `operation ${bad} is not allowed by the policy`,
        details: { operation: bad, allowed: p.allowedOperations },
      };
  }
  if (p.allowedContractIds) {
    const bad = r.contractIds.find((c) => c === null || !p.allowedContractIds!.includes(c));
    if (bad !== undefined)
      return {
        rule: "allowedContractIds",
        message:
          bad === null
            ? "only calls to allowed contracts may be sponsored (this host function invokes no contract)"
            : `contract ${bad} is not allowed by the policy`,
        details: { contractId: bad },
      };
  }
  if (r.minFee > p.maxFee)
    return {
      rule: "maxFee",
      message: `the transaction needs a fee of at least ${r.minFee} stroops; the policy allows at most ${p.maxFee}`,
      details: { limit: p.maxFee.toString(), required: r.minFee.toString() },
    };
  return { grant: r.maxFee < p.maxFee ? r.maxFee : p.maxFee };
}
