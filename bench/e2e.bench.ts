/**
 * `bun run bench:e2e`: the relay end to end, each part in its own OS process: the network (a
 * standalone localnet, `src/localnet/main.ts`), the relay (`src/index.ts`, configured only by its
 * documented environment) and the load generator (`bench/e2e/generator.ts`, pre-signed
 * transactions). For each database (BENCH_DB: pglite, postgres, both) it prints:
 * 1. latency of POST /v1/sponsor next to a direct SDK client (sendTransaction + pollTransaction)
 *    on the same network, at 1 s and at 5 s ledgers;
 * 2. open-loop load at fixed rates (BENCH_RATES, BENCH_SECONDS): answers by status, latency, the
 *    relay's CPU per answered request and its RSS;
 * 3. the confirmation delay (answer received minus the ledger's close) on the upstream localnet
 *    and on the relay's embedded mainnet;
 * 4. the relay's hottest functions (`bun --cpu-prof`) at 1,000 req/s, once (BENCH_PROFILE=0: not);
 * 5. the relay's RSS after 10,000 and after 100,000 requests.
 * BENCH_QUICK=1 is a short run for development; BENCH_STEPS picks the networks (`bench/e2e/settings.ts`). Progress goes to stderr. The JSON results and the
 * CPU profile stay in a results directory under the system's temp dir, printed at the end; every
 * other process and directory the run made is removed, also on errors and Ctrl-C.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { Generator } from "./e2e/generator-client.ts";
import { atCleanup, cleanup } from "./e2e/procs.ts";
import { formatReport, type Report } from "./e2e/report.ts";
import { loadSettings } from "./e2e/settings.ts";
import { type Ctx, embeddedNetwork, fastNetwork, memoryGrowth, say, slowNetwork } from "./e2e/steps.ts";

const settings = loadSettings();
const cpu = /model name\s*:\s*(.*)/.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1] ?? "unknown";
const git = (...args: string[]) =>
  Bun.spawnSync(["git", ...args])
    .stdout.toString()
    .trim();
// read-only: the commit measured, and whether the relay's code differs from it
const commit = `${git("rev-parse", "--short", "HEAD") || "unknown"}${git("status", "--porcelain", "--", "src", "actors") ? " (src modified)" : ""}`;
const clkTck = Number(Bun.spawnSync(["getconf", "CLK_TCK"]).stdout.toString().trim()) || 100;
const report: Report = {
  header: { date: new Date().toISOString(), nproc: availableParallelism(), cpu, bun: Bun.version, commit },
  latency: [],
  phases: [],
  embedded: [],
  warmups: [],
  profile: null,
  memory: [],
  problems: [],
  relays: [],
  errors: [],
};
const resultsDir = mkdtempSync(join(tmpdir(), "relay-e2e-results-"));
const file = join(resultsDir, "last-run.json");
// an interrupted run leaves no results directory behind
atCleanup(async () => {
  if (!existsSync(file)) rmSync(resultsDir, { recursive: true, force: true });
});
say(`settings ${JSON.stringify(settings)}`);
const gen = new Generator();
const ctx: Ctx = { s: settings, gen, report, clkTck, resultsDir };
try {
  if (settings.steps.includes("fast")) await fastNetwork(ctx);
  if (settings.steps.includes("slow") && settings.pairsSlow > 0) await slowNetwork(ctx);
  if (settings.steps.includes("embedded")) await embeddedNetwork(ctx);
  if (settings.steps.includes("memory")) await memoryGrowth(ctx);
} catch (e) {
  report.errors.push(e instanceof Error ? (e.stack ?? e.message) : String(e));
}
await Bun.write(file, JSON.stringify({ settings, ...report }, null, 2));
await gen.stop().catch(() => {});
await cleanup();
console.log(formatReport(report));
console.log(`JSON results: ${file}`);
process.exit(report.errors.length ? 1 : 0);
