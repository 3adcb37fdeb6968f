/**
 * Outcomes of sponsor requests: what the relay answers for a transaction the network judged
 * (SUBMISSION_FAILED in plain words), errors as outcomes, which recorded outcomes stand, the 504 the
 * relay answers when it cannot know yet, and the identity (inner hash, status) every answer about a
 * transaction carries. A failure's status is the lifecycle machine's word for it
 * (actors/sponsor/submission.machine.ts), given where the verdict is read.
 */
import { RelayError } from "../../kernel/errors.ts";
import type { Outcome, SubmissionRecord } from "../../store/types.ts";
import type { ValidUntil } from "../../network/ledger-watcher.ts";
import { clientResultCodes } from "../../stellar/result-codes.ts";
import type { SubmissionStatus } from "../../../actors/sponsor/submission.machine.ts";

/** Ledgers after which no envelope sent before can be in any queue (dropped after 4, banned for 10). */
const QUEUE_LEDGERS = 12;

/** What a code most often means for the client that signed the transaction. */
const HINTS: Record<string, string> = {
  tx_bad_seq: "its sequence number is not its source account's next one: build it from the account's current sequence",
  tx_too_late: "its time bounds have passed: build it again with a later maxTime",
  tx_too_early: "its time bounds have not begun yet",
  tx_insufficient_balance: "its source account cannot keep its minimum balance",
  tx_no_source_account:
    "its source account does not exist on this network: create and fund it first (friendbot on testnet, a createAccount payment on mainnet)",
  op_no_source_account:
    "the operation's source account does not exist on this network: create and fund it first (friendbot on testnet, a createAccount payment on mainnet)",
  op_underfunded: "the paying account does not hold enough of the asset",
  op_no_destination: "the destination account does not exist (create it with createAccount)",
  op_low_reserve: "the account would fall below its minimum balance",
};

/**
 * SUBMISSION_FAILED for a result, in plain words: rejected before inclusion (with a hint for the
 * usual causes; `passphrase`: the network's, named when the signatures do not match), or
 * included and failed (`applied` adds ledger and fee: that fee was really paid). Its status says
 * which (`rejected` or `failed`), decided here, where the network's verdict is read.
 */
export function submissionFailed(
  hash: string,
  resultXdr: string,
  applied?: { ledger: number; feePaid: bigint },
  passphrase?: string,
): RelayError {
  const { network, ...result_codes } = clientResultCodes(resultXdr);
  const failing = (result_codes.operations ?? []).findIndex((c) => c !== "op_success");
  const code = failing >= 0 ? result_codes.operations![failing]! : result_codes.transaction;
  const what = failing >= 0 ? `${code} on operation ${failing}` : code;
  const hint = HINTS[code] ?? (code === "tx_bad_auth" ? badAuth(passphrase) : undefined);
  const said = applied
    ? `included in ledger ${applied.ledger} and failed: ${what}`
    : `the network rejected the transaction: ${what}${network === code ? "" : ` (${network})`}`;
  return new RelayError("SUBMISSION_FAILED", hint ? `${said}; ${hint}` : said, {
    result_codes,
    hash,
    status: (applied ? "failed" : "rejected") satisfies SubmissionStatus,
    ...(applied ? { ledger: applied.ledger, feePaid: applied.feePaid.toString(), resultXdr } : {}),
  });
}

const badAuth = (passphrase?: string) =>
  "its signatures do not authorize it: check the signing keys, and that it was signed for this network" +
  (passphrase ? ` (the relay uses the passphrase "${passphrase}")` : "");

/** A RelayError as an outcome (kept and replayed); anything else is a bug and is rethrown. */
export function outcomeOf(e: unknown): Outcome {
  if (e instanceof RelayError) return { kind: "failure", error: e.data() };
  throw e;
}

/** A recorded outcome that stands: a success, or a failure the network charged for (its sequence or nonce is spent). */
export function finalOutcome(prior: { outcome: Outcome | null; feeCharged: bigint | null } | null): Outcome | null {
  return prior?.outcome && (prior.outcome.kind === "success" || prior.feeCharged !== null) ? prior.outcome : null;
}

/** Whether an envelope of this submission may still be queued: sent, not released, within QUEUE_LEDGERS ledgers. */
export function mayStillBeQueued(r: SubmissionRecord, latestLedger: number): boolean {
  return !r.outcome && !r.releasedAt && r.sentLedger !== null && latestLedger <= r.sentLedger + QUEUE_LEDGERS;
}

/** What the relay bid and what the network cleared at, for a 504's message and details. */
export interface BidContext {
  /** The most the reservation allows, stroops per operation. */
  cap: bigint;
  /** What the last ledgers cleared at (stroops per operation, oldest first); empty when unknown. */
  cleared: readonly bigint[];
  strategy: string;
}

/** The market beside a bid: what the last ledgers cleared at (the highest), and whether the cap is under it. */
function market(bid?: BidContext): { cleared: bigint | null; text: string } {
  const cleared = bid?.cleared.length ? bid.cleared.reduce((a, b) => (a > b ? a : b)) : null;
  const text =
    cleared === null
      ? ""
      : `; the last ledgers cleared at up to ${cleared} stroops per operation` +
        (cleared > bid!.cap ? `, above the most the policy allows (${bid!.cap})` : "");
  return { cleared, text };
}

