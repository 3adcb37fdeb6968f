/**
 * A project's policy: rate limit, fee cap, allowed operations and contracts, operation count, daily
 * spend and the low balance alert. Stored as overrides of the defaults; the effective policy is
 * defaults + overrides. On the wire, stroop amounts are decimal strings; inside they are bigint.
 */
import { type Static, Type } from "@sinclair/typebox";
import { EXPECTED, shaped } from "../../../kernel/wire.ts";
import { PolicyPatch as BasePolicyPatch } from "../project.model.ts";
import { RULES_PATCH, type ProjectPolicyView } from "../admin.model.ts";
import type { Policy } from "../../../../actors/projects/policy.ts";
import type { PolicyOverrides } from "../../../store/policy-overrides.ts";
import { MAX_OPS_PER_TX } from "../../../stellar/protocol.ts";
import { asFeeStrategy, DEFAULT_FEE_STRATEGY } from "../../tx/fee-strategy.ts";
import { effectiveApproval, effectivePerUser, effectiveRules, type RulesOverrides } from "./sponsorship-rules.ts";

export {
  checkRules,
  type Policy,
  type PolicyRule,
  type SpendRequest,
  type Violation,
} from "../../../../actors/projects/policy.ts";
export type { PolicyOverrides } from "../../../store/policy-overrides.ts";

export { OPERATION_TYPES } from "../project.model.ts";

/**
 * A project's policy change (the admin API's): src/features/projects/project.model.ts's fields and `lowBalanceAlert` (a
 * project's alone: the anonymous relay has no credits, so ANONYMOUS_POLICY takes the others only).
 */
export const PolicyPatch = Type.Object(
  {
    ...BasePolicyPatch.properties,
    lowBalanceAlert: Type.Optional(
      Type.Union([
        shaped("^[0-9]{1,18}$", EXPECTED.stroops, {
          description: "stroops (decimal string, at most 18 digits): a credits.low event when the balance falls below",
        }),
        Type.Null(),
      ]),
    ),
    ...RULES_PATCH,
  },
  { additionalProperties: false },
);
export type PolicyPatch = Static<typeof PolicyPatch>;

/** A project's testnet fees a day unless its policy or PROJECT_TESTNET_DAILY_SPEND_LIMIT say otherwise: 100 XLM. */
export const DEFAULT_TESTNET_DAILY_SPEND_LIMIT = 1_000_000_000n;

export const PROJECT_POLICY_DEFAULTS: Policy = {
  requestsPerSecond: 50,
  burst: 100,
  maxFee: 10_000_000n,
  allowedOperations: null,
  allowedContractIds: null,
  maxOperations: MAX_OPS_PER_TX,
  dailySpendLimit: null,
  testnetDailySpendLimit: DEFAULT_TESTNET_DAILY_SPEND_LIMIT,
  lowBalanceAlert: null,
  feeStrategy: DEFAULT_FEE_STRATEGY,
  allow: null,
  activeFrom: null,
  activeUntil: null,
  perUser: null,
  approval: null,
};
/** The project defaults with PROJECT_TESTNET_DAILY_SPEND_LIMIT (stroops, or `none`). */
export function projectPolicyDefaults(testnetDailySpendLimit: string): Policy {
  const limit = testnetDailySpendLimit === "none" ? null : BigInt(testnetDailySpendLimit);
  return { ...PROJECT_POLICY_DEFAULTS, testnetDailySpendLimit: limit };
}

/** The open testnet relay's defaults, per client IP (ANONYMOUS_POLICY overrides them). */
export const ANONYMOUS_POLICY_DEFAULTS: Policy = {
  requestsPerSecond: 2,
  burst: 10,
  maxFee: 1_000_000n,
  allowedOperations: null,
  allowedContractIds: null,
  maxOperations: MAX_OPS_PER_TX,
  dailySpendLimit: 100_000_000n,
  testnetDailySpendLimit: null, // testnet only: dailySpendLimit is the limit
  lowBalanceAlert: null,
  feeStrategy: DEFAULT_FEE_STRATEGY,
  allow: null,
  activeFrom: null,
  activeUntil: null,
  perUser: null,
  approval: null,
};

