/** The rate limit's token bucket (a value, the time passed in): burst, refill, Retry-After, a smaller burst. */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { type Bucket, fullBucket, isFull, take } from "../../actors/projects/rate-bucket.ts";

const T0 = Date.UTC(2026, 10, 22, 12);

/** Takes one token at each instant from `bucket`; the answers, and the bucket after them. */
function takes(bucket: Bucket, policy: { burst: number; requestsPerSecond: number }, instants: number[]) {
  const answers = [];
  for (const now of instants) {
    const r = take(bucket, policy, now);
    bucket = r.bucket;
    answers.push(r.taken);
  }
  return { answers, bucket };
}

describe("take: one token", () => {
  test("a burst passes, the next is refused with Retry-After, tokens refill at the sustained rate", () => {
    const policy = { requestsPerSecond: 2, burst: 3 };
    const { answers, bucket } = takes(fullBucket(policy, T0), policy, [T0, T0, T0, T0]);
    expect(answers.map((a) => a.ok)).toEqual([true, true, true, false]);
    expect(answers.map((a) => a.rate.remaining)).toEqual([2, 1, 0, 0]);
    const refused = answers[3]!;
    expect(!refused.ok && refused.error).toMatchObject({ code: "RATE_LIMIT_EXCEEDED", retryAfterSeconds: 1 });
    const later = takes(bucket, policy, [T0 + 499, T0 + 500]).answers;
    expect(later.map((a) => a.ok)).toEqual([false, true]); // 0.5 s x 2/s = 1 token
    expect(take(bucket, policy, T0 + 60_000).taken.rate).toEqual({ limit: 3, remaining: 2, resetSeconds: 1 });
  });

  test("Retry-After is whole seconds, at least 1, for slow rates", () => {
    const policy = { requestsPerSecond: 0.1, burst: 1 };
    const r = takes(fullBucket(policy, T0), policy, [T0, T0 + 1000]).answers[1]!;
    expect(!r.ok && r.error.retryAfterSeconds).toBe(9);
  });

  test("a smaller burst set meanwhile caps the tokens; a bucket is full again after burst / rate", () => {
    const bucket = fullBucket({ requestsPerSecond: 1, burst: 10 }, T0);
    const smaller = { requestsPerSecond: 1, burst: 4 };
    expect(take(bucket, smaller, T0).taken.rate.remaining).toBe(3);
    const empty = takes(bucket, smaller, [T0, T0, T0, T0]).bucket;
    expect(isFull(empty, smaller, T0 + 3_999)).toBe(false);
    expect(isFull(empty, smaller, T0 + 4_000)).toBe(true);
  });

  test("never more than burst + rate x elapsed taken; a refusal leaves no whole token", () => {
    const arb = fc.record({
      burst: fc.integer({ min: 1, max: 6 }),
      perSecond: fc.integer({ min: 1, max: 5 }),
      gaps: fc.array(fc.integer({ min: 0, max: 1500 }), { minLength: 1, maxLength: 40 }),
    });
    fc.assert(
      fc.property(arb, ({ burst, perSecond, gaps }) => {
        const policy = { burst, requestsPerSecond: perSecond };
        let now = T0;
        const instants = gaps.map((g) => (now += g));
        const { answers } = takes(fullBucket(policy, T0), policy, instants);
        const taken = answers.filter((a) => a.ok).length;
        expect(taken).toBeLessThanOrEqual(burst + ((now - T0) / 1000) * perSecond);
        for (const a of answers) if (!a.ok) expect(a.rate.remaining).toBe(0);
      }),
    );
  });
});
