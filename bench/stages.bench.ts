/**
 * `bun run bench:stages`: where an answer's CPU goes, stage by stage. A checkout of HEAD with
 * `bench/stages/cut.patch` applied (a `CUT` setting kept out of `src/`: the relay answers every
 * POST /v1/sponsor with a fixed 200 at the next 1 s tick, as the floor does, at one point of its
 * path) runs bench:e2e's `fast` step once per cut (six points) and once untouched, BENCH_ROUNDS times (default 1);
 * it prints each run, then each point's median CPU per answer and what each stage adds to the one
 * before. The patch follows the path: when it no longer applies, this fails saying so.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fastRun, median, printRows, type Row } from "./e2e/runs.ts";

/** The points the relay answers at, in the order of the path ("": it runs the whole path). */
const CUTS: [cut: string, where: string][] = [
  ["elysia", "in Elysia's first hook (the body parsed and hashed)"],
  ["http", "in the route (auth, rate limit, input screen, schema)"],
  ["intake", "after intake (the envelope decoded, its inner hash)"],
  ["admission", "after admission (the fee plan, the reservation)"],
  ["ordered", "claimed, in its account's order (approval, gate)"],
  ["signed", "its channel leased, the fee-bump signed"],
  ["", "after the whole run (intent, send, ledger, settlement)"],
];
const ROOT = join(import.meta.dir, "..");
const rounds = Number(process.env.BENCH_ROUNDS ?? 1);
process.env.BENCH_KEYED_RATE ??= "0"; // one phase per run: the path without idempotency keys

const run = (cmd: string[], cwd = ROOT) => {
  const r = Bun.spawnSync(cmd, { cwd, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`${cmd.join(" ")}: ${r.stderr.toString().slice(-2000)}`);
};
const dir = mkdtempSync(join(tmpdir(), "relay-stages-"));
try {
  run(["git", "worktree", "add", "--detach", dir, "HEAD"]);
  try {
    run(["git", "apply", join(ROOT, "bench/stages/cut.patch")], dir);
  } catch (e) {
    throw new Error(`bench/stages/cut.patch no longer applies to HEAD: move its cuts to where the path is now\n${e}`);
  }
  run(["bun", "install", "--frozen-lockfile"], dir);
  const rows: (Row & { cut: string })[] = [];
  for (let i = 0; i < rounds; i++)
    for (const [cut] of CUTS) {
      const row = await fastRun(`${cut || "whole"} #${i + 1}`, { relayDir: dir, relayEnv: cut ? { CUT: cut } : {} });
      rows.push({ ...row, cut });
    }
  console.log(`\nbench:stages at HEAD, ${rounds} round(s)`);
  printRows(rows);
  console.log("\nthe relay answers...                                     CPU ms/answer  main thread  the stage adds");
  let before: number | null = null;
  for (const [cut, where] of CUTS) {
    const phases = rows.filter((r) => r.cut === cut).flatMap((r) => r.phases);
    const cpu = median(phases.map((p) => p.relayCpuMsPerAnswer));
    const main = median(phases.map((p) => p.relayMainCpuMsPerAnswer));
    const adds = before === null ? "" : (cpu - before).toFixed(3);
    console.log(
      `${where.padEnd(56)} ${cpu.toFixed(3).padStart(13)} ${main.toFixed(3).padStart(12)} ${adds.padStart(15)}`,
    );
    before = cpu;
  }
} finally {
  Bun.spawnSync(["git", "worktree", "remove", "--force", dir], { cwd: ROOT });
  rmSync(dir, { recursive: true, force: true });
}