/** The anonymous relay's policy: its defaults with the ANONYMOUS_POLICY overrides (config's anonymousPolicyPatch). */
export function anonymousPolicy(patch: PolicyPatch): Policy {
  return effectivePolicy(ANONYMOUS_POLICY_DEFAULTS, mergeOverrides({}, patch));
}

/** Applies a patch to stored overrides: given fields replace, nulls remove. */
export function mergeOverrides(current: PolicyOverrides, patch: PolicyPatch): PolicyOverrides {
  const next: Record<string, unknown> = { ...current };
  for (const [k, v] of Object.entries(patch)) {
    if (v === undefined) continue;
    if (v === null) delete next[k];
    else next[k] = v;
  }
  // superseded: a list of contracts is kept as allow.contracts (without functions)
  if ("allowedContractIds" in next) {
    const ids = next.allowedContractIds as string[];
    delete next.allowedContractIds;
    if (patch.allow?.contracts === undefined)
      next.allow = { ...(next.allow as object | undefined), contracts: ids.map((contract) => ({ contract })) };
  } else if (patch.allowedContractIds === null && patch.allow === undefined && next.allow) {
    const { contracts: _, ...rest } = next.allow as Record<string, unknown>;
    next.allow = rest;
  }
  // an approval arrives here with its secret sealed (ProjectsService); never one without
  if (next.approval && !(next.approval as { sealedSecret?: string }).sealedSecret) delete next.approval;
  return next as PolicyOverrides;
}

export function effectivePolicy(defaults: Policy, o: PolicyOverrides | PolicyPatch): Policy {
  const rules = effectiveRules(o as RulesOverrides, defaults);
  return {
    requestsPerSecond: o.requestsPerSecond ?? defaults.requestsPerSecond,
    burst: o.burst ?? defaults.burst,
    maxFee: o.maxFee != null ? BigInt(o.maxFee) : defaults.maxFee,
    allowedOperations: (o.allowedOperations as string[] | null | undefined) ?? defaults.allowedOperations,
    maxOperations: o.maxOperations ?? defaults.maxOperations,
    dailySpendLimit: o.dailySpendLimit != null ? BigInt(o.dailySpendLimit) : defaults.dailySpendLimit,
    testnetDailySpendLimit:
      o.testnetDailySpendLimit != null ? BigInt(o.testnetDailySpendLimit) : defaults.testnetDailySpendLimit,
    lowBalanceAlert: o.lowBalanceAlert != null ? BigInt(o.lowBalanceAlert) : defaults.lowBalanceAlert,
    feeStrategy: o.feeStrategy != null ? asFeeStrategy(o.feeStrategy) : defaults.feeStrategy,
    ...rules,
    allowedContractIds: rules.allow?.contracts?.map((c) => c.contract) ?? null,
    perUser: effectivePerUser(o as RulesOverrides) ?? defaults.perUser,
    approval: effectiveApproval(o as RulesOverrides) ?? defaults.approval,
  };
}

export const policyView = (p: Policy): ProjectPolicyView => ({
  ...p,
  maxFee: p.maxFee.toString(),
  dailySpendLimit: p.dailySpendLimit === null ? null : p.dailySpendLimit.toString(),
  testnetDailySpendLimit: p.testnetDailySpendLimit === null ? null : p.testnetDailySpendLimit.toString(),
  lowBalanceAlert: p.lowBalanceAlert === null ? null : p.lowBalanceAlert.toString(),
  activeFrom: p.activeFrom === null ? null : new Date(p.activeFrom).toISOString(),
  activeUntil: p.activeUntil === null ? null : new Date(p.activeUntil).toISOString(),
  approval: p.approval && { url: p.approval.url, timeoutMs: p.approval.timeoutMs, onFailure: p.approval.onFailure },
  perUser: p.perUser && {
    ...(p.perUser.maxTransactionsPerDay !== null ? { maxTransactionsPerDay: p.perUser.maxTransactionsPerDay } : {}),
    ...(p.perUser.maxFeePerDay !== null ? { maxFeePerDay: p.perUser.maxFeePerDay.toString() } : {}),
  },
});
