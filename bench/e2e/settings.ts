/**
 * What one `bun run bench:e2e` measures, from the environment:
 * - BENCH_DB: pglite | postgres | both (default both): the relay's database;
 * - BENCH_RATES (comma-separated req/s, default 500,1000,2000,3000,5000) and BENCH_SECONDS (10): the open-loop phases;
 * - BENCH_PROFILE: 0 skips the CPU profile at 1,000 req/s (default: once, on Postgres unless BENCH_DB=pglite;
 *   quick: 500 req/s), a rate profiles at that rate instead;
 * - BENCH_QUICK=1: a short run for development (rates 200,500 for 3 s, fewer latency samples);
 * - BENCH_LATENCY_PAIRS (default 40,12; quick 8,3): latency pairs at 1 s and at 5 s ledgers, 0 to skip;
 * - BENCH_STEPS (default fast,slow,embedded,memory): what to run: `fast` the 1 s standalone localnet
 *   (latency, load, profile), `slow` the 5 s one (latency), `embedded` the relay's own mainnet,
 *   `memory` the relay's RSS after 10,000 and after 100,000 requests (1 s standalone localnet);
 * - BENCH_KEYED_RATE (default 1000; quick 0; 0 for none): one more phase at that rate on the 1 s
 *   network, each request with an X-Idempotency-Key of its own;
 * - BENCH_WARMUP (default 600,10; quick 300,3; 0 for none): each relay's first phase, at that rate for
 *   that many seconds, before what is measured: a fresh process runs cold code, and JavaScriptCore
 *   keeps compiling it for tens of seconds under load (its JIT thread took 0.1 to 0.25 of a core
 *   over the first 30 s at 800 req/s, then under 0.05); printed apart;
 * - BENCH_MEMORY_RATE (default 700 req/s) and BENCH_MEMORY_REQUESTS (default 10000,100000; quick
 *   2000,10000): the memory step's rate and the request counts its RSS is read after.
 */
import type { Db } from "./relay-proc.ts";

export const STEPS = ["fast", "slow", "embedded", "memory"] as const;
export type Step = (typeof STEPS)[number];

export interface Settings {
  dbs: Db[];
  steps: Step[];
  rates: number[];
  seconds: number;
  /** Latency pairs (direct + relay) at 1 s and at 5 s ledgers. */
  pairsFast: number;
  pairsSlow: number;
  /** The embedded-network run: rate and seconds. */
  embeddedRate: number;
  embeddedSeconds: number;
  /** Rate of the profiled phase; null: no profile. */
  profileRate: number | null;
  profileDb: Db;
  /** Users on the 1 s network: 3 s of the highest rate. */
  accounts: number;
  /** Wait for a phase's last answers at most this long after its last send. */
  capMs: number;
  /** The keyed phase's rate (requests with idempotency keys); 0: none. */
  keyedRate: number;
  /** A fresh relay's first phase, apart from the measured ones; null: none. */
  warmup: { rate: number; seconds: number } | null;
  /** The memory step: its rate, and the total requests after which RSS is read (ascending). */
  memoryRate: number;
  memoryAfter: number[];
}

export function loadSettings(env = process.env): Settings {
  const quick = env.BENCH_QUICK === "1";
  const db = env.BENCH_DB ?? "both";
  if (!["pglite", "postgres", "both"].includes(db)) throw new Error("BENCH_DB must be pglite, postgres or both");
  const dbs: Db[] = db === "both" ? ["pglite", "postgres"] : [db as Db];
  const rates = (env.BENCH_RATES ?? (quick ? "200,500" : "500,1000,2000,3000,5000"))
    .split(",")
    .map((r) => Number(r.trim()))
    .filter((r) => r > 0);
  if (rates.length === 0) throw new Error("BENCH_RATES must list rates in req/s, e.g. 500,1000");
  const seconds = Number(env.BENCH_SECONDS ?? (quick ? 3 : 10));
  if (!(seconds > 0)) throw new Error("BENCH_SECONDS must be a positive number");
  const pairs = (env.BENCH_LATENCY_PAIRS ?? (quick ? "8,3" : "40,12")).split(",").map(Number);
  if (pairs.some((p) => !(p >= 0))) throw new Error("BENCH_LATENCY_PAIRS must be two counts, e.g. 40,12");
  const steps = (env.BENCH_STEPS ?? STEPS.join(",")).split(",").map((x) => x.trim()) as Step[];
  if (steps.some((x) => !STEPS.includes(x))) throw new Error(`BENCH_STEPS must list some of ${STEPS.join(", ")}`);
  const profileRate = env.BENCH_PROFILE === "0" ? null : Number(env.BENCH_PROFILE) || (quick ? 500 : 1000);
  if (!(profileRate === null || profileRate > 0)) throw new Error("BENCH_PROFILE must be 0 or a rate in req/s");
  const memoryRate = Number(env.BENCH_MEMORY_RATE ?? 700);
  if (!(memoryRate > 0)) throw new Error("BENCH_MEMORY_RATE must be a positive rate in req/s");
  const memoryAfter = (env.BENCH_MEMORY_REQUESTS ?? (quick ? "2000,10000" : "10000,100000"))
    .split(",")
    .map(Number)
    .sort((a, b) => a - b);
  if (memoryAfter.some((r) => !(r > 0))) throw new Error("BENCH_MEMORY_REQUESTS must list request counts");
  const w = (env.BENCH_WARMUP ?? (quick ? "300,3" : "600,10")).split(",").map(Number);
  if (w[0] !== 0 && !(w[0]! > 0 && w[1]! > 0)) throw new Error("BENCH_WARMUP must be rate,seconds (e.g. 300,3) or 0");
  const keyedRate = Number(env.BENCH_KEYED_RATE ?? (quick ? 0 : 1000));
  if (!(keyedRate >= 0)) throw new Error("BENCH_KEYED_RATE must be a rate in req/s, or 0");
  const warmup = w[0] === 0 ? null : { rate: w[0]!, seconds: w[1]! };
  const highest = Math.max(...rates, profileRate ?? 0, memoryRate, warmup?.rate ?? 0, keyedRate);
  return {
    dbs,
    steps,
    rates,
    seconds,
    pairsFast: pairs[0] ?? 40,
    pairsSlow: pairs[1] ?? 12,
    embeddedRate: 200,
    embeddedSeconds: quick ? 3 : 5,
    profileRate,
    profileDb: dbs.includes("postgres") ? "postgres" : "pglite",
    accounts: Math.max(200, Math.ceil((highest * 3) / 100) * 100),
    capMs: 45_000,
    keyedRate,
    warmup,
    memoryRate,
    memoryAfter,
  };
}
