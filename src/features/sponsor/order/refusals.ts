/**
 * What the order flow answers a transaction it will not send (sequence-gate.ts): tx_bad_seq for a gap
 * never filled or a predecessor rejected, tx_too_late for one whose maxTime passed while held, and 429
 * past the limits of what may be held.
 */
import { waitsFor } from "../../../../actors/sponsor/account.machine.ts";
import { RelayError } from "../../../kernel/errors.ts";
import type { SubmissionStatus } from "../../../../actors/sponsor/submission.machine.ts";

const badSeq = (message: string, details: Record<string, unknown>) =>
  new RelayError("SUBMISSION_FAILED", message, {
    result_codes: { transaction: "tx_bad_seq" },
    status: "rejected" satisfies SubmissionStatus,
    ...details,
  });

/** `tx`: the held transaction (its account and sequence number). */
export function neverCame(tx: { account: string; seq: bigint }, chain: bigint | null, holdMs: number): RelayError {
  const wanted = waitsFor(tx.seq);
  return badSeq(
    `held for sequence number ${wanted} of ${tx.account}, which never came (${Math.round(holdMs / 1000)} s ` +
      "without progress on the account): send the missing transaction first, or build this one from the " +
      "account's current sequence",
    {
      reason: "sequence_gap",
      account: tx.account,
      sequence: String(tx.seq),
      waitingFor: String(wanted),
      ...(chain !== null ? { accountSequence: String(chain) } : {}),
    },
  );
}

/**
 * `tx` was held for its predecessor until its own maxTime passed: in no ledger, and none can include it
 * now (expired), whatever its predecessor does later.
 */
export function passedWhileHeld(tx: { account: string; seq: bigint; maxTime: bigint }): RelayError {
  const wanted = waitsFor(tx.seq);
  const maxTime = new Date(Number(tx.maxTime) * 1000).toISOString();
  return new RelayError(
    "SUBMISSION_FAILED",
    `its maxTime (${maxTime}) passed while it was held for sequence number ${wanted} of ${tx.account}: ` +
      "no ledger included it, and none can now; build it again with a later maxTime",
    {
      result_codes: { transaction: "tx_too_late" },
      status: "expired" satisfies SubmissionStatus,
      maxTime: tx.maxTime.toString(),
      account: tx.account,
      sequence: String(tx.seq),
      waitingFor: String(wanted),
    },
  );
}

export function predecessorRejected(account: string, rejected: bigint): RelayError {
  return badSeq(
    `its predecessor, sequence number ${rejected} of ${account}, was rejected before any ledger and used no ` +
      "number: this one can never be next (send a valid transaction with that number, then this one again)",
    { reason: "predecessor_rejected", account, rejected: String(rejected) },
  );
}

/** Past the transactions a payer or an account may have held at once. */
export function tooMany(tx: { account: string }, which: "payer" | "account", limit: number): RelayError {
  return new RelayError(
    "RATE_LIMIT_EXCEEDED",
    `${limit} transactions are held already for ${which === "payer" ? "this project" : `account ${tx.account}`}, ` +
      "each waiting for its predecessor: send more once some are answered",
    { reason: which === "payer" ? "too_many_held" : "too_many_held_for_account", limit, account: tx.account },
    { retryAfter: 1 },
  );
}

/** Past the bytes of transactions a payer may have held at once. */
export function tooManyBytes(tx: { account: string; bytes: number }, held: number, limit: number): RelayError {
  return new RelayError(
    "RATE_LIMIT_EXCEEDED",
    `the transactions held for this project, each waiting for its predecessor, take ${held} bytes; ` +
      `with this one's ${tx.bytes} they would pass the ${limit} it may hold: send more once some are answered`,
    { reason: "too_many_held_bytes", limit, account: tx.account },
    { retryAfter: 1 },
  );
}
