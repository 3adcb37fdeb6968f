/**
 * Revocation reaches every instance, notice or not (test/support/cluster.ts: two relay processes on
 * one Postgres and one Redis). Instance 1 connects to Redis as a user of its own, so that its
 * notice subscription alone can be cut: the user is disabled (its open connections go on, a new one
 * cannot authenticate) and its pub/sub connection killed, so the notices published meanwhile never
 * reach it. A key revoked, or a project suspended, through instance 0 then still ends instance 1's
 * open stream and is refused there within the documented bound (CLUSTER_CHECK_MS, here 500 ms, and
 * one read; at most 30 s), by its look at Postgres; with the notice, at once. Skipped without
 * TEST_DATABASE_URL or a Redis at REDIS_URL.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Redis } from "ioredis";
import { startCluster, type Cluster } from "../support/cluster.ts";
import { until } from "../support/harness.ts";
import { REDIS_URL, redisUp } from "../support/redis.ts";
import { SseClient } from "../support/sse.ts";

const enabled = Boolean(process.env.TEST_DATABASE_URL) && redisUp;
/** The bound the documentation gives for a missed notice. */
const BOUND_MS = 30_000;

describe.skipIf(!enabled)("revocation in a cluster", () => {
  let c: Cluster;
  let redis: Redis;
  const user = `relay-test-${crypto.randomUUID().slice(0, 8)}`;
  const password = crypto.randomUUID();
  const clients: SseClient[] = [];
  beforeAll(
    async () => {
      redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
      await redis.call("ACL", "SETUSER", user, "on", `>${password}`, "~*", "&*", "+@all");
      const own = new URL(REDIS_URL);
      own.username = user;
      own.password = password;
      c = await startCluster({
        instances: 2,
        mainnetChannels: 1,
        testnetChannels: 1,
        env: { CLUSTER_CHECK_MS: "500" },
        instanceEnv: { 1: { REDIS_URL: own.toString() } },
      });
    },
    { timeout: 120_000 },
  );
  afterAll(async () => {
    for (const s of clients) s.close();
    await c?.stop();
    await redis.call("ACL", "DELUSER", user).catch(() => {});
    redis.disconnect();
  }, 60_000);

  /** A project made through instance 0 with a test and a live key, known to instance 1. */
  const project = async () => {
    const p = await c.admin(0, "POST", "/projects", { name: `revocation ${crypto.randomUUID().slice(0, 8)}` });
    expect(p.status).toBe(201);
    const keys: Record<string, { id: string; key: string }> = {};
    for (const environment of ["test", "live"]) {
      const k = await c.admin(0, "POST", `/projects/${p.body.id}/keys`, { environment });
      expect(k.status).toBe(201);
      keys[environment] = { id: k.body.id, key: k.body.key };
    }
    await until(
      "instance 1 knows the project",
      async () => (await c.admin(1, "GET", `/projects/${p.body.id}`)).status === 200,
      20_000,
      50,
    );
    return { id: p.body.id as string, test: keys.test!, live: keys.live! };
  };
  /** An open stream on instance `i` with `key` (so that instance has the key in its cache too). */
  const open = async (i: number, key: string) => {
    const s = await SseClient.open(c.instances[i]!.url, { "x-api-key": key });
    expect(s.res.status).toBe(200);
    clients.push(s);
    await s.until((items) => (items.some((x) => x.comment === "connected") ? true : undefined));
    return s;
  };
  const statusOn = async (i: number, key: string) =>
    (await fetch(`${c.instances[i]!.url}/v1/transactions/${"ab".repeat(32)}`, { headers: { "x-api-key": key } }))
      .status;
  /** Instance 1 hears no notice until the returned function is called. */
  const cutNotices = async () => {
    await redis.call("ACL", "SETUSER", user, "off");
    const killed = Number(await redis.call("CLIENT", "KILL", "USER", user, "TYPE", "pubsub"));
    expect(killed).toBe(1); // instance 1's notice subscription
    return async () => {
      await redis.call("ACL", "SETUSER", user, "on");
    };
  };

  test("a key revoked through instance 0: instance 1 ends its stream and refuses it (with the notice)", async () => {
    const p = await project();
    const stream = await open(1, p.test.key);
    expect((await c.admin(0, "DELETE", `/projects/${p.id}/keys/${p.test.id}`)).status).toBe(200);
    await stream.done();
    expect(stream.items.at(-1)).toEqual({ comment: "ended: the API key was revoked" });
    expect(await statusOn(1, p.test.key)).toBe(401);
  }, 30_000);

  test("the notice missed: within the bound instance 1 refuses the key and ends its open stream", async () => {
    const p = await project();
    const stream = await open(1, p.test.key);
    const other = await open(1, p.live.key);
    expect(await statusOn(1, p.test.key)).toBe(404); // known: no lookup, a 404 for the unknown hash
    const restore = await cutNotices();
    try {
      const t0 = Date.now();
      expect((await c.admin(0, "DELETE", `/projects/${p.id}/keys/${p.test.id}`)).status).toBe(200);
      expect(await statusOn(0, p.test.key)).toBe(401);
      await until(
        "instance 1 refuses the revoked key",
        async () => (await statusOn(1, p.test.key)) === 401,
        BOUND_MS,
        50,
      );
      await until("instance 1 ended the stream", () => stream.ended, BOUND_MS, 50);
      expect(Date.now() - t0).toBeLessThan(BOUND_MS);
      expect(stream.items.at(-1)).toEqual({ comment: "ended: the API key was revoked" });
      expect(other.ended).toBe(false); // the project's other key's stream goes on
      expect(await statusOn(1, p.live.key)).toBe(404);
    } finally {
      await restore();
    }
  }, 60_000);

  test("a suspension missed: within the bound instance 1 ends the project's streams and refuses it", async () => {
    const p = await project();
    const stream = await open(1, p.live.key);
    const restore = await cutNotices();
    try {
      expect((await c.admin(0, "PATCH", `/projects/${p.id}`, { status: "suspended" })).status).toBe(200);
      await until("instance 1 ended the stream", () => stream.ended, BOUND_MS, 50);
      expect(stream.items.at(-1)).toEqual({ comment: "ended: the project is suspended" });
      expect(await statusOn(1, p.live.key)).toBe(403);
    } finally {
      await restore();
    }
  }, 60_000);
});
