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

/**
 * Epoch ms of an ISO 8601 time whose every part is in range, else NaN: `2026-02-30` is no day (Date.parse
 * would roll it over to 2 March), nor is `2026-02-29`, an hour 24 or a minute 60.
 */
export function calendarTime(s: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?/.exec(s);
  const t = Date.parse(s);
  if (!m || Number.isNaN(t)) return Number.NaN;
  const [y, month, day, hour, minute, second] = m.slice(1).map((x) => Number(x ?? 0)) as number[];
  const days = new Date(Date.UTC(y!, month!, 0)).getUTCDate(); // day 0 of the next month: this one's last
  const inRange = month! >= 1 && month! <= 12 && day! >= 1 && day! <= days && hour! <= 23 && minute! <= 59;
  return inRange && second! <= 59 ? t : Number.NaN;
}

const time = (s: string | null | undefined): number | null => (s ? calendarTime(s) : null);

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
  const notADate = (field: string) =>
    `${field} is not a date of the calendar: the month must be 01 to 12, the day within its month ` +
    "(February has 28 days, 29 in a leap year), the hour 00 to 23, minutes and seconds 00 to 59";
  if (from !== null && Number.isNaN(from)) return notADate("activeFrom");
  if (until !== null && Number.isNaN(until)) return notADate("activeUntil");
  if (from !== null && until !== null && from >= until) return "activeFrom must come before activeUntil";
  return null;
}
