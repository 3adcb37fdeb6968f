/**
 * X-Idempotency-Key: the same key (per caller) with the same body answers the first outcome
 * without a second submission, also while the first is still running and after a restart; with
 * another body it is IDEMPOTENCY_KEY_REUSED. Outcomes that invite a retry (NETWORK_UNAVAILABLE,
 * SUBMISSION_TIMEOUT) are not kept: the retry runs again, and the inner-hash rule keeps it from
 * paying twice.
 */
import { RelayError, isRetryable, validationError } from "../../kernel/errors.ts";
import type { IdempotencyStore } from "../../store/types.ts";
import { type Pending, Run } from "./run.ts";

/** 1 to 255 visible ASCII characters (also the OpenAPI document's pattern). */
export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

export function checkIdempotencyKey(key: string): void {
  if (!IDEMPOTENCY_KEY.test(key))
    throw validationError("X-Idempotency-Key must be 1 to 255 visible ASCII characters", {
      field: "X-Idempotency-Key",
      reason: "bad_idempotency_key",
    });
}

export const bodyHash = (body: unknown): string =>
  new Bun.CryptoHasher("sha256").update(JSON.stringify(body)).digest("hex");

/** A keyed request's answer: what it waits for, and whether the key was seen before (Idempotent-Replayed). */
export type Keyed = { pending: Pending; replayed: boolean };

/**
 * The keys of requests, in the database only (every instance sees them): a key seen with its
 * outcome replays it; a key whose request is still under way (or was cut off by a restart) starts
 * the request again, which joins the run of its transaction (one per inner hash) and so pays once.
 */
export class Idempotency {
  constructor(
    private readonly store: IdempotencyStore,
    private readonly ttlMs: number,
  ) {}

  /** Runs `start` once per (scope, key) and body; `replayed`: the key was used before. */
  async run(scope: string, key: string, hash: string, start: () => Promise<Pending>): Promise<Keyed> {
    const existing = await this.store.claimKey(scope, key, hash, this.ttlMs);
    if (existing) {
      if (existing.bodyHash !== hash) throw reused(key);
      if (existing.outcome) return { pending: Run.ended(existing.outcome), replayed: true };
    }
    const pending = await start();
    // the outcome is answered once it is kept: a request of the key after the answer replays it
    const outcome = pending.outcome.then(async (o) => {
      if (o.kind === "failure" && isRetryable(o.error.code)) await this.store.release(scope, key);
      else await this.store.complete(scope, key, o);
      return o;
    });
    // replayed: its key was claimed before and this request joined that request's run (not a restart's leftover)
    const replayed = existing !== null && pending.joined === true;
    return { pending: { accepted: pending.accepted, outcome, theirs: pending.theirs }, replayed };
  }
}

const reused = (key: string) =>
  new RelayError("IDEMPOTENCY_KEY_REUSED", "this X-Idempotency-Key was used with a different request body", { key });
