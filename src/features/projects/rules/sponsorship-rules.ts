/**
 * A project's sponsorship rules beyond limits and fees: allowlists (`allow`), a time window
 * (`activeFrom`, `activeUntil`) and per end-user caps (`perUser`): how what is stored becomes the
 * policy the project's actor applies. Their wire shapes are src/features/projects/admin.model.ts's (RULES_PATCH, RULES_VIEW).
 */
import type { Allow, Policy } from "../../../../actors/projects/policy.ts";
import { DEFAULT_APPROVAL_TIMEOUT_MS } from "./approval.ts";

export interface PerUser {
  maxTransactionsPerDay: number | null;
  maxFeePerDay: bigint | null;
}

/** What is stored (policy overrides, jsonb) for these rules. */
export interface RulesOverrides {
  allow?: Allow;
  activeFrom?: string;
  activeUntil?: string;
  perUser?: { maxTransactionsPerDay?: number; maxFeePerDay?: string };
  approval?: { url: string; timeoutMs?: number; onFailure?: "deny" | "approve"; sealedSecret: string };
  /** Superseded by allow.contracts (read as a list without functions). */
  allowedContractIds?: string[];
}

const time = (s: string | null | undefined): number | null => (s ? Date.parse(s) : null);

/** The rules of the effective policy from the stored overrides (allowedContractIds read as allow.contracts). */
export function effectiveRules(
  o: RulesOverrides,
  defaults: Policy,
): Pick<Policy, "allow" | "activeFrom" | "activeUntil"> {
  let allow = o.allow ?? defaults.allow;
  if (!allow?.contracts && o.allowedContractIds)
    allow = { ...allow, contracts: o.allowedContractIds.map((contract) => ({ contract })) };
  return {
    allow: allow ?? null,
    activeFrom: time(o.activeFrom) ?? defaults.activeFrom,
    activeUntil: time(o.activeUntil) ?? defaults.activeUntil,
  };
}

export function effectiveApproval(o: RulesOverrides): Policy["approval"] {
  if (!o.approval?.sealedSecret) return null;
  return {
    url: o.approval.url,
    timeoutMs: o.approval.timeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS,
    onFailure: o.approval.onFailure ?? "deny",
    sealedSecret: o.approval.sealedSecret,
  };
}

export function effectivePerUser(o: RulesOverrides): PerUser | null {
  if (!o.perUser) return null;
  return {
    maxTransactionsPerDay: o.perUser.maxTransactionsPerDay ?? null,
    maxFeePerDay: o.perUser.maxFeePerDay !== undefined ? BigInt(o.perUser.maxFeePerDay) : null,
  };
}

/** A patch's time window is checked as a whole: a start after its end is refused. */
export function windowProblem(from: number | null, until: number | null): string | null {
  if (from !== null && Number.isNaN(from)) return "activeFrom is not a date";
  if (until !== null && Number.isNaN(until)) return "activeUntil is not a date";
  if (from !== null && until !== null && from >= until) return "activeFrom must come before activeUntil";
  return null;
}
