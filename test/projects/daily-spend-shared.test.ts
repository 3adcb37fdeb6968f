/**
 * The daily spend limit across instances (ProjectActors with shared limits, as cluster mode runs
 * them): two instances, each with its own actor of one project, reserve against one day's spend in
 * Redis. Each actor sees only its own holds; the shared check grants no more than the limit in all.
 */
import { RelayError } from "../../src/kernel/errors.ts";
import { afterEach, expect, test } from "bun:test";
import { Redis } from "ioredis";
import { createLogger } from "../../src/kernel/log.ts";
import { ProjectActors } from "../../src/features/projects/project-actors.ts";
import { PROJECT_POLICY_DEFAULTS, ANONYMOUS_POLICY_DEFAULTS } from "../../src/features/projects/rules/policy.ts";
import { Cluster } from "../../src/store/cluster.ts";
import { MemoryCheckpoints } from "../../src/store/checkpoints.ts";
import { clearPrefix, REDIS_URL, redisUp } from "../support/redis.ts";

const prefix = `test:spend:${crypto.randomUUID()}:`;
const opened: Cluster[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((c) => c.close()));
  await clearPrefix(prefix);
});

const GRANT = 1000n;
const request = { operationTypes: ["payment"], contractIds: [], minFee: 100n, maxFee: GRANT };

async function instance(id: string, limit: bigint) {
  const cluster = await Cluster.open({ url: REDIS_URL, prefix, id, leaseMs: 1000, timeoutMs: 1000 });
  opened.push(cluster);
  const config = { anonymousPolicy: ANONYMOUS_POLICY_DEFAULTS, debounceMs: 0, maxAnonymousClients: 10 };
  const actors = new ProjectActors(new MemoryCheckpoints(), config, createLogger("silent"), cluster);
  const policy = { ...PROJECT_POLICY_DEFAULTS, maxFee: GRANT, dailySpendLimit: limit };
  const actor = await actors.start({ id: "p", policy, status: "active", balance: 0n, spent: 0n });
  return actors.payer(actor, "p", "project:p");
}

test.skipIf(!redisUp)(
  "a limit that covers N holds grants N reservations over two instances, then room freed by settlements",
  async () => {
    const N = 5;
    const payers = [await instance("a", GRANT * BigInt(N)), await instance("b", GRANT * BigInt(N))];
    const ids = Array.from({ length: 12 }, (_, i) => `r${i}`);
    const results = await Promise.all(
      ids.map((id, i) =>
        payers[i % 2]!.reserve(id, false, request).then((grant) =>
          grant instanceof RelayError ? { id, i, grant: 0n, error: grant } : { id, i, grant, error: null },
        ),
      ),
    );
    const granted = results.filter((r) => !r.error);
    expect(granted).toHaveLength(N); // equal holds: the first N increments fit, every later one is over
    for (const r of results.filter((x) => x.error))
      expect(r.error).toMatchObject({ code: "POLICY_VIOLATION", details: { rule: "dailySpendLimit" } });
    // settled for 100 each: the spend is 100 per granted, the rest is room again
    for (const r of granted) payers[r.i % 2]!.settle(r.id, { charged: 100n, released: 0n, journaled: false });
    await Bun.sleep(50);
    const room = (GRANT * BigInt(N) - 100n * BigInt(granted.length)) / GRANT;
    const again = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        payers[i % 2]!.reserve(`s${i}`, false, request).then((grant) => !(grant instanceof RelayError)),
      ),
    );
    expect(again.filter(Boolean)).toHaveLength(Number(room));
    const r = new Redis(REDIS_URL);
    const [spent, held] = await r.hmget(
      `${prefix}spend:project:p:${new Date().toISOString().slice(0, 10)}`,
      "spent",
      "held",
    );
    await r.quit();
    expect(BigInt(spent!)).toBe(100n * BigInt(granted.length));
    expect(BigInt(held!)).toBe(GRANT * BigInt(again.filter(Boolean).length));
  },
);
