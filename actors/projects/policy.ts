/**
 * A project's policy as the project actor applies it, and its static rules. Plain data and pure
 * functions: the schemas, defaults and wire conversions are src/features/projects/rules/policy.ts's.
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
  /** The contracts of allow.contracts (which supersedes it), as the view shows them; null: any. */
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
  /**
   * What may be touched (absent list: anything): contracts (and their functions), destinations of
   * value (G or C addresses), assets ("native" or "CODE:ISSUER"). null: no allowlist at all.
   */
  allow: Allow | null;
  /** When the policy is live (epoch ms); null: no bound. */
  activeFrom: number | null;
  activeUntil: number | null;
  /** Caps per end user per UTC day (checked outside the actor, exact across instances); null: none. */
  perUser: { maxTransactionsPerDay: number | null; maxFeePerDay: bigint | null } | null;
  /** The app's approval server, asked before sponsoring (src/features/projects/rules/approval.ts); null: none. */
  approval: {
    url: string;
    timeoutMs: number;
    onFailure: "deny" | "approve";
    /** The whsec_ secret, sealed for the project. */
    sealedSecret: string;
  } | null;
}

export interface Allow {
  contracts?: { contract: string; functions?: string[] }[];
  destinations?: string[];
  assets?: string[];
}

export type PolicyRule =
  | "maxFee"
  | "allowedOperations"
  | "allowedContractIds"
  | "maxOperations"
  | "dailySpendLimit"
  | "allow.destinations"
  | "allow.assets"
  | "allow.contracts"
  | "activeFrom"
  | "activeUntil"
  | "perUser"
  | "testnetDailySpendLimit";

/** One operation as the allowlists (and an approval request) see it: src/features/projects/rules/touches.ts. */
export interface OpSummary {
  type: string;
  destination?: string;
  /** Several destinations (a claimable balance's claimants). */
  destinations?: string[];
  asset?: string;
  /** Every asset a path payment or an offer moves. */
  assets?: string[];
  amount?: string;
  contract?: string;
  function?: string;
  /** Where it sends value cannot be told from the operation (a contract function that is no token's). */
  destinationUnknown?: true;
  /** Which asset it moves cannot be told (a pool's or a balance's id, a contract that is no listed asset's). */
  assetUnknown?: true;
}

/** What a sponsor request asks of a policy. */
export interface SpendRequest {
  operationTypes: string[];
  contractIds: (string | null)[];
  /** Fee at the lowest valid bid. */
  minFee: bigint;
  /** Fee at the highest bid the relay would escalate to. */
  maxFee: bigint;
  /** What it touches, operation by operation (given when the policy has an allowlist). */
  operations?: OpSummary[];
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
export function checkRules(p: Policy, r: SpendRequest, now: number): Violation | { grant: bigint } {
  const window = checkWindow(p, now);
  if (window) return window;
  const count = r.operationTypes.length;
  if (count > p.maxOperations)
    return {
      rule: "maxOperations",
      message: `the transaction has ${count} operations; the policy allows at most ${p.maxOperations}`,
      details: { limit: p.maxOperations, actual: count },
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
  // without a summary (none was made), the contracts the operations invoke stand for it
  const ops = r.operations ?? r.contractIds.map((c) => ({ type: "invokeHostFunction", ...(c ? { contract: c } : {}) }));
  const outside = p.allow ? checkAllow(p.allow, ops) : null;
  if (outside) return outside;
  if (r.minFee > p.maxFee)
    return {
      rule: "maxFee",
      message: `the transaction needs a fee of at least ${r.minFee} stroops; the policy allows at most ${p.maxFee}`,
      details: { limit: p.maxFee.toString(), required: r.minFee.toString() },
    };
  return { grant: r.maxFee < p.maxFee ? r.maxFee : p.maxFee };
}

/** Outside the policy's time window: activeFrom or activeUntil. */
function checkWindow(p: Policy, now: number): Violation | null {
  if (p.activeFrom !== null && now < p.activeFrom) {
    const at = new Date(p.activeFrom).toISOString();
    return { rule: "activeFrom", message: `the policy is live from ${at}`, details: { value: at } };
  }
  if (p.activeUntil !== null && now >= p.activeUntil) {
    const at = new Date(p.activeUntil).toISOString();
    return { rule: "activeUntil", message: `the policy was live until ${at}`, details: { value: at } };
  }
  return null;
}

/** An operation in a few words: its type, or the contract function it calls. */
const describe = (op: OpSummary): string =>
  op.contract ? `${op.function ? `${op.function} on ` : ""}${op.contract}` : op.type;

/** How many of a list a refusal's details name (the message names fewer). */
const SHOWN_IN_DETAILS = 20;
/** What a list allows, in a few words: its first entries and how many more. */
function listing(list: string[]): string {
  if (list.length === 0) return "it lists nothing: nothing of this kind is allowed";
  const shown = list.slice(0, 3).join(", ");
  return `it lists ${shown}${list.length > 3 ? ` and ${list.length - 3} more` : ""}`;
}

/** The first thing an operation touches outside a present allowlist. */
function checkAllow(allow: Allow, ops: OpSummary[]): Violation | null {
  const outside = (rule: PolicyRule, what: string, value: string, i: number, listed: string[]): Violation => ({
    rule,
    message: `operation ${i} ${what} ${value}, which the policy's ${rule} does not list (${listing(listed)})`,
    details: { value, operation: i, allowed: listed.slice(0, SHOWN_IN_DETAILS), allowedCount: listed.length },
  });
  for (const [i, op] of ops.entries()) {
    // what cannot be told is refused by a list, unless allow.contracts names the contract (checked below)
    const trusted = op.contract !== undefined && allow.contracts?.some((c) => c.contract === op.contract);
    const unknown = (rule: PolicyRule, what: string): Violation => ({
      rule,
      message:
        `operation ${i} (${describe(op)}) ${what} cannot be told from the transaction, and the policy has ` +
        `${rule}${op.contract ? `; list ${op.contract} in allow.contracts to allow it` : ""}`,
      details: { value: op.contract ?? op.type, operation: i },
    });
    if (allow.destinations && op.destinationUnknown && !trusted)
      return unknown("allow.destinations", "where it sends value");
    if (allow.assets && op.assetUnknown && !trusted) return unknown("allow.assets", "which asset it moves");
    if (allow.destinations)
      for (const d of [...(op.destination ? [op.destination] : []), ...(op.destinations ?? [])])
        if (!allow.destinations.includes(d))
          return outside("allow.destinations", "sends value to", d, i, allow.destinations);
    if (allow.assets)
      for (const a of [...(op.asset ? [op.asset] : []), ...(op.assets ?? [])])
        if (!allow.assets.includes(a)) return outside("allow.assets", "moves the asset", a, i, allow.assets);
    if (allow.contracts && op.type === "invokeHostFunction") {
      const listed = op.contract ? allow.contracts.find((c) => c.contract === op.contract) : undefined;
      const contracts = allow.contracts.map((c) => c.contract);
      if (!listed)
        return outside(
          "allow.contracts",
          "invokes",
          op.contract ?? "no contract (an upload or a creation)",
          i,
          contracts,
        );
      if (listed.functions && !listed.functions.includes(op.function ?? "")) {
        const v = outside("allow.contracts", `calls ${op.contract}'s function`, op.function ?? "", i, listed.functions);
        return { ...v, details: { ...v.details, contract: op.contract } };
      }
    }
  }
  return null;
}
