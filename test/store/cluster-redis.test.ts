/**
 * The Redis primitives instances coordinate with (src/store/cluster.ts), on a real Redis under a
 * key prefix of each test's own: leases held by one instance at a time and free once their holder
 * stops renewing, live instances, a global token bucket exact across instances, notices to all.
 */
import { afterEach, expect, test } from "bun:test";
import { Cluster } from "../../src/store/cluster.ts";
import { clearPrefix, REDIS_URL, redisUp } from "../support/redis.ts";

const opened: Cluster[] = [];
let prefix = "";
const open = async (id: string, leaseMs = 300) => {
  const c = await Cluster.open({ url: REDIS_URL, prefix, id, leaseMs, timeoutMs: 1000 });
  opened.push(c);
  return c;
};
const fresh = () => {
  prefix = `test:cluster:${crypto.randomUUID()}:`;
};

afterEach(async () => {
  await Promise.all(opened.splice(0).map((c) => c.close()));
  await clearPrefix(prefix);
});

test.skipIf(!redisUp)("a lease is one instance's until it stops renewing it; then another takes it", async () => {
  fresh();
  const [a, b] = [await open("a"), await open("b")];
  expect(await a.claim("channel:X")).toBe(true);
  expect(await b.claim("channel:X")).toBe(false);
  expect(await a.claim("channel:X")).toBe(true); // renewed by its holder
  expect(await a.holder("channel:X")).toBe("a");
  await Bun.sleep(200);
  expect(await a.renew(["channel:X", "channel:Y"])).toEqual(new Set(["channel:X"]));
  await Bun.sleep(200); // 400 ms after the claim, 200 ms after the renewal: still a's
  expect(await b.claim("channel:X")).toBe(false);
  await Bun.sleep(350); // a stopped renewing
  expect(await b.claim("channel:X")).toBe(true);
  expect(await a.renew(["channel:X"])).toEqual(new Set());
  await a.release("channel:X"); // not a's: nothing happens
  expect(await b.holder("channel:X")).toBe("b");
  await b.release("channel:X");
  expect(await a.holder("channel:X")).toBeNull();
});

test.skipIf(!redisUp)("live instances: those that sent a heartbeat within the lease TTL", async () => {
  fresh();
  const [a, b] = [await open("a"), await open("b")];
  await a.heartbeat();
  expect(await b.heartbeat()).toEqual(["a", "b"]);
  await Bun.sleep(350);
  expect(await b.heartbeat()).toEqual(["b"]);
  await b.leave();
  expect(await a.heartbeat()).toEqual(["a"]);
});

test.skipIf(!redisUp)("one token bucket for all instances: a burst of 10 admits exactly 10 of 60", async () => {
  fresh();
  const instances = [await open("a"), await open("b"), await open("c")];
  const tries = Array.from({ length: 60 }, (_, i) => instances[i % 3]!.take("project:p", 0.001, 10));
  const taken = (await Promise.all(tries)).filter((r) => r.taken).length;
  expect(taken).toBe(10);
  // refilled at the rate (1 a second: a busy machine's slow round trips refill nothing in between)
  const slow = await open("d");
  for (let i = 0; i < 5; i++) expect((await slow.take("project:q", 1, 5)).taken).toBe(true);
  expect((await slow.take("project:q", 1, 5)).taken).toBe(false);
  await Bun.sleep(1100);
  expect((await slow.take("project:q", 1, 5)).taken).toBe(true);
});

test.skipIf(!redisUp)("a notice reaches every subscribed instance, the sender's too", async () => {
  fresh();
  const [a, b] = [await open("a"), await open("b")];
  const got: string[] = [];
  await a.subscribe((n) => got.push(`a:${n.topic}:${n.from}`));
  await b.subscribe((n) => got.push(`b:${n.topic}:${n.from}`));
  await a.publish({ topic: "key-revoked", keyId: "k1" });
  for (let i = 0; i < 100 && got.length < 2; i++) await Bun.sleep(10);
  expect(got.sort()).toEqual(["a:key-revoked:a", "b:key-revoked:a"]);
});

test("a Redis that does not answer fails the command within its timeout", async () => {
  const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } }); // accepts, never answers
  const started = Date.now();
  const err = await Cluster.open({
    url: `redis://127.0.0.1:${server.port}`,
    prefix: "x:",
    id: "a",
    leaseMs: 1000,
    timeoutMs: 300,
  })
    .then((c) => c.claim("k").finally(() => c.close()))
    .catch((e: unknown) => e);
  server.stop(true);
  expect(err).toBeInstanceOf(Error);
  expect(Date.now() - started).toBeLessThan(3000);
});
