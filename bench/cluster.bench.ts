/**
 * `bun run bench:cluster`: one relay instance against several under the same open-loop load, each
 * part in its own OS process: two standalone localnets as the upstream networks (`src/localnet/main.ts`
 * with the public testnet's and mainnet's passphrases; mainnet closes a ledger every second, testnet
 * every 5 s), the relay instances (`src/index.ts` in cluster mode, `bench/cluster/cluster-proc.ts`) and
 * the load generator (`bench/e2e/generator.ts`, pre-signed transactions, sending round-robin over the
 * instances' URLs: no load balancer; an account pool for 8 s of the rate, so that the load stays
 * open-loop while answers take up to 8 s: "not sent" counts the requests it had no idle account for).
 *
 * Each cluster size runs on a cluster of its own (a fresh Postgres schema and Redis key prefix,
 * MAINNET_CHANNELS the same cluster-wide target whatever the size, one testnet channel): the
 * baseline is cluster mode with one instance, so that both pay the same coordination. Per size: the
 * start-up and the pool's spread to a fair share each, an unreported warm-up (100 req/s for 2 s), 5 s
 * with no load (the background rates), then the phases, in order, on that cluster (its database grows
 * from one phase to the next, as in production). Per (size, rate) it prints: requests sent,
 * answered, 200, errors by status, 200/s, p50/p99 latency, relay CPU ms per answer and cores (summed
 * over the instances, from /proc/<pid>/stat), Postgres statements per answer (every instance's
 * /metrics, relay_db_statement_duration_seconds_count) and Redis commands per answer (the server's
 * INFO stats total_commands_processed: it counts every client of that Redis, the instances'
 * background coordination and the commands their Lua scripts run inside Redis included; the idle
 * rate is printed beside, and subtracted in "less idle") and Redis round trips per answer (MONITOR,
 * `bench/cluster/monitor.ts`: the commands the instances sent); then each instance's part, the
 * other processes' CPU (the private Redis's too), and what the instances logged. Since INFO counts
 * every client, the Redis is by default a private redis-server (`bench/cluster/redis-proc.ts`) when
 * one is on the PATH. On a small machine the instances, Postgres, Redis, the localnets and the
 * generator share the cores: the figures are what they are there (nproc is printed).
 *
 * Settings (environment):
 * - BENCH_INSTANCES: cluster sizes, comma-separated (default 1,3);
 * - BENCH_RATES: open-loop rates in req/s, comma-separated (default 300,600,1000);
 * - BENCH_SECONDS: each phase's length (default 10);
 * - BENCH_CHANNELS: MAINNET_CHANNELS of every cluster (default 24);
 * - BENCH_REDIS: `private` (a redis-server of the benchmark's own: the default when `redis-server`
 *   is on the PATH) or `shared` (the Redis at redis://127.0.0.1:6379, whose count includes anyone
 *   else's commands: the rate others send it before the run is printed);
 * - BENCH_QUICK=1: a short run for development (rate 200 for 3 s unless BENCH_RATES/BENCH_SECONDS say).
 *
 * Postgres at postgres://postgres@127.0.0.1:5432/test (and, shared, Redis at redis://127.0.0.1:6379). Progress
 * goes to stderr, the report to stdout. Every process, schema, Redis key and temporary directory the
 * run made is removed at the end, also on errors and Ctrl-C.
 */
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { Networks } from "@stellar/stellar-sdk";
import { type ClusterProc, heldActive, type Nets, type PoolView, startCluster } from "./cluster/cluster-proc.ts";
import { RedisCommands } from "./cluster/counters.ts";
import { measureIdle, runClusterPhase } from "./cluster/phase.ts";
import { privateRedis, type RedisTarget, sharedRedis } from "./cluster/redis-proc.ts";
import { type ClusterReport, type ClusterRun, formatClusterReport } from "./cluster/report.ts";
import { type ClusterSettings, loadClusterSettings } from "./cluster/settings.ts";
import { Generator } from "./e2e/generator-client.ts";
import { type LocalnetProc, startLocalnet } from "./e2e/localnet-proc.ts";
import { atCleanup, cleanup } from "./e2e/procs.ts";
import { projectKey } from "./e2e/relay-proc.ts";
import { counts, countsText, ms } from "./e2e/stats.ts";
import { say } from "./e2e/steps.ts";

const s = loadClusterSettings();
const cpu = /model name\s*:\s*(.*)/.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1] ?? "unknown";
const git = (...args: string[]) =>
  Bun.spawnSync(["git", ...args])
    .stdout.toString()
    .trim();
// read-only: the commit measured, and whether the relay's code differs from it
const modified = git("status", "--porcelain", "--", "src", "actors") ? " (src modified)" : "";
const commit = `${git("rev-parse", "--short", "HEAD") || "unknown"}${modified}`;
const clkTck = Number(Bun.spawnSync(["getconf", "CLK_TCK"]).stdout.toString().trim()) || 100;
const settingsText =
  `instances ${s.instances.join(",")}, rates ${s.rates.join(",")} req/s for ${s.seconds} s, ` +
  `MAINNET_CHANNELS ${s.channels} cluster-wide, ${s.accounts} users (${s.poolSeconds} s of the top rate)` +
  (s.quick ? " (quick)" : "");
