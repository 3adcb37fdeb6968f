/**
 * A rotation in a cluster (test/support/cluster.ts: two relay processes on one Postgres and one
 * Redis): the old key's new expiry, set through instance 0, reaches instance 1 by its notice, so
 * that instance 1, which had the key cached without an expiry, refuses it with 401 KEY_EXPIRED
 * within 1 s of the overlap's end; and with the notice missed (instance 1's subscription cut, as in
 * cluster-revocation.test.ts), by its periodic look at Postgres (CLUSTER_CHECK_MS, here 500 ms).
 * Skipped without TEST_DATABASE_URL or a Redis at REDIS_URL.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startCluster, type Cluster } from "../support/cluster.ts";
import { until } from "../support/harness.ts";
import { Redis } from "ioredis";
import { REDIS_URL, redisUp } from "../support/redis.ts";

const enabled = Boolean(process.env.TEST_DATABASE_URL) && redisUp;

describe.skipIf(!enabled)("key rotation in a cluster", () => {
  let c: Cluster;
  let redis: Redis;
  const user = `relay-test-${crypto.randomUUID().slice(0, 8)}`;
  const password = crypto.randomUUID();
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
    { timeout: 180_000 },
  );
  afterAll(async () => {
    await c?.stop();
    await redis.call("ACL", "DELUSER", user).catch(() => {});
    redis.disconnect();
  }, 60_000);

  /** A project made through instance 0 with a read-only test key, cached on instance 1. */
  const keyed = async () => {
    const p = await c.admin(0, "POST", "/projects", { name: `rotation ${crypto.randomUUID().slice(0, 8)}` });
    expect(p.status).toBe(201);
    const old = await c.admin(0, "POST", `/projects/${p.body.id}/keys`, { environment: "test", scopes: ["read"] });
    expect(old.status).toBe(201);
    await until("instance 1 knows the project", async () => (await lookup(1, old.body.key)).status === 404, 20_000, 50);
    return { projectId: p.body.id as string, old: old.body as { id: string; key: string } };
  };

  const lookup = async (i: number, key: string) => {
    const res = await fetch(`${c.instances[i]!.url}/v1/transactions/${"ab".repeat(32)}`, {
      headers: { "x-api-key": key },
    });
    const body = (await res.json()) as { error?: { code?: string } };
    return { status: res.status, code: body.error?.code };
  };

  test("the old key's expiry reaches instance 1 within 1 s: KEY_EXPIRED there too", async () => {
    const { projectId, old } = await keyed();
    const rotated = await c.admin(0, "POST", `/projects/${projectId}/keys/${old.id}/rotate`, {
      overlapSeconds: 1,
    });
    expect(rotated.status).toBe(201);
    expect(rotated.body.scopes).toEqual(["read"]);
    const keys = (await c.admin(0, "GET", `/projects/${projectId}/keys`)).body.keys as {
      id: string;
      expiresAt: string;
    }[];
    const end = Date.parse(keys.find((k) => k.id === old.id)!.expiresAt);
    // both keys work on instance 1 during the overlap (the new one looked up there)
    expect((await lookup(1, rotated.body.key)).status).toBe(404);
    await until("instance 1 refuses the old key", async () => (await lookup(1, old.key)).status === 401, 10_000, 20);
    const refusedAt = Date.now();
    expect(await lookup(1, old.key)).toEqual({ status: 401, code: "KEY_EXPIRED" });
    expect(await lookup(0, old.key)).toEqual({ status: 401, code: "KEY_EXPIRED" });
    expect(refusedAt - end).toBeLessThan(1000);
    expect((await lookup(1, rotated.body.key)).status).toBe(404);
  }, 60_000);

  test("the notice missed: instance 1 learns the old key's expiry from Postgres and refuses it", async () => {
    const { projectId, old } = await keyed();
    await redis.call("ACL", "SETUSER", user, "off");
    try {
      expect(Number(await redis.call("CLIENT", "KILL", "USER", user, "TYPE", "pubsub"))).toBe(1);
      const rotated = await c.admin(0, "POST", `/projects/${projectId}/keys/${old.id}/rotate`, { overlapSeconds: 1 });
      expect(rotated.status).toBe(201);
      await until("instance 1 refuses the old key", async () => (await lookup(1, old.key)).status === 401, 30_000, 50);
      expect(await lookup(1, old.key)).toEqual({ status: 401, code: "KEY_EXPIRED" });
    } finally {
      await redis.call("ACL", "SETUSER", user, "on");
    }
  }, 60_000);
});