/** The bid's figures for an error's details (`rate` null: no fee-bump was sent, so there is no bid to quote). */
function bidDetails(rate: bigint | null, cleared: bigint | null, bid?: BidContext): Record<string, string> {
  if (!bid) return {};
  return {
    ...(rate === null ? {} : { bid: rate.toString() }),
    cap: bid.cap.toString(),
    strategy: bid.strategy,
    ...(cleared === null ? {} : { clearingRate: cleared.toString() }),
  };
}

/** 504: the relay cannot know the outcome yet; the client's retry (or recovery) finds it by the inner hash. */
export function timedOut(
  hash: string,
  rate: bigint,
  timeoutMs: number,
  reason?: string,
  accepted = false,
  bid?: BidContext,
): RelayError {
  const { cleared, text } = market(bid);
  const message =
    reason === "fee_cap_reached"
      ? `not in a ledger within ${timeoutMs} ms; the fee bid reached its cap of ${rate} stroops per operation${text}`
      : reason === "network_unavailable"
        ? "the network did not confirm receiving the transaction; retry to get its outcome"
        : `no confirmation within ${timeoutMs} ms (bid ${rate} stroops per operation${text})`;
  const status: SubmissionStatus = accepted ? "submitted" : "pending";
  const fees = bidDetails(rate, cleared, bid);
  return new RelayError("SUBMISSION_TIMEOUT", message, { hash, status, ...(reason ? { reason } : {}), ...fees });
}

/** Unix seconds as an ISO time, or as the number when no date can hold them (a far-off sentinel). */
function unixTime(seconds: bigint): string {
  const d = new Date(Number(seconds) * 1000);
  return Number.isFinite(d.getTime()) ? d.toISOString() : `${seconds} (unix seconds)`;
}

/**
 * SUBMISSION_FAILED with status `expired`: read up to `ledger` no ledger included the transaction, and
 * its time or ledger bounds have passed, so none will (tx_too_late). `rate`: the bid of the last fee-bump
 * sent; null when none was sent (its bounds passed first): no bid is quoted then.
 */
export function expired(
  hash: string,
  rate: bigint | null,
  ledger: number,
  bounds: ValidUntil,
  bid?: BidContext,
): RelayError {
  const { cleared, text } = market(bid);
  const until = [
    ...(bounds.maxTime > 0n ? [`maxTime ${unixTime(bounds.maxTime)}`] : []),
    ...(bounds.maxLedger > 0 ? [`maxLedger ${bounds.maxLedger}`] : []),
  ].join(", ");
  const message =
    `not included before its time bounds passed (${until}; ledger ${ledger} closed after them), ` +
    (rate === null
      ? "before the relay sent it (no fee-bump of it was sent)"
      : `with a bid of ${rate} stroops per operation`) +
    `${text}; build it again with a later maxTime`;
  return new RelayError("SUBMISSION_FAILED", message, {
    result_codes: { transaction: "tx_too_late" },
    hash,
    status: "expired" satisfies SubmissionStatus,
    ...(bounds.maxTime > 0n ? { maxTime: bounds.maxTime.toString() } : {}),
    ...(bounds.maxLedger > 0 ? { maxLedger: bounds.maxLedger } : {}),
    ...bidDetails(rate, cleared, bid),
  });
}

/**
 * An outcome about a transaction carries its inner hash (what the client signed) beside `hash` (the
 * fee-bump), and its status: a result is `success`; a failure keeps the status it was made with
 * (`failed`, `rejected`, `expired`, `pending`, `submitted`).
 */
export function withIdentity(o: Outcome, innerHash: string): Outcome {
  if (o.kind === "success") return { kind: "success", result: { ...o.result, innerHash, status: "success" } };
  const details = o.error.details as Record<string, unknown> | undefined;
  // an error about the request, not about a transaction (a refusal by the relay's rules, a busy pool)
  if (!details || (typeof details.hash !== "string" && o.error.code !== "SUBMISSION_FAILED")) return o;
  const status = details.status ?? recordedBefore(o.error.code, details);
  return { kind: "failure", error: { ...o.error, details: { ...details, innerHash, ...(status ? { status } : {}) } } };
}

/** The status of an outcome recorded before failures carried theirs. */
function recordedBefore(code: string, details: Record<string, unknown>): SubmissionStatus | undefined {
  if (code === "SUBMISSION_FAILED") return details.ledger === undefined ? "rejected" : "failed";
  return code === "SUBMISSION_TIMEOUT" ? "pending" : undefined;
}

/** What an outcome says of the sequence number it used: used on chain, refused before, or not known yet. */
export function sequenceUse(o: Outcome): "applied" | "rejected" | "out_of_order" | "unknown" {
  if (o.kind === "success") return "applied";
  const details = (o.error.details ?? {}) as { status?: string; result_codes?: { transaction?: string } };
  if (details.status === "failed") return "applied"; // included and failed: its number is used
  if (details.status !== "rejected" && details.status !== "expired") return "unknown"; // a retry may still come
  return details.result_codes?.transaction === "tx_bad_seq" ? "out_of_order" : "rejected";
}
