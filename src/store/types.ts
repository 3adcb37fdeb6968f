/** What the relay keeps durably: submission intents and outcomes, and idempotency records. */

/** An HTTP outcome as it was answered (replayed verbatim). */
export interface Outcome {
  status: number;
  body: unknown;
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
  maxFee: bigint;
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

export interface SubmissionRecord extends SubmissionIntent {
  outcome: Outcome | null;
  feeCharged: bigint | null;
}

export interface SubmissionStore {
  /**
   * Writes the intent before the fee-bump is sent (a resend with a new hash updates it) and, with a
   * `hold`, journals the credit reservation unless one is still outstanding; true when it did.
   */
  recordIntent(s: SubmissionIntent, hold?: bigint): Promise<boolean>;
  /**
   * Records the outcome; with `credits` (a network where credits apply), a reserved submission's
   * reservation is released and the fee charged.
   */
  recordOutcome(id: string, outcome: Outcome, feeCharged: bigint | null, credits: boolean): Promise<SettledCredits>;
  /** Releases an outstanding reservation of a submission the network never accepted. */
  releaseOutstanding(id: string): Promise<bigint>;
  /** The latest submission of an inner transaction on a network. */
  byInnerHash(network: string, innerHash: string): Promise<SubmissionRecord | null>;
}

export interface IdempotencyRecord {
  bodyHash: string;
  outcome: Outcome | null;
}

export interface IdempotencyStore {
  /** Claims (scope, key) for a body; returns the existing record when the key is already taken. */
  claim(scope: string, key: string, bodyHash: string, ttlMs: number): Promise<IdempotencyRecord | null>;
  complete(scope: string, key: string, outcome: Outcome): Promise<void>;
  /** Forgets a claim whose request ended without an answer worth replaying. */
  release(scope: string, key: string): Promise<void>;
}
