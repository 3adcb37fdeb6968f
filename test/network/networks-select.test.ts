/**
 * NETWORKS selects the networks a relay serves: a mainnet-only cluster (two instances on one
 * Postgres and Redis, testnet not served at all); an instance of it that would embed a testnet is
 * refused with the embedded testnet named as the cause.
 */
import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import { startCluster, type Cluster } from "../support/cluster.ts";
import { redisUp } from "../support/redis.ts";
import { tempDir } from "../support/processes.ts";

const ready = Boolean(process.env.TEST_DATABASE_URL) && redisUp;
let cluster: Cluster | undefined;
afterAll(() => cluster?.stop());

test.skipIf(!ready)(
  "a mainnet-only cluster: both instances serve mainnet alone; one that embeds a testnet is refused, naming it",
  async () => {
    cluster = await startCluster({
      instances: 2,
      mainnetChannels: 2,
      env: { NETWORKS: "mainnet", TESTNET_RPC_URL: "" },
    });
    for (const instance of cluster.instances) {
      const health = (await (await fetch(`${instance.url}/health`)).json()) as { networks: Record<string, unknown> };
      expect(Object.keys(health.networks)).toEqual(["mainnet"]);
      const testnet = await fetch(`${instance.url}/v1/estimate`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ transaction: "AAAA", network: "testnet" }),
      });
      expect(testnet.status).not.toBe(200);
    }
    // the same environment without NETWORKS: it would embed a testnet, so it must be alone, and is refused
    const dir = tempDir("relay-networks-");
    try {
      const env = { ...cluster.instances[0]!.env, NETWORKS: "", DATA_DIR: dir.path, PORT: "0", INSTANCE_ID: "third" };
      const third = Bun.spawn(["bun", "src/index.ts"], {
        cwd: join(import.meta.dir, "..", ".."),
        env: { ...process.env, ...env },
        stdout: "ignore",
        stderr: "pipe",
      });
      const timer = setTimeout(() => third.kill("SIGKILL"), 40_000);
      expect(await third.exited).toBe(1);
      clearTimeout(timer);
      const stderr = await new Response(third.stderr).text();
      expect(stderr).toContain("an embedded testnet (no TESTNET_RPC_URL");
      expect(stderr).not.toContain("without REDIS_URL");
    } finally {
      dir.done();
    }
  },
  90_000,
);
