/**
 * What one `bun run bench:surge` measures, from the environment:
 * - BENCH_SECONDS (default 60; quick 20): the steady phase's length;
 * - BENCH_LOAD (default 3): competing traffic in multiples of a ledger's capacity;
 * - BENCH_CAPACITY (default 50): classic operations per ledger (LOCALNET_MAX_TX_SET_SIZE);
 * - BENCH_LEDGER_MS (default 1000): the ledger close period;
 * - BENCH_RELAY_RATE (default 4): sponsored transactions per second (and as many direct ones at 100 stroops);
 * - BENCH_STRATEGY (default fast,economy): the project's policy `feeStrategy` for each run, in turn;
 *   `none` leaves the policy without the field (the relay's behaviour before strategies existed);
 * - BENCH_SPIKE_SECONDS (default 15; quick 8): the spike phase (competing load from zero to 3x at a ledger's close);
 * - BENCH_ACCOUNTS (default 300): competing accounts (each has at most one transaction in the queue);
 * - BENCH_QUICK=1: a short run.
 */
export interface SurgeSettings {
  seconds: number;
  load: number;
  capacity: number;
  ledgerMs: number;
  relayRate: number;
  strategies: string[];
  spikeSeconds: number;
  accounts: number;
  quick: boolean;
}

const num = (name: string, fallback: number): number => {
  const v = process.env[name];
  if (v === undefined || v === "") return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number, not ${v}`);
  return n;
};

export function surgeSettings(): SurgeSettings {
  const quick = process.env.BENCH_QUICK === "1";
  const strategies = (process.env.BENCH_STRATEGY ?? "fast,economy")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  for (const s of strategies)
    if (!["fast", "economy", "none"].includes(s)) throw new Error(`BENCH_STRATEGY: fast, economy or none, not ${s}`);
  return {
    seconds: num("BENCH_SECONDS", quick ? 20 : 60),
    load: num("BENCH_LOAD", 3),
    capacity: num("BENCH_CAPACITY", 50),
    ledgerMs: num("BENCH_LEDGER_MS", 1000),
    relayRate: num("BENCH_RELAY_RATE", 4),
    strategies,
    spikeSeconds: num("BENCH_SPIKE_SECONDS", quick ? 8 : 15),
    accounts: num("BENCH_ACCOUNTS", 300),
    quick,
  };
}

/**
 * A competing transaction's bid per operation: 70% at the base fee (100), 20% between 100 and
 * 1,000, 10% between 1,000 and 50,000 (log-uniform within each band), as wallets that use the
 * SDK's default, wallets that add a margin, and bots that pay to be first.
 */
export function competingBid(r = Math.random()): bigint {
  const logUniform = (lo: number, hi: number) => Math.round(lo * (hi / lo) ** Math.random());
  if (r < 0.7) return 100n;
  if (r < 0.9) return BigInt(logUniform(101, 1_000));
  return BigInt(logUniform(1_000, 50_000));
}
