/**
 * `bun run bench:compare REF`: the relay of commit REF beside the work tree's, under the same load,
 * alternating, so that a regression on the request path is seen the day it lands. REF's relay runs
 * from a checkout of its own (its dependencies installed there), or REF is a folder whose
 * `src/index.ts` is started in the relay's place (`bench/floor`: a server that does none of the relay's
 * work, docs/performance.md); the load, the network and the
 * measurement are this tree's bench:e2e (the `fast` step: a standalone localnet with 1 s ledgers,
 * Postgres, open-loop load at BENCH_RATES, default 1000 req/s for BENCH_SECONDS, default 10, right after
 * a warm-up of 20 s at that rate: no latency pairs between them).
 * BENCH_ROUNDS (default 2) pairs of runs, REF first then the work tree. Prints, per run, the relay's
 * CPU per answered request (all threads, and its main thread), answers per second and latency, then
 * the ratio of the medians; with BENCH_THREADS=1 also each run's CPU per answer by thread (the main thread,
 * the JIT compiler's, the garbage collector's, the allocator's) and the system time of them all. The
 * checkout is removed at the end.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fastRun, printRatios, printRows, type Row } from "./e2e/runs.ts";

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
const folder = existsSync(join(ref, "src", "index.ts")) ? resolve(ref) : null;
const sha = folder ? ref : run(["git", "rev-parse", "--short", ref]);
const dir = folder ?? mkdtempSync(join(tmpdir(), `relay-compare-${sha}-`));
const cleanup = () => !folder && rmSync(dir, { recursive: true, force: true });
process.on("SIGINT", () => {
  cleanup();
  process.exit(130);
});

try {
  if (!folder) {
    console.error(`checking out ${ref} (${sha}) into ${dir} and installing its dependencies`);
    run(["git", "worktree", "add", "--detach", dir, ref]);
    run(["bun", "install", "--frozen-lockfile"], dir);
  }
  const rows: Row[] = [];
  for (let i = 0; i < rounds; i++) {
    rows.push(await fastRun(`${sha} #${i + 1}`, { relayDir: dir }));
    rows.push(await fastRun(`work tree #${i + 1}`));
  }
  console.log(`\nbench:compare ${ref} (${sha}) and the work tree, ${rounds} rounds, alternating`);
  printRows(rows);
  const of = (prefix: string) => rows.filter((r) => r.who.startsWith(prefix)).flatMap((r) => r.phases);
  printRatios(of(sha), of("work tree"), { after: "work tree", before: sha });
} finally {
  if (!folder) Bun.spawnSync(["git", "worktree", "remove", "--force", dir], { cwd: ROOT });
  cleanup();
}
