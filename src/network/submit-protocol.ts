/**
 * What the submit loop (submitter.ts) is given and what it answers: its retry policy, one
 * submission to get into a ledger, the steps it asks its caller for, and what became of it.
 */
import type { Confirmed, ValidUntil } from "./ledger-watcher.ts";
import type { Signed } from "../stellar/envelope.ts";

export interface RetryPolicy {
  /** How long TRY_AGAIN_LATER is retried before the submission is given up as busy. */
  tryAgainLaterMs: number;
  /** Sequence number re-reads after tx_bad_seq. */
  badSeqRetries: number;
  /** Ledgers a fee-bump waits in the queue before it is replaced by fee. */
  replaceAfterLedgers: number;
  /** A replacement bids this many times the rate it replaces (stellar-core's FEE_MULTIPLIER). */
  replaceMultiplier: bigint;
  /** Sends of the same envelope again after a send whose answer was lost. */
  lostAnswerResends: number;
}

/**
 * stellar-core drops a queued transaction after 4 ledgers, a replacement keeps the age of the one it
 * replaces, and it is taken only when it bids 10x: hence 2 ledgers and 10x.
 */
export const RETRY_POLICY: RetryPolicy = {
  tryAgainLaterMs: 2_000,
  badSeqRetries: 3,
  replaceAfterLedgers: 2,
  replaceMultiplier: 10n,
  lostAnswerResends: 1,
};

/** One transaction to get into a ledger. */
export interface SendRequest {
  /**
   * A fee-bump's inner hash: the submission is watched by it (any wrapping that lands answers),
   * replaced by fee when it waits, and wrapped anew after TRY_AGAIN_LATER. Absent: the
   * transaction is watched by its own hash.
   */
  innerHash?: string;
  /** The first bid and the highest (stroops per operation). */
  rate: bigint;
  cap: bigint;
  /** Missed ledgers before a fee-bump is replaced by fee (default: the retry policy's). */
  replaceAfterLedgers?: number;
  /** Give up waiting at this time (Date.now() ms): the answer is then `unknown`. */
  deadline: number;
  /** A fee-bump's inner time and ledger bounds: once a ledger past them is read without it, it has expired. */
  validUntil?: ValidUntil;
  /** An earlier run of this submission may be queued or applied: errors are checked, not believed. */
  resumed?: { hash: string; envelope?: Signed };
  /** The caller can re-read the source's sequence number after tx_bad_seq (else tx_bad_seq is final). */
  resyncable?: boolean;
}

/**
 * What a run asks of its caller, in turn; the caller answers each by the next `next()`:
 * - build: the envelope bidding `rate` (answer: Signed);
 * - record: about to send `envelope` (the caller writes its intent first; answer: nothing);
 * - accepted: the network took the envelope `hash` (PENDING or DUPLICATE; answer: nothing);
 * - resync: re-read the source's sequence number after tx_bad_seq (answer: nothing);
 * - lookup: the relay's own applied transaction with this inner or envelope hash (answer:
 *   Confirmed or null; a failed look-up is thrown into the run).
 * A failure of the caller's is thrown into the run (`throw()`), which ends it unless it can go on.
 */
export type Step =
  | { kind: "build"; rate: bigint }
  | { kind: "record"; envelope: Signed; hash: string; rate: bigint }
  | { kind: "accepted"; hash: string; answer: "PENDING" | "DUPLICATE" }
  | { kind: "resync" }
  | { kind: "lookup"; hash: string };
export type StepAnswer = Signed | Confirmed | null | undefined;
export type Steps = AsyncGenerator<Step, Verdict, StepAnswer>;

/** The network's verdict on a send. `accepted`: the network took (or applied) an envelope of this run. */
export type Verdict =
  | { kind: "applied"; confirmed: Confirmed }
  /** Refused, and nothing of it can be queued any more. */
  | { kind: "rejected"; hash: string; resultXdr: string; accepted: boolean }
  /** The deadline passed (or the network could not be asked) while something of it may still land. */
  | {
      kind: "unknown";
      hash: string;
      rate: bigint;
      reason?: "fee_cap_reached" | "network_unavailable";
      accepted: boolean;
    }
  /** TRY_AGAIN_LATER for longer than the policy allows, and nothing of it was ever taken. */
  | { kind: "busy"; hash: string }
  /** Its bounds passed while the network held it, and no ledger up to then included it: none ever will. */
  | { kind: "expired"; hash: string; rate: bigint; accepted: boolean; ledger: number };
