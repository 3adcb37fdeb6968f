/**
 * A project's (or an anonymous client's) rate limit: a token bucket of `burst` tokens, refilled at
 * `requestsPerSecond`. Every /v1 request takes one token, before anything else. Pure: the caller
 * keeps the bucket (a value) and passes the time. It is not an event of the project's actor: an
 * event costs the actor's interpretation (tens of µs under load), the bucket a few operations, and
 * the actor's other state (policy, credits, spends) has no part in a token (docs/performance.md).
 */
import type { Policy } from "./policy.ts";
import type { ReplyError } from "./project.machine.ts";

export interface Bucket {
  /** Tokens left at `refilledAt` (fractional: refilled continuously). */
  tokens: number;
  refilledAt: number;
}

/** The RateLimit headers' figures. */
export interface RateState {
  limit: number;
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
}

type Rate = Pick<Policy, "burst" | "requestsPerSecond">;

/** One request's token: taken (with the rate state after it), or refused with what is left. */
export type Taken = { ok: true; rate: RateState } | { ok: false; error: ReplyError; rate: RateState };

/** A full bucket at `now` (a new project or client). */
export const fullBucket = (policy: Rate, now: number): Bucket => ({ tokens: policy.burst, refilledAt: now });

/** The tokens in the bucket at `now` (at most `burst`: a smaller burst set meanwhile caps them). */
export function refilled(b: Bucket, policy: Rate, now: number): number {
  const elapsed = Math.max(0, now - b.refilledAt) / 1000;
  return Math.min(policy.burst, b.tokens + elapsed * policy.requestsPerSecond);
}

/** Whether the bucket is full again at `now` (a client that can be forgotten loses nothing of it). */
export const isFull = (b: Bucket, policy: Rate, now: number): boolean => refilled(b, policy, now) >= policy.burst;

/** One token taken at `now`: the bucket after it, and the request's answer. */
export function take(b: Bucket, policy: Rate, now: number): { bucket: Bucket; taken: Taken } {
  const tokens = refilled(b, policy, now);
  const bucket = { tokens: tokens >= 1 ? tokens - 1 : tokens, refilledAt: now };
  const rate = rateState(policy, bucket.tokens);
  const taken: Taken = tokens >= 1 ? { ok: true, rate } : { ok: false, error: rateLimited(policy, tokens), rate };
  return { bucket, taken };
}

/** The RateLimit headers' figures with `tokens` left. */
export function rateState(policy: Rate, tokens: number): RateState {
  return {
    limit: policy.burst,
    remaining: Math.floor(tokens),
    resetSeconds: Math.ceil((policy.burst - tokens) / policy.requestsPerSecond),
  };
}

/** RATE_LIMIT_EXCEEDED with `tokens` left in the bucket. */
export function rateLimited(policy: Rate, tokens: number): ReplyError {
  const retryAfterSeconds = Math.max(1, Math.ceil((1 - tokens) / policy.requestsPerSecond));
  return {
    code: "RATE_LIMIT_EXCEEDED",
    message: `rate limit of ${policy.requestsPerSecond} requests per second (burst ${policy.burst}) exceeded; retry in ${retryAfterSeconds} s`,
    details: { limit: policy.burst, requestsPerSecond: policy.requestsPerSecond, retryAfter: retryAfterSeconds },
    retryAfterSeconds,
  };
}
