/**
 * X-Idempotency-Key: the same key (per caller) with the same body answers the first outcome
 * without a second submission, also while the first is still running and after a restart; with
 * another body it is IDEMPOTENCY_KEY_REUSED. Outcomes that invite a retry (NETWORK_UNAVAILABLE,
 * SUBMISSION_TIMEOUT) are not kept: the retry runs again, and the inner-hash rule keeps it from
 * paying twice.
 */
import { RelayError, isRetryable, validationError } from "../../kernel/errors.ts";
import type { IdempotencyStore, Outcome } from "../../store/types.ts";

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

type Run = { outcome: Outcome; replayed: boolean };

/**
 * Progress of a run before its outcome (the network's acceptance, for the asynchronous mode): the
 * first notice is kept and told to every request of the key, those that join later at once.
 */
class Progress<A> {
  private notice: A | undefined;
  private readonly listeners = new Set<(a: A) => void>();

  tell = (a: A): void => {
    if (this.notice !== undefined) return;
    this.notice = a;
    for (const l of this.listeners) l(a);
    this.listeners.clear();
  };

  listen(l?: (a: A) => void): void {
    if (!l) return;
    if (this.notice !== undefined) l(this.notice);
    else this.listeners.add(l);
  }
}

export class Idempotency {
  private readonly inflight = new Map<string, { bodyHash: string; run: Promise<Run>; progress: Progress<unknown> }>();

  constructor(
    private readonly store: IdempotencyStore,
    private readonly ttlMs: number,
  ) {}

  /**
   * Runs `fn` once per (scope, key); `replayed` is true when the outcome is an earlier one. What
   * the run tells of its progress (`fn`'s argument) reaches `onProgress` of this request and of
   * every request that joins it while it runs.
   */
  async run<A>(
    scope: string,
    key: string,
    hash: string,
    fn: (progress: (a: A) => void) => Promise<Outcome>,
    onProgress?: (a: A) => void,
  ): Promise<Run> {
    const id = `${scope}\u0000${key}`;
    const running = this.inflight.get(id);
    if (running) {
      if (running.bodyHash !== hash) throw reused(key);
      (running.progress as Progress<A>).listen(onProgress);
      return { outcome: (await running.run).outcome, replayed: true };
    }
    const progress = new Progress<A>();
    progress.listen(onProgress);
    // registered before the first await, so that concurrent requests in this process wait for it
    const run = this.claimAndRun(scope, key, hash, () => fn(progress.tell)).finally(() => this.inflight.delete(id));
    this.inflight.set(id, { bodyHash: hash, run, progress: progress as Progress<unknown> });
    return run;
  }

  private async claimAndRun(scope: string, key: string, hash: string, fn: () => Promise<Outcome>): Promise<Run> {
    const existing = await this.store.claim(scope, key, hash, this.ttlMs);
    if (existing) {
      if (existing.bodyHash !== hash) throw reused(key);
      if (existing.outcome) return { outcome: existing.outcome, replayed: true };
      // claimed earlier but never answered (a restart mid-request): run it; the inner-hash rule prevents a second payment
    }
    const outcome = await fn();
    if (outcome.kind === "failure" && isRetryable(outcome.error.code)) await this.store.release(scope, key);
    else await this.store.complete(scope, key, outcome);
    return { outcome, replayed: false };
  }
}

const reused = (key: string) =>
  new RelayError("IDEMPOTENCY_KEY_REUSED", "this X-Idempotency-Key was used with a different request body", { key });
