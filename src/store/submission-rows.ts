/**
 * A submission's row read into a SubmissionRecord: as drizzle selects it (`record`), and as the batched
 * look-up by inner hash returns it (`rowRecord`, from submissions.sql.ts's submissionsByInnerHash).
 */
import { readOutcome } from "./outcome-codec.ts";
import type { submissions } from "./schema.ts";
import type { HeldTx, SubmissionRecord } from "./types.ts";

export function record(r: typeof submissions.$inferSelect): SubmissionRecord {
  return {
    id: r.id,
    network: r.network,
    innerHash: r.innerHash,
    hash: r.hash,
    caller: r.caller,
    projectId: r.projectId,
    maxFee: r.maxFee,
    envelope: r.envelope,
    sentLedger: r.sentLedger,
    releasedAt: r.releasedAt,
    outcome: readOutcome(r.outcome),
    feeCharged: r.feeCharged,
    userHold: r.userHold ? { day: r.userHold.day, grant: BigInt(r.userHold.grant) } : null,
    held: r.held ?? null,
  };
}

/** A submission's row as `submissionsByInnerHash` reads it. */
export interface SubmissionRow {
  id: string;
  network: string;
  inner_hash: string;
  hash: string;
  caller: string;
  project_id: string | null;
  max_fee: string;
  envelope: string | null;
  sent_ledger: number | null;
  released_ms: number | null;
  outcome: unknown;
  fee_charged: string | null;
  status: string;
  user_hold: { day: string; grant: string } | string | null;
  held: HeldTx | string | null;
}

export function rowRecord(r: SubmissionRow): SubmissionRecord {
  return {
    id: r.id,
    network: r.network,
    innerHash: r.inner_hash,
    hash: r.hash,
    caller: r.caller,
    projectId: r.project_id,
    maxFee: BigInt(r.max_fee),
    envelope: r.envelope,
    sentLedger: r.sent_ledger,
    releasedAt: r.released_ms === null ? null : new Date(r.released_ms),
    outcome: readOutcome(r.outcome),
    feeCharged: r.fee_charged === null ? null : BigInt(r.fee_charged),
    userHold: userHoldOf(r.user_hold),
    held: typeof r.held === "string" ? (JSON.parse(r.held) as HeldTx) : r.held,
    status: r.status,
  };
}

/** A row's user_hold (jsonb: an object, or its text on drivers that return text). */
function userHoldOf(v: SubmissionRow["user_hold"]): SubmissionRecord["userHold"] {
  if (!v) return null;
  const h = typeof v === "string" ? (JSON.parse(v) as { day: string; grant: string }) : v;
  return { day: h.day, grant: BigInt(h.grant) };
}
