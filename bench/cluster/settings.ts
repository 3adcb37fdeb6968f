/**
 * What one `bun run bench:cluster` measures, from the environment (documented in `bench/cluster.bench.ts`):
 * BENCH_INSTANCES, BENCH_RATES, BENCH_SECONDS, BENCH_CHANNELS, BENCH_REDIS and BENCH_QUICK.
 */
import { canRunRedis } from "./redis-proc.ts";

export interface ClusterSettings {
  /** Cluster sizes, each run on a cluster of its own (default 1 and 3). */
  instances: number[];
  /** Open-loop rates, req/s, each for `seconds`. */
  rates: number[];
  seconds: number;
  /** MAINNET_CHANNELS of every cluster: the cluster-wide target, the same whatever the size. */
  channels: number;
  /** The unreported warm-up before the phases (JIT, the API key known to every instance). */
  warmup: { rate: number; seconds: number };
  /** The no-load span over which the background rates are read. */
  idleSeconds: number;
  /**
   * Seconds of requests a phase's account pool covers (one pending transaction per account): enough
   * for the load to stay open-loop while answers take up to that long.
   */
  poolSeconds: number;
  /** Users on the mainnet localnet: `poolSeconds` of the highest rate. */
  accounts: number;
  /** Wait for a phase's last answers at most this long after its last send. */
  capMs: number;
  /** A private redis-server (exact command counts), or the shared Redis at redis://127.0.0.1:6379. */
  redis: "private" | "shared";
  quick: boolean;
}

const POOL_SECONDS = 8;

const list = (v: string, what: string, example: string): number[] => {
  const out = v
    .split(",")
    .map((x) => Number(x.trim()))
    .filter((x) => x > 0);
  if (out.length === 0 || out.some((x) => !Number.isFinite(x)))
    throw new Error(`${what} must be a comma-separated list of positive numbers, e.g. ${example}`);
  return out;
};

export function loadClusterSettings(env = process.env): ClusterSettings {
  const quick = env.BENCH_QUICK === "1";
  const instances = list(env.BENCH_INSTANCES ?? "1,3", "BENCH_INSTANCES", "1,3");
  if (instances.some((n) => !Number.isInteger(n) || n > 16))
    throw new Error("BENCH_INSTANCES must list whole numbers of instances (at most 16)");
  const rates = list(env.BENCH_RATES ?? (quick ? "200" : "300,600,1000"), "BENCH_RATES", "300,600,1000");
  const seconds = Number(env.BENCH_SECONDS ?? (quick ? 3 : 10));
  if (!(seconds > 0)) throw new Error("BENCH_SECONDS must be a positive number");
  const channels = Number(env.BENCH_CHANNELS ?? 24);
  if (!Number.isInteger(channels) || channels < Math.max(...instances))
    throw new Error("BENCH_CHANNELS must be a whole number, at least the largest cluster size");
  const redis = env.BENCH_REDIS ?? (canRunRedis() ? "private" : "shared");
  if (redis !== "private" && redis !== "shared") throw new Error("BENCH_REDIS must be private or shared");
  if (redis === "private" && !canRunRedis()) throw new Error("BENCH_REDIS=private needs redis-server on the PATH");
  return {
    instances,
    rates,
    seconds,
    channels,
    warmup: { rate: 100, seconds: 2 },
    idleSeconds: 5,
    poolSeconds: POOL_SECONDS,
    accounts: Math.max(300, Math.ceil((Math.max(...rates) * POOL_SECONDS) / 100) * 100),
    capMs: 45_000,
    redis,
    quick,
  };
}
