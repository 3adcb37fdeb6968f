/**
 * Bounded streams and waiters. One project may hold EVENTS_STREAMS_PER_PROJECT streams open on an
 * instance (here 3): the next is 429 RATE_LIMIT_EXCEEDED saying which cap, with Retry-After, until
 * one closes. Look-ups with ?wait are capped per project (WAITERS_PER_PROJECT) and, without a key,
 * per client IP (WAITERS_PER_IP), the same way. A waiting look-up is woken by its transaction's
 * status events instead of reading the database every 200 ms: with WAIT_POLL_MS at a minute, the
 * submission is read about once while it waits (a spy on the real repository counts the reads), and
 * the answer comes once the ledger closes, long before the wait ends; anonymous submissions too.
 * Ledgers close only when the test says (LEDGER_CLOSE_MS=0).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SubmissionViews } from "../../src/features/transactions/submission-views.repo.ts";
import { expectError, until, xdrOf, type Res } from "../support/harness.ts";
import { startTestRelay, type TestRelay } from "../support/relay.ts";
import { SseClient } from "../support/sse.ts";

/** Reads of each hash by the relay's look-ups (SubmissionViews.byHash, spied on). */
const reads = new Map<string, number>();
const byHash = SubmissionViews.prototype.byHash;
SubmissionViews.prototype.byHash = function (this: SubmissionViews, hash: string) {
  reads.set(hash, (reads.get(hash) ?? 0) + 1);
  return byHash.call(this, hash);
};

describe("bounded streams and waiters", () => {
  let r: TestRelay;
  const clients: SseClient[] = [];
  beforeAll(
    async () => {
      r = await startTestRelay({
        LEDGER_CLOSE_MS: "0",
        EVENTS_POLL_MS: "50",
        EVENTS_STREAMS_PER_PROJECT: "3",
        WAITERS_PER_PROJECT: "2",
        WAITERS_PER_IP: "1",
        WAIT_POLL_MS: "60000",
      });
    },
    { timeout: 60_000 },
  );
  afterAll(async () => {
    for (const c of clients) c.close();
    await r.stop();
    SubmissionViews.prototype.byHash = byHash;
  });

  /** A transaction the network accepted but no ledger has included yet (Prefer: respond-async). */
  const submitted = async (key?: string) => {
    const tx = await r.payment(await r.funded());
    const res = await r.post(
      "/v1/sponsor",
      { transaction: xdrOf(tx), network: "testnet" },
      { prefer: "respond-async", ...(key ? { "x-api-key": key } : {}) },
    );
    expect(res.status).toBe(202);
    return res.body.innerHash as string;
  };
  const waitFor = (hash: string, key?: string, seconds = 25): Promise<Res> =>
    r.http.get(`/v1/transactions/${hash}?wait=${seconds}`, key ? { "x-api-key": key } : {});

  test("the N+1-th event stream of a project is 429 with the cap and Retry-After; another project's is not", async () => {
    const [p, other] = [await r.project(), await r.project()];
    for (let i = 0; i < 3; i++) {
      const s = await SseClient.open(r.url, { "x-api-key": p.testKey });
      expect(s.res.status).toBe(200);
      clients.push(s);
    }
    const refused = await r.http.get("/v1/events", { "x-api-key": p.liveKey });
    expectError(refused, 429, "RATE_LIMIT_EXCEEDED");
    expect(refused.body.error.details).toMatchObject({ limit: "EVENTS_STREAMS_PER_PROJECT", max: 3 });
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    const theirs = await SseClient.open(r.url, { "x-api-key": other.testKey });
    expect(theirs.res.status).toBe(200);
    clients.push(theirs);
    // one closes: a stream may open again
    clients.at(-2)!.close();
    const before = r.events.size;
    await until("the closed stream is unsubscribed", () => r.events.size < before, 5000);
    const again = await SseClient.open(r.url, { "x-api-key": p.testKey });
    expect(again.res.status).toBe(200);
    clients.push(again);
  });

  test("a waiter is woken by its status event, without reading every 200 ms; the 3rd waiter of a project is 429", async () => {
    const p = await r.project();
    const hash = await submitted(p.testKey);
    reads.delete(hash);
    const t0 = Date.now();
    const waiting = [waitFor(hash, p.testKey), waitFor(hash, p.testKey)];
    await until("both waiters read once", () => (reads.get(hash) ?? 0) >= 2, 5000);
    const third = await waitFor(hash, p.testKey);
    expectError(third, 429, "RATE_LIMIT_EXCEEDED");
    expect(third.body.error.details).toMatchObject({ limit: "WAITERS_PER_PROJECT", max: 2 });
    expect(Number(third.headers.get("retry-after"))).toBeGreaterThan(0);
    await Bun.sleep(1000); // polling every 200 ms would read it 10 more times meanwhile
    expect(reads.get(hash)).toBe(2);
    r.close(); // the ledger that includes it
    const answers = await Promise.all(waiting);
    for (const a of answers) {
      expect(a.status).toBe(200);
      expect(a.body.status).toBe("success");
    }
    expect(Date.now() - t0).toBeLessThan(25_000); // woken, not at the end of the wait
    expect(reads.get(hash)).toBeLessThanOrEqual(4); // one read each before, one after the wake
    // the slots are free again
    const after = await waitFor(hash, p.testKey);
    expect(after.body.status).toBe("success");
  }, 40_000);

  test("anonymous: woken the same way (events without a project), and capped per client IP", async () => {
    const hash = await submitted();
    reads.delete(hash);
    const waiting = waitFor(hash);
    await until("the waiter read once", () => (reads.get(hash) ?? 0) >= 1, 5000);
    const second = await waitFor(hash);
    expectError(second, 429, "RATE_LIMIT_EXCEEDED");
    expect(second.body.error.details).toMatchObject({ limit: "WAITERS_PER_IP", max: 1 });
    r.close();
    const answer = await waiting;
    expect(answer.status).toBe(200);
    expect(answer.body.status).toBe("success");
    expect(reads.get(hash)).toBeLessThanOrEqual(2);
  }, 40_000);
});