const report: ClusterReport = {
  header: {
    date: new Date().toISOString(),
    nproc: availableParallelism(),
    cpu,
    bun: Bun.version,
    commit,
    settings: settingsText,
  },
  runs: [],
  phases: [],
  logs: [],
  errors: [],
};
const errorText = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** Stops the cluster, keeping what each instance logged and its exit code. */
async function stopCluster(cluster: ClusterProc, run: ClusterRun | null): Promise<void> {
  say(`${cluster.ids.length} instances: stopping`);
  const codes = await cluster.stop();
  if (run) run.exitCodes = codes;
  cluster.instances.forEach((relay, k) => {
    const label = `${cluster.ids.length} inst ${cluster.ids[k]}`;
    if (codes[k] !== 0) report.errors.push(`${label}: exited with code ${codes[k]}`);
    report.logs.push({
      relay: label,
      problems: [...relay.problems.values()],
      accessStatuses: Object.fromEntries(relay.accessStatuses),
      slowest: relay.slowest,
    });
  });
}

interface Shared {
  nets: Nets;
  gen: Generator;
  redisTarget: RedisTarget;
  redis: RedisCommands;
  st: ClusterSettings;
}

async function clusterRun(size: number, { nets, gen, redisTarget, redis, st }: Shared) {
  say(`${size} instance${size > 1 ? "s" : ""}: starting`);
  const t0 = Date.now();
  const cluster = await startCluster(size, nets, st.channels, redisTarget);
  redis.trips.prefix = cluster.prefix;
  let run: ClusterRun | null = null;
  try {
    const spread = await cluster.waitSpread();
    const startedInMs = Date.now() - t0;
    const active = (p: PoolView[]) => p.map(heldActive);
    say(`  started in ${ms(startedInMs)} ms, channels ${active(spread.pools).join("/")}`);
    run = {
      instances: size,
      startedInMs,
      spread: { ms: spread.ms, ok: spread.spread },
      channelsBefore: active(spread.pools),
      channelsAfter: [],
      warmup: "-",
      idle: null,
      exitCodes: [],
    };
    report.runs.push(run);
    if (!spread.spread) report.errors.push(`${size} instances: the pool did not spread to a fair share each`);
    const apiKey = await projectKey(cluster.instances[0]!);
    const urls = cluster.instances.map((r) => r.url);
    // warm-up: JIT, connections, and the key known to every instance (created through the first)
    await Bun.sleep(1000);
    await gen.refresh();
    await gen.prepare({
      relayUrl: urls[0]!,
      relayUrls: urls,
      apiKey,
      rate: st.warmup.rate,
      seconds: st.warmup.seconds,
    });
    const w = await gen.run(st.capMs);
    const ok = w.status.filter((x) => x === 200).length;
    const wErrors = w.status.flatMap((x, i) => (x === 200 ? [] : [`${x} ${w.code[i]}`]));
    run.warmup = `${ok}/${w.sent} ok${wErrors.length ? `, ${countsText(counts(wErrors))}` : ""}`;
    say(`  warm-up: ${run.warmup}`);
    await nets.mainnet.closes.waitFor(2);
    say(`  ${st.idleSeconds} s with no load`);
    const idle = await measureIdle(cluster.instances, redis, clkTck, st.idleSeconds);
    run.idle = idle;
    for (const rate of st.rates) {
      say(`  ${rate} req/s for ${st.seconds} s`);
      const target = {
        gen,
        cluster,
        apiKey,
        nets,
        redis,
        redisPid: redisTarget.pid,
        clkTck,
        idle,
        poolSeconds: st.poolSeconds,
      };
      const p = await runClusterPhase(target, rate, st.seconds, st.capMs);
      report.phases.push(p);
      say(
        `  -> ${p.answered}/${p.sent} answered, ${p.statuses["200"] ?? 0} ok, ` +
          `p50 ${Math.round(p.latencyMs.p50)} ms, p99 ${Math.round(p.latencyMs.p99)} ms`,
      );
    }
    run.channelsAfter = active(await cluster.pools());
  } finally {
    await stopCluster(cluster, run);
  }
}

say(`settings: ${settingsText}`);
const gen = new Generator();
const nets: Partial<Nets> = {};
let redisTarget: RedisTarget | null = null;
try {
  redisTarget = s.redis === "private" ? await privateRedis() : await sharedRedis();
  report.header.settings += `; Redis: ${redisTarget.describe}`;
  say(`Redis: ${redisTarget.describe}`);
  const redis = await RedisCommands.open(redisTarget.url);
  atCleanup(async () => redis.close());
  say("starting the upstream localnets (testnet 5 s ledgers, mainnet 1 s)");
  const [testnet, mainnet]: LocalnetProc[] = await Promise.all([
    startLocalnet(5000, Networks.TESTNET),
    startLocalnet(1000, Networks.PUBLIC),
  ]);
  nets.testnet = testnet;
  nets.mainnet = mainnet;
  await gen.init(mainnet.rpc, mainnet.friendbot);
  say(`funding ${s.accounts} users`);
  const f = await gen.fund(s.accounts);
  say(`funded ${f.accounts} users in ${ms(f.ms)} ms`);
  for (const size of s.instances)
    try {
      await clusterRun(size, { nets: nets as Nets, gen, redisTarget, redis, st: s });
    } catch (e) {
      say(`FAILED ${size} instances: ${errorText(e)}`);
      report.errors.push(`${size} instances: ${errorText(e)}`);
    }
} catch (e) {
  report.errors.push(e instanceof Error ? (e.stack ?? e.message) : String(e));
}
await gen.stop().catch(() => {});
await Promise.all([nets.testnet?.stop(), nets.mainnet?.stop()]).catch(() => {});
await cleanup();
// a private Redis is one of the children cleanup() stopped (after each cluster had deleted its keys)
console.log(formatClusterReport(report));
process.exit(report.errors.length ? 1 : 0);
