/**
 * Memory stays bounded whatever the number of clients: anonymous actors are a hard-capped LRU
 * (ANONYMOUS_MAX_CLIENTS), the in-memory checkpoint store too (CHECKPOINT_MEMORY_MAX_ENTRIES); when
 * the cap is reached and no client is idle, newcomers share the overflow bucket. Through app.handle
 * with X-Forwarded-For (TRUST_PROXY): no sockets, so tens of thousands of addresses take seconds.
 * The assertions are on the counts; RSS is printed for the record.
 */
import { expect, test } from "bun:test";
import { loadConfig } from "../../src/config.ts";
import { MemoryCheckpoints } from "../../src/store/checkpoints.ts";
import { lightApp } from "../support/app.ts";

/** Distinct client addresses of the main test (MEMORY_CLIENTS=150000 for the figure). */
const CLIENTS = Number(process.env.MEMORY_CLIENTS ?? 50_000);
const BATCH = 500;

const ipOf = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
const mb = (bytes: number) => `${Math.round(bytes / 1e6)} MB`;

/** One anonymous request from `ip` (a body the route refuses: only authentication and the rate limit run). */
async function request(app: ReturnType<typeof lightApp>["app"], ip: string) {
  const res = await app.handle(
    new Request("http://localhost/v1/estimate", {
      method: "POST",
      headers: { "content-type": "application/json", "x-forwarded-for": ip },
      body: "{}",
    }),
  );
  const header = (name: string) => res.headers.get(name);
  return {
    status: res.status,
    limit: header("ratelimit-limit"),
    remaining: header("ratelimit-remaining"),
    retryAfter: header("retry-after"),
  };
}

test(`${CLIENTS} client addresses: anonymous actors and checkpoints stay within the default caps`, async () => {
  const config = loadConfig({});
  const caps = { actors: config.ANONYMOUS_MAX_CLIENTS, checkpoints: config.CHECKPOINT_MEMORY_MAX_ENTRIES };
  const light = lightApp({ trustProxy: true, maxAnonymousClients: caps.actors, maxCheckpoints: caps.checkpoints });
  Bun.gc(true);
  const before = process.memoryUsage().rss;
  const t0 = performance.now();
  let most = { actors: 0, checkpoints: 0 };
  const statuses = new Set<number>();
  for (let i = 0; i < CLIENTS; i += BATCH) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(BATCH, CLIENTS - i) }, (_, j) => request(light.app, ipOf(i + j))),
    );
    for (const r of batch) statuses.add(r.status);
    await Bun.sleep(0); // the debounced checkpoints are written
    most = {
      actors: Math.max(most.actors, light.actors.anonymousClients),
      checkpoints: Math.max(most.checkpoints, light.checkpoints.size),
    };
  }
  const ms = performance.now() - t0;
  const after = process.memoryUsage().rss;
  await Bun.sleep(100);
  Bun.gc(true);
  const idle = process.memoryUsage().rss;
  console.log(
    `${CLIENTS} client addresses in ${Math.round(ms)} ms: RSS ${mb(before)} before, ${mb(after)} after, ${mb(idle)} idle after GC; ` +
      `at most ${most.actors} anonymous actors (cap ${caps.actors}), ${most.checkpoints} checkpoints (cap ${caps.checkpoints})`,
  );
  expect([...statuses].every((s) => s === 400 || s === 429)).toBe(true);
  expect(most.actors).toBeLessThanOrEqual(caps.actors);
  expect(most.checkpoints).toBeLessThanOrEqual(caps.checkpoints);
  expect(light.actors.anonymousClients).toBe(caps.actors); // full, and no more
  await light.stop();
}, 120_000);

test("cap full, nobody idle: newcomers share the overflow bucket (429 + Retry-After once empty); known clients keep theirs", async () => {
  const light = lightApp({
    trustProxy: true,
    maxAnonymousClients: 100,
    anonymousPolicy: { requestsPerSecond: 0.001, burst: 2 },
  });
  for (let i = 0; i < 100; i++)
    expect(await request(light.app, ipOf(i))).toMatchObject({ status: 400, remaining: "1" });
  expect(light.actors.anonymousClients).toBe(100);
  expect(await request(light.app, ipOf(100))).toMatchObject({ status: 400, limit: "2", remaining: "1" });
  expect(await request(light.app, ipOf(101))).toMatchObject({ status: 400, remaining: "0" });
  const refused = await request(light.app, ipOf(102));
  expect(refused).toMatchObject({ status: 429, remaining: "0" });
  expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
  expect(light.actors.anonymousClients).toBe(100);
  expect(await request(light.app, ipOf(7))).toMatchObject({ status: 400, remaining: "0" }); // its own bucket, not the overflow's
  await light.stop();
});

test("idle clients (bucket full, nothing in flight) make room: their checkpoint is written, and they are not stopped", async () => {
  const light = lightApp({
    trustProxy: true,
    maxAnonymousClients: 100,
    anonymousPolicy: { requestsPerSecond: 10_000, burst: 2 },
  });
  for (let i = 0; i < 100; i++) await request(light.app, ipOf(i));
  const first = await light.actors.anonymousFor(ipOf(0));
  await Bun.sleep(5); // every bucket is full again
  // each newcomer gets its own bucket
  for (let i = 100; i < 300; i++)
    expect(await request(light.app, ipOf(i))).toMatchObject({ status: 400, remaining: "1" });
  expect(light.actors.anonymousClients).toBe(100);
  expect(await light.checkpoints.get(`anonymous:${ipOf(0)}`)).not.toBeNull();
  expect((await light.actors.admit(first)).ok).toBe(true); // a request it admitted can still go on with it
  await light.stop();
});

test("the in-memory checkpoint store is an LRU of at most maxEntries; expired entries are gone", async () => {
  const store = new MemoryCheckpoints(3);
  for (const k of ["a", "b", "c", "d"]) await store.set(k, { k });
  expect(store.size).toBe(3);
  expect(await store.get("a")).toBeNull();
  expect(await store.get("b")).toEqual({ k: "b" }); // read: most recently used
  await store.set("e", { k: "e" });
  expect(await store.get("c")).toBeNull();
  expect(await store.get("b")).toEqual({ k: "b" });
  await store.set("x", { big: 1n }, 0.001);
  await Bun.sleep(5);
  expect(await store.get("x")).toBeNull();
  expect(store.size).toBe(2);
});
