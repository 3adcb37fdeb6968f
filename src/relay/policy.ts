/**
 * A project's policy: rate limit, fee cap, allowed operations and contracts, operation count and
 * daily spend. Stored as overrides of the defaults; the effective policy is defaults + overrides.
 * On the wire, stroop amounts are decimal strings; inside they are bigint.
 */
import { Type, type Static, type TSchema } from "@sinclair/typebox";
import { Op } from "../stellar/xdr.ts";
import { MAX_OPS_PER_TX } from "./decode.ts";

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
}

export type PolicyRule = "maxFee" | "allowedOperations" | "allowedContractIds" | "maxOperations" | "dailySpendLimit";

const stroops = Type.String({ pattern: "^[0-9]{1,18}$", description: "stroops (decimal string, at most 18 digits)" });
const nullable = <T extends TSchema>(s: T) => Type.Optional(Type.Union([s, Type.Null()]));
export const OPERATION_TYPES = Object.keys(Op);

/** A policy change: each given field overrides the current value; `null` returns it to the default. */
export const PolicyPatch = Type.Object(
  {
    requestsPerSecond: nullable(Type.Number({ exclusiveMinimum: 0, maximum: 1_000_000 })),
    burst: nullable(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    maxFee: nullable(stroops),
    allowedOperations: nullable(
      Type.Array(Type.Union(OPERATION_TYPES.map((o) => Type.Literal(o))), {
        uniqueItems: true,
        maxItems: OPERATION_TYPES.length,
      }),
    ),
    allowedContractIds: nullable(
      Type.Array(Type.String({ pattern: "^C[A-Z2-7]{55}$" }), { uniqueItems: true, maxItems: 1000 }),
    ),
    maxOperations: nullable(Type.Integer({ minimum: 1, maximum: MAX_OPS_PER_TX })),
    dailySpendLimit: nullable(stroops),
  },
  { additionalProperties: false },
);
export type PolicyPatch = Static<typeof PolicyPatch>;
/** Stored overrides: a patch without nulls. */
export type PolicyOverrides = PolicyPatch;

/** The effective policy as answered by the admin API. */
export const PolicyView = Type.Object({
  requestsPerSecond: Type.Number(),
  burst: Type.Integer(),
  maxFee: stroops,
  allowedOperations: Type.Union([Type.Array(Type.String()), Type.Null()], { description: "null: any operation" }),
  allowedContractIds: Type.Union([Type.Array(Type.String()), Type.Null()], { description: "null: any contract" }),
  maxOperations: Type.Integer(),
  dailySpendLimit: Type.Union([stroops, Type.Null()], { description: "null: no limit" }),
});
export type PolicyView = Static<typeof PolicyView>;

export const PROJECT_POLICY_DEFAULTS: Policy = {
  requestsPerSecond: 50,
  burst: 100,
  maxFee: 10_000_000n,
  allowedOperations: null,
  allowedContractIds: null,
  maxOperations: MAX_OPS_PER_TX,
  dailySpendLimit: null,
};
/** The open testnet relay's defaults, per client IP (ANONYMOUS_POLICY overrides them). */
export const ANONYMOUS_POLICY_DEFAULTS: Policy = {
  requestsPerSecond: 2,
  burst: 10,
  maxFee: 1_000_000n,
  allowedOperations: null,
  allowedContractIds: null,
  maxOperations: MAX_OPS_PER_TX,
  dailySpendLimit: 100_000_000n,
};

/** Applies a patch to stored overrides: given fields replace, nulls remove. */
export function mergeOverrides(current: PolicyOverrides, patch: PolicyPatch): PolicyOverrides {
  const next: Record<string, unknown> = { ...current };
  for (const [k, v] of Object.entries(patch)) {
    if (v === undefined) continue;
    if (v === null) delete next[k];
    else next[k] = v;
  }
  return next as PolicyOverrides;
}

export function effectivePolicy(defaults: Policy, o: PolicyOverrides): Policy {
  return {
    requestsPerSecond: o.requestsPerSecond ?? defaults.requestsPerSecond,
    burst: o.burst ?? defaults.burst,
    maxFee: o.maxFee != null ? BigInt(o.maxFee) : defaults.maxFee,
    allowedOperations: (o.allowedOperations as string[] | null | undefined) ?? defaults.allowedOperations,
    allowedContractIds: (o.allowedContractIds as string[] | null | undefined) ?? defaults.allowedContractIds,
    maxOperations: o.maxOperations ?? defaults.maxOperations,
    dailySpendLimit: o.dailySpendLimit != null ? BigInt(o.dailySpendLimit) : defaults.dailySpendLimit,
  };
}

export const policyView = (p: Policy): PolicyView => ({
  ...p,
  maxFee: p.maxFee.toString(),
  dailySpendLimit: p.dailySpendLimit === null ? null : p.dailySpendLimit.toString(),
});

/** What a sponsor request asks of a policy. */
export interface SpendRequest {
  operationTypes: string[];
  contractIds: (string | null)[];
  /** Fee at the lowest valid bid. */
  minFee: bigint;
  /** Fee at the highest bid the relay would escalate to. */
  maxFee: bigint;
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
