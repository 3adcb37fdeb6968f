/**
 * Outcomes as stored (JSON). Rows written before outcomes were domain data hold the HTTP answer
 * instead, `{ status, body }` with the error's `headers`: they are read back as the same outcome,
 * so that they replay exactly as they were first answered.
 */
import type { ErrorCode } from "../kernel/errors.ts";
import type { Outcome, SponsorResult } from "./types.ts";

interface LegacyOutcome {
  status: number;
  body: {
    code?: ErrorCode;
    message?: string;
    details?: Record<string, unknown>;
    headers?: Record<string, string>;
  };
}

export function readOutcome(raw: unknown): Outcome | null {
  if (raw === null || raw === undefined) return null;
  if (typeof raw === "object" && "kind" in raw) return raw as Outcome;
  const { status, body } = raw as LegacyOutcome;
  if (status === 200) return { kind: "success", result: body as unknown as SponsorResult };
  const retryAfter = body.headers?.["Retry-After"];
  return {
    kind: "failure",
    error: {
      code: body.code ?? "INTERNAL_ERROR",
      message: body.message ?? "",
      ...(body.details ? { details: body.details } : {}),
      ...(retryAfter !== undefined ? { retryAfter: Number(retryAfter) } : {}),
    },
  };
}
