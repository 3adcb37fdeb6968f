/**
 * bench:e2e's `fast` step run as a whole from another script (bench:compare, bench:hsm): one run with
 * a given relay (another checkout's, or this tree's with extra settings), its phases read from its
 * JSON results; and the table and ratio of medians they print.
 */
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..", "..");

export interface Phase {
  db: string;
  /** The phase whose requests carry idempotency keys. */
  keyed?: boolean;
  rate: number;
  okPerSecond: number;
  answered: number;
  scheduled: number;
  latencyMs: { p50: number; p99: number };
  relayCpuMsPerAnswer: number;
  relayMainCpuMsPerAnswer: number;
  relayThreadsMsPerAnswer?: Record<string, number>;
  relayRssMb?: number;
}
export type Row = { who: string; phases: Phase[] };

/**
 * One bench:e2e run of the `fast` step (Postgres, BENCH_RATES default 1000 req/s for BENCH_SECONDS,
 * default 10): with the relay of `relayDir` (absent: this tree's) and `relayEnv` added to its settings.
 */
export async function fastRun(who: string, o: { relayDir?: string; relayEnv?: Record<string, string> } = {}) {
  const rates = process.env.BENCH_RATES ?? "1000";
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    BENCH_DB: process.env.BENCH_DB ?? "postgres",
    BENCH_STEPS: "fast",
    BENCH_RATES: rates,
    // the warm-up at the measured rate, long enough for the JIT to have compiled the path (reported with
    // BUN_JSC_reportFTLCompileTimes=1: 3.1 s of compiling in the first 10 s at 1,000 req/s after 10 s at
    // 600, 0.9 s in the next 10 s): the phases measure a relay that has been serving, not its compiler
    BENCH_WARMUP: process.env.BENCH_WARMUP ?? `${rates.split(",")[0]},20`,
    BENCH_SECONDS: process.env.BENCH_SECONDS ?? "10",
    BENCH_PROFILE: "0",
    // no latency pairs: after a minute of single requests the JIT threw the hot path's optimized code away
    // and recompiled it during the measured phase (BUN_JSC_reportFTLCompileTimes=1: 4.6 s of compiling in
    // 20 s, about 0.2 ms an answer); the phase measures the path warm, right after the warm-up
    BENCH_LATENCY_PAIRS: process.env.BENCH_LATENCY_PAIRS ?? "0,0",
    BENCH_RELAY_ENV: JSON.stringify(o.relayEnv ?? {}),
  };
  if (o.relayDir) env.BENCH_RELAY_DIR = o.relayDir;
  else delete env.BENCH_RELAY_DIR;
  console.error(`${who}: bench:e2e …`);
  const p = Bun.spawn([process.execPath, "bench/e2e.bench.ts"], { cwd: ROOT, env, stdout: "pipe", stderr: "inherit" });
  const out = await new Response(p.stdout).text();
  if ((await p.exited) !== 0) throw new Error(`bench:e2e failed for ${who}:\n${out.slice(-3000)}`);
  const file = /JSON results: (.*)$/m.exec(out)?.[1];
  if (!file) throw new Error(`no results from bench:e2e for ${who}`);
  const json = JSON.parse(readFileSync(file.trim(), "utf8")) as { phases: Phase[] };
  rmSync(join(file.trim(), ".."), { recursive: true, force: true });
  return { who, phases: json.phases } satisfies Row;
}

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** Each run's phases, a line each. */
export function printRows(rows: Row[]): void {
  console.log(
    "run                db            rate  answered/s  p50 ms   p99 ms  CPU ms/answer  main thread ms/answer",
  );
  for (const r of rows)
    for (const p of r.phases)
      console.log(
        `${r.who.padEnd(18)} ${(p.keyed ? `${p.db}+key` : p.db).padEnd(12)} ${String(p.rate).padStart(5)}` +
          ` ${p.okPerSecond.toFixed(0).padStart(11)}` +
          ` ${p.latencyMs.p50.toFixed(0).padStart(7)} ${p.latencyMs.p99.toFixed(0).padStart(8)}` +
          ` ${p.relayCpuMsPerAnswer.toFixed(3).padStart(14)} ${p.relayMainCpuMsPerAnswer.toFixed(3).padStart(22)}` +
          threadLine(p),
      );
}

/** The threads' shares of the CPU per answer, largest first, and the relay's RSS after the phase (BENCH_THREADS=1). */
function threadLine(p: Phase): string {
  if (process.env.BENCH_THREADS !== "1" || !p.relayThreadsMsPerAnswer) return "";
  const by = Object.entries(p.relayThreadsMsPerAnswer).sort((a, b) => b[1] - a[1]);
  const rss = p.relayRssMb === undefined ? "" : `; RSS ${p.relayRssMb.toFixed(0)} MB`;
  return `\n${" ".repeat(19)}threads: ${by.map(([k, v]) => `${k} ${v.toFixed(3)}`).join(", ")}${rss}`;
}

/**
 * The ratio of the medians of the relay's CPU per answer, `after` beside `before`, per rate (and keyed); and
 * each round's own ratio (the runs in the order they ran: `after`'s i-th beside `before`'s i-th), whose
 * spread says how far one figure can be trusted.
 */
export function printRatios(before: Phase[], after: Phase[], names: { after: string; before: string }): void {
  for (const keyed of [false, true])
    for (const rate of [...new Set(after.filter((p) => !!p.keyed === keyed).map((p) => p.rate))]) {
      const cpus = (ps: Phase[]) =>
        ps.filter((p) => p.rate === rate && !!p.keyed === keyed).map((p) => p.relayCpuMsPerAnswer);
      const [a, b] = [cpus(after), cpus(before)];
      const rounds = a.map((x, i) => (b[i] ? (x / b[i]).toFixed(2) : "-")).join(", ");
      console.log(
        `${rate} req/s${keyed ? " with idempotency keys" : ""}: relay CPU per answer, ${names.after} / ${names.before}: ` +
          `${(median(a) / median(b)).toFixed(2)}x (medians ${median(a).toFixed(3)} and ${median(b).toFixed(3)} ms; ` +
          `round by round ${rounds})`,
      );
    }
}
