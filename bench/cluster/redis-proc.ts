/**
 * The Redis the instances share. INFO stats counts every command the server processed, from any
 * client: on a Redis that others use too (tests running meanwhile), a phase's count is not the
 * relay's. So by default, when `redis-server` is on the PATH, the benchmark runs a private one (its
 * own process on a free port, no persistence, in a temporary directory, killed at the end); its
 * CPU is then read like the other processes'. BENCH_REDIS=shared uses the Redis at
 * redis://127.0.0.1:6379 instead (under a fresh key prefix, deleted at the end), and the rate of
 * commands others send it before the run is printed.
 */
import { Redis } from "ioredis";
import { freePort, spawnChild, stopChild, tempDir } from "../e2e/procs.ts";

export const SHARED_REDIS_URL = "redis://127.0.0.1:6379";

export interface RedisTarget {
  url: string;
  /** The private server's process id; null: the shared Redis. */
  pid: number | null;
  /** What the report says about it. */
  describe: string;
  stop(): Promise<void>;
}

/** Whether `redis-server` can be run here. */
export const canRunRedis = () => Bun.which("redis-server") !== null;

/** Commands per second the server processed over `ms` (with nothing of the benchmark on it: others' load). */
export async function commandRate(url: string, ms = 2000): Promise<number> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    const total = async () => Number(/total_commands_processed:(\d+)/.exec(await redis.info("stats"))?.[1] ?? 0);
    const a = await total();
    await Bun.sleep(ms);
    // minus this INFO call itself
    return ((await total()) - a - 1) / (ms / 1000);
  } finally {
    redis.disconnect();
  }
}

export async function sharedRedis(): Promise<RedisTarget> {
  const rate = await commandRate(SHARED_REDIS_URL);
  return {
    url: SHARED_REDIS_URL,
    pid: null,
    describe: `shared ${SHARED_REDIS_URL} (others sent it ${rate.toFixed(1)} commands/s before the run)`,
    stop: async () => {},
  };
}

export async function privateRedis(): Promise<RedisTarget> {
  const port = freePort();
  const dir = tempDir("relay-cluster-redis-");
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir];
  const child = spawnChild(["redis-server", ...args], {}, () => {});
  const url = `redis://127.0.0.1:${port}`;
  const t0 = Date.now();
  let version: string | null = null;
  while (version === null) {
    const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on("error", () => {});
    try {
      await probe.connect();
      version = /redis_version:(\S+)/.exec(await probe.info("server"))?.[1] ?? "?";
    } catch (e) {
      if (Date.now() - t0 > 10_000) throw new Error(`redis-server did not answer within 10 s: ${e}`);
      await Bun.sleep(100);
    } finally {
      probe.disconnect();
    }
  }
  return {
    url,
    pid: child.pid,
    describe: `private redis-server ${version} on port ${port}`,
    stop: async () => void (await stopChild(child, "SIGTERM", 5_000)),
  };
}
