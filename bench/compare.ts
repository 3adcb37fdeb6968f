/**
 * `bun run bench:compare REF`: the relay of commit REF beside the work tree's, under the same load,
 * alternating, so that a regression on the request path is seen the day it lands. REF's relay runs
 * from a checkout of its own (its dependencies installed there); the load, the network and the
 * measurement are this tree's bench:e2e (the `fast` step: a standalone localnet with 1 s ledgers,
 * Postgres, open-loop load at BENCH_RATES, default 1000 req/s for BENCH_SECONDS, default 10).
 * BENCH_ROUNDS (default 2) pairs of runs, REF first then the work tree. Prints, per run, the relay's
 * CPU per answered request (all threads, and its main thread), answers per second and latency, then
 * the ratio of the medians. The checkout is removed at the end.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ref = process.argv[2];
if (!ref) {
  console.error("usage: bun run bench:compare <commit or branch>");
  process.exit(2);
}
const ROOT = join(import.meta.dir, "..");
const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
const run = (cmd: string[], cwd = ROOT) => {
  const r = Bun.spawnSync(cmd, { cwd, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`${cmd.join(" ")}: ${r.stderr.toString().slice(-2000)}`);
  return r.stdout.toString().trim();
};
const sha = run(["git", "rev-parse", "--short", ref]);
const dir = mkdtempSync(join(tmpdir(), `relay-compare-${sha}-`));
const cleanup = () => rmSync(dir, { recursive: true, force: true });
process.on("SIGINT", () => {
  cleanup();
  process.exit(130);
});

interface Phase {
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
}
type Row = { who: string; phases: Phase[] };

/** One bench:e2e run of the `fast` step with the relay of `relayDir` (undefined: this tree's). */
async function once(who: string, relayDir?: string): Promise<Row> {
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    BENCH_DB: process.env.BENCH_DB ?? "postgres",
    BENCH_STEPS: "fast",
    BENCH_RATES: process.env.BENCH_RATES ?? "1000",
    BENCH_SECONDS: process.env.BENCH_SECONDS ?? "10",
    BENCH_PROFILE: "0",
  };
  if (relayDir) env.BENCH_RELAY_DIR = relayDir;
  else delete env.BENCH_RELAY_DIR;
  console.error(`${who}: bench:e2e …`);
  const p = Bun.spawn([process.execPath, "bench/e2e.bench.ts"], { cwd: ROOT, env, stdout: "pipe", stderr: "inherit" });
  const out = await new Response(p.stdout).text();
  if ((await p.exited) !== 0) throw new Error(`bench:e2e failed for ${who}:\n${out.slice(-3000)}`);
  const file = /JSON results: (.*)$/m.exec(out)?.[1];
  if (!file) throw new Error(`no results from bench:e2e for ${who}`);
  const json = JSON.parse(readFileSync(file.trim(), "utf8")) as { phases: Phase[] };
  rmSync(join(file.trim(), ".."), { recursive: true, force: true });
  return { who, phases: json.phases };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

try {
  console.error(`checking out ${ref} (${sha}) into ${dir} and installing its dependencies`);
  run(["git", "worktree", "add", "--detach", dir, ref]);
  run(["bun", "install", "--frozen-lockfile"], dir);
  const rows: Row[] = [];
  for (let i = 0; i < rounds; i++) {
    rows.push(await once(`${sha} #${i + 1}`, dir));
    rows.push(await once(`work tree #${i + 1}`));
  }
  console.log(`\nbench:compare ${ref} (${sha}) and the work tree, ${rounds} rounds, alternating`);
  console.log(
    "run                db            rate  answered/s  p50 ms   p99 ms  CPU ms/answer  main thread ms/answer",
  );
  for (const r of rows)
    for (const p of r.phases)
      console.log(
        `${r.who.padEnd(18)} ${(p.keyed ? `${p.db}+key` : p.db).padEnd(12)} ${String(p.rate).padStart(5)}` +
          ` ${p.okPerSecond.toFixed(0).padStart(11)}` +
          ` ${p.latencyMs.p50.toFixed(0).padStart(7)} ${p.latencyMs.p99.toFixed(0).padStart(8)}` +
          ` ${p.relayCpuMsPerAnswer.toFixed(3).padStart(14)} ${p.relayMainCpuMsPerAnswer.toFixed(3).padStart(22)}`,
      );
  const of = (prefix: string) => rows.filter((r) => r.who.startsWith(prefix)).flatMap((r) => r.phases);
  const [before, after] = [of(sha), of("work tree")];
  for (const keyed of [false, true])
    for (const rate of [...new Set(after.filter((p) => !!p.keyed === keyed).map((p) => p.rate))]) {
      const cpu = (ps: Phase[]) =>
        median(ps.filter((p) => p.rate === rate && !!p.keyed === keyed).map((p) => p.relayCpuMsPerAnswer));
      console.log(
        `${rate} req/s${keyed ? " with idempotency keys" : ""}: relay CPU per answer, work tree / ${sha}: ` +
          `${(cpu(after) / cpu(before)).toFixed(2)}x (medians ${cpu(after).toFixed(3)} and ${cpu(before).toFixed(3)} ms)`,
      );
    }
} finally {
  Bun.spawnSync(["git", "worktree", "remove", "--force", dir], { cwd: ROOT });
  cleanup();
}
