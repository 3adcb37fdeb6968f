/**
 * A submission's lifecycle: the only place its status changes. No I/O and no context: the store
 * asks it, for each event, which status follows which (`nextStatus`, and `statusTable` to write the
 * change in the same statement as what caused it), and writes an event for each change.
 *
 * - pending: accepted by the relay (its intent is written), not yet by the network;
 * - submitted: the network accepted a fee-bump of it (PENDING or DUPLICATE);
 * - success / failed: included in a ledger, and the transaction succeeded / failed (final: the
 *   chain does not change its mind);
 * - rejected: refused before inclusion (tx_bad_seq, tx_bad_auth, …);
 * - expired: no envelope of it can be in a queue any more and it was in no ledger (recovery).
 *
 * A rejected or expired submission is not final for the relay: a client's retry sends it again
 * (SEND: back to pending), and a later look on the network may still find it in a ledger (the
 * network is believed over an earlier verdict).
 */
import { getNextSnapshot, setup } from "xstate";

export const STATUSES = ["pending", "submitted", "success", "failed", "rejected", "expired"] as const;
export type SubmissionStatus = (typeof STATUSES)[number];

/** Statuses a look-up's wait ends at. */
export const SETTLED_STATUSES: readonly SubmissionStatus[] = ["success", "failed", "rejected", "expired"];

export type SubmissionEvent =
  /** An intent written before an envelope is sent (a first send, a replacement, a client's retry). */
  | { type: "SEND" }
  /** The network took a fee-bump (PENDING or DUPLICATE). */
  | { type: "ACCEPTED" }
  /** In a ledger: the transaction succeeded. */
  | { type: "SUCCEEDED" }
  /** In a ledger: the transaction failed (its fee was charged). */
  | { type: "FAILED" }
  /** Refused before inclusion, for good as far as this attempt goes. */
  | { type: "REJECTED" }
  /** Nothing of it can be queued any more, and it is in no ledger. */
  | { type: "EXPIRED" };

const included = { SUCCEEDED: "#submission.success", FAILED: "#submission.failed" } as const;

export const submissionMachine = setup({ types: { events: {} as SubmissionEvent } }).createMachine({
  id: "submission",
  initial: "pending",
  states: {
    pending: { on: { ...included, ACCEPTED: "submitted", REJECTED: "rejected", EXPIRED: "expired" } },
    submitted: { on: { ...included, REJECTED: "rejected", EXPIRED: "expired" } },
    success: { type: "final" },
    failed: { type: "final" },
    rejected: { on: { ...included, SEND: "pending" } },
    expired: { on: { ...included, SEND: "pending" } },
  },
});

/** The status after `event` (the same status when the event changes nothing there). */
export function nextStatus(status: SubmissionStatus, event: SubmissionEvent["type"]): SubmissionStatus {
  const from = submissionMachine.resolveState({ value: status });
  return getNextSnapshot(submissionMachine, from, { type: event }).value as SubmissionStatus;
}

/** For one event: each status it changes, and to what (the pairs of `nextStatus` that differ). */
export function statusTable(event: SubmissionEvent["type"]): [SubmissionStatus, SubmissionStatus][] {
  return STATUSES.map((s) => [s, nextStatus(s, event)] as [SubmissionStatus, SubmissionStatus]).filter(
    ([a, b]) => a !== b,
  );
}
