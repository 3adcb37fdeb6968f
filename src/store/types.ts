/** What the relay keeps durably: submission intents and outcomes, and idempotency records. */
import type { ErrorData } from "../kernel/errors.ts";

/** What the network did with a sponsored transaction (its wire model is src/features/projects/project.model.ts's). */
/**
 * What the network did with a sponsored transaction, as recorded and answered (its wire model, with
 * descriptions, is sponsor.model.ts's SponsorResult: the same fields).
 */
export interface SponsorResult {
  hash: string;
  innerHash?: string;
  status?: "success";
  feePaid: string;
  ledger: number;
  resultXdr: string;
}

/** The outcome of a sponsor request, kept and replayed: a result, or the error it was answered with. */
export type Outcome = { kind: "success"; result: SponsorResult } | { kind: "failure"; error: ErrorData };

/** A transaction held for its predecessor and not sent yet (order flow), as its row keeps it. */
export interface HeldTx {
  /** The client's transaction as it came (base64 XDR). */
  transaction: string;
  /** Its source account and sequence number (a decimal string). */
  account: string;
  sequence: string;
}

export interface SubmissionIntent {
  id: string;
  network: string;
  innerHash: string;
  /** Hash of the fee-bump sent. */
  hash: string;
  caller: string;
  /** The paying project; null for anonymous callers. */
  projectId: string | null;
  /** Its end user (the inner source, or a func+auth call's signer when known); absent or null: not known. */
  endUser?: string | null;
  /** Its admission's hold on its end user's day (perUser caps), until its outcome is known. */
  userHold?: { day: string; grant: bigint } | null;
  maxFee: bigint;
  /** The envelope sent (base64) and the network's latest ledger then; null while it is held. */
  envelope: string | null;
  sentLedger: number | null;
  /** The envelope's inclusion fee bid (stroops per operation) and the channel account paying it: its attempt (null: held). */
  feeBid: bigint | null;
  channel: string | null;
  /** Held for its predecessor, nothing of it sent yet (order flow): what recovery needs to send it. */
  held?: HeldTx | null;
}

/** What settling a submission did to its project's credit journal. */
export interface SettledCredits {
  /** The submission's project (the one whose reservation was outstanding). */
  projectId?: string | null;
  /** The reservation given back (journaled earlier with the intent). */
  released: bigint;
  /** The fee charged to the credits. */
  charged: bigint;
}

export interface SubmissionRecord extends Omit<SubmissionIntent, "envelope" | "sentLedger" | "feeBid" | "channel"> {
  /** Null for a row written before envelopes were kept. */
  envelope: string | null;
  sentLedger: number | null;
  /** When recovery gave its reservation back (nothing of it can be queued); null otherwise. */
  releasedAt: Date | null;
  outcome: Outcome | null;
  feeCharged: bigint | null;
  /** Its lifecycle status (actors/sponsor/submission.machine.ts), where the read says it. */
  status?: string;
}

export interface SubmissionStore {
  /**
   * Writes the intent before the fee-bump is sent (a resend with a new hash updates it) and, with a
   * `hold`, journals the credit reservation unless one is still outstanding; true when it did.
   * Where instances share the credits, a hold the journal's balance does not cover is refused
   * (throws INSUFFICIENT_CREDITS) and nothing is written. `fresh`: the first write of a submission
   * id no one else knows yet (nothing of it is in the database), which needs no row locks.
   */
  recordIntent(s: SubmissionIntent, hold?: bigint, fresh?: boolean): Promise<boolean>;
  /**
   * Records the outcome; with `credits` (a network where credits apply), a reserved submission's
   * reservation is released and the fee charged.
   */
  recordOutcome(id: string, outcome: Outcome, feeCharged: bigint | null, credits: boolean): Promise<SettledCredits>;
  /**
   * Gives back the outstanding reservation of a submission none of whose envelopes can be in a
   * queue any more, and marks it released (recovery passes it by until it is submitted again).
   * With `sentLedger`, only if it was not sent again since (recovery's read); a no-op otherwise.
   */
  release(id: string, sentLedger?: number | null): Promise<SettledCredits>;
  /** The network took the fee-bump `hash` (its answer: PENDING or DUPLICATE): the submission is submitted. */
  /**
   * Takes a submission's hold on its end user's day (`userHold`), once: whoever records its outcome
   * settles it. Null: none, or taken already.
   */
  takeUserHold(id: string): Promise<{ projectId: string; account: string; day: string; grant: bigint } | null>;
  recordAccepted(id: string, hash: string, answer: string): Promise<void>;
  /**
   * A transaction the relay refused before sending anything (its policy, its credits, a suspended
   * project...): kept as a rejected submission with the error it was answered, unless its inner
   * hash already has one (which it leaves as it is). `expired`: its bounds had passed (an expired one).
   */
  recordRefusal(r: {
    network: string;
    innerHash: string;
    caller: string;
    projectId: string | null;
    outcome: Outcome;
    expired?: boolean;
  }): Promise<void>;
  /** The latest submission of an inner transaction on a network. */
  byInnerHash(network: string, innerHash: string): Promise<SubmissionRecord | null>;
  /** Submissions with no outcome, not released, last written before `before` (oldest first); none held. */
  unsettled(network: string, before: Date, limit: number): Promise<SubmissionRecord[]>;
  /**
   * Submissions held for their predecessors that the relay still owes a send or an outcome (oldest
   * first): never sent (no envelope), or sent by a run that ended without answering (a crash).
   */
  held(network: string, limit: number): Promise<(SubmissionRecord & { held: HeldTx })[]>;
  /** A held submission's run answered 504: it is an unsettled submission like any other from now. */
  clearHeld(id: string): Promise<void>;
}

export interface IdempotencyRecord {
  bodyHash: string;
  outcome: Outcome | null;
}

export interface IdempotencyStore {
  /** Claims (scope, key) for a body; returns the existing record when the key is already taken. */
  claimKey(scope: string, key: string, bodyHash: string, ttlMs: number): Promise<IdempotencyRecord | null>;
  complete(scope: string, key: string, outcome: Outcome): Promise<void>;
  /** Forgets a claim whose request ended without an answer worth replaying. */
  release(scope: string, key: string): Promise<void>;
}
