/**
 * `bun run bench:perf`: where the relay's CPU goes under bench:e2e's `fast` load (Postgres, 1,000 req/s
 * after a 20 s warm-up at that rate), read by Linux `perf` instead of Bun's `--cpu-prof`. The sampler
 * of `--cpu-prof` charges a frame with the time its thread waited for a core, and it cannot see native
 * code: on this machine it gave the result check of a confirmation 3.5% of the samples for 0.6 µs a
 * call. perf samples the CPU itself, every thread, kernel included; JavaScriptCore writes a jitdump
 * (`BUN_JSC_useJITDump`) that `perf inject --jit` turns into the compiled functions' names.
 *
 * Prints each thread's share of the relay's samples, and for its main thread: the time by kind
 * (compiled JavaScript, native, kernel), by JavaScript function (with the native and kernel code it
 * called: Bun's binary is stripped), by function with all it called, and the kernel's part by system
 * call. Needs `perf` (Debian: linux-perf) and leave to profile another process (root, or
 * kernel.perf_event_paranoid <= 1). BENCH_PERF_SECONDS (default 8) of the measured phase are recorded (with
 * BENCH_PERF_KEYED=1, of the phase after it, each request with an idempotency key); BENCH_RATES and
 * BENCH_RELAY_DIR as for bench:e2e. BENCH_PERF_SCRIPT=FILE keeps perf script's output (thread, address, symbol,
 * object of each frame, JavaScript functions named) in FILE, to read callers and callees further.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readSamples, summarize, type Summary } from "./perf/samples.ts";

const ROOT = join(import.meta.dir, "..");
const seconds = Number(process.env.BENCH_PERF_SECONDS ?? 8);
const keyed = process.env.BENCH_PERF_KEYED === "1";
const dir = mkdtempSync(join(tmpdir(), "relay-perf-"));
const sh = (cmd: string[], timeoutMs = 300_000) => {
  const r = Bun.spawnSync(cmd, { stdout: "pipe", stderr: "pipe", timeout: timeoutMs });
  if (r.exitCode !== 0) throw new Error(`${cmd.join(" ")}: ${r.stderr.toString().slice(-1500)}`);
  return r.stdout.toString();
};

async function main(): Promise<void> {
  if (Bun.spawnSync(["perf", "--version"]).exitCode !== 0)
    throw new Error("bench:perf needs perf (apt-get install linux-perf)");
  const rate = process.env.BENCH_RATES ?? "1000";
  const env = {
    ...process.env,
    BENCH_DB: "postgres",
    BENCH_STEPS: "fast",
    BENCH_RATES: rate,
    BENCH_WARMUP: `${rate.split(",")[0]},20`,
    BENCH_SECONDS: String(Math.max(10, seconds + 2)),
    BENCH_PROFILE: "0",
    BENCH_LATENCY_PAIRS: "0,0",
    // BENCH_PERF_KEYED=1: the phase whose requests carry idempotency keys (after the plain one) is the one recorded
    BENCH_KEYED_RATE: keyed ? rate.split(",")[0]! : "0",
    BENCH_RELAY_ENV: JSON.stringify({ BUN_JSC_useJITDump: "1", BUN_JSC_jitDumpDirectory: dir }),
  };
  const bench = Bun.spawn([process.execPath, "bench/e2e.bench.ts"], { cwd: ROOT, env, stdout: "pipe", stderr: "pipe" });
  let relayPid = 0;
  let recorded: Promise<void> | null = null;
  const stderr = (async () => {
    const decoder = new TextDecoder();
    let seen = "";
    for await (const chunk of bench.stderr) {
      const text = decoder.decode(chunk, { stream: true });
      process.stderr.write(text);
      seen = (seen + text).slice(-200); // the line may come in two chunks
      if (recorded || !seen.includes(keyed ? "each with an idempotency key" : "open-loop phases")) continue;
      relayPid = Number(
        sh(["pgrep", "-P", String(bench.pid), "-f", "src/index.ts"])
          .trim()
          .split("\n")[0],
      );
      recorded = record(relayPid);
    }
  })();
  const out = await new Response(bench.stdout).text();
  await stderr;
  if ((await bench.exited) !== 0) throw new Error(`bench:e2e failed:\n${out.slice(-2000)}`);
  if (!recorded) throw new Error("the measured phase never started");
  await recorded;
  const what = `${rate} req/s${keyed ? ", each request with an idempotency key" : ""}`;
  console.log(`bench:perf ${new Date().toISOString()}: ${seconds} s of the relay (pid ${relayPid}) at ${what}`);
  // the phase's two table rows (answers, the relay's CPU), each under its header
  const lines = out.split("\n");
  lines.forEach((l, i) => {
    if (!/^postgres\S*\s+[\d,]+\s/.test(l)) return;
    const header = lines.slice(0, i).findLast((h) => h.startsWith("database"));
    console.log(`  ${header}\n  ${l}`);
  });
  const frames = script(relayPid);
  if (process.env.BENCH_PERF_SCRIPT) writeFileSync(process.env.BENCH_PERF_SCRIPT, frames);
  print(summarize(readSamples(frames), threadNames(), relayPid));
}

/** perf's record of the relay over `seconds` of the phase (started 1 s in), with a monotonic clock for the jitdump. */
async function record(pid: number): Promise<void> {
  await Bun.sleep(1000);
  const p = Bun.spawn(
    [
      "perf",
      "record",
      "-k",
      "1",
      "-F",
      "1999",
      "-g",
      "-p",
      String(pid),
      "-o",
      join(dir, "perf.data"),
      "--",
      "sleep",
      String(seconds),
    ],
    {
      stdout: "ignore",
      stderr: "pipe",
    },
  );
  if ((await p.exited) !== 0) throw new Error(`perf record: ${await new Response(p.stderr).text()}`);
  writeFileSync(
    join(dir, "threads"),
    sh(["perf", "report", "-i", join(dir, "perf.data"), "--sort", "pid", "-g", "none", "--stdio"]),
  );
}

/**
 * The compiled functions' names joined to the samples. JavaScriptCore names its dump `jit-<n>-<pid>.dump`;
 * perf inject only reads one named `jit-<pid>.dump` (the name perf saw mapped): the dump is copied under
 * that name and the path in perf.data rewritten in place, padded to the same length.
 */
function script(pid: number): string {
  const dump = readdirSync(dir).find((f) => /^jit-.*\.dump$/.test(f));
  if (!dump) throw new Error(`no jitdump in ${dir}`);
  const named = `jit-${pid}.dump`;
  writeFileSync(join(dir, named), readFileSync(join(dir, dump)));
  const data = readFileSync(join(dir, "perf.data"));
  const from = Buffer.from(join(dir, dump));
  const to = Buffer.alloc(from.length);
  to.write(join(dir, named));
  const at = data.indexOf(from);
  if (at < 0) throw new Error("perf.data does not name the jitdump");
  to.copy(data, at);
  writeFileSync(join(dir, "perf.data"), data);
  sh(["perf", "inject", "--jit", "-i", join(dir, "perf.data"), "-o", join(dir, "perf.jit.data")]);
  return sh(["perf", "script", "-i", join(dir, "perf.jit.data"), "-F", "tid,ip,sym,dso"]);
}

/** Thread ids and names, from perf report's `pid` column (`tid:name`). */
function threadNames(): Map<number, string> {
  const names = new Map<number, string>();
  for (const m of readFileSync(join(dir, "threads"), "utf8").matchAll(/(\d+):(\S.*?)\s*$/gm))
    names.set(Number(m[1]), m[2]!);
  return names;
}

function print(s: Summary): void {
  const pct = (n: number, of: number) => `${((100 * n) / of).toFixed(1).padStart(5)}%`;
  const table = (title: string, rows: [string, number][], of: number, limit = 25) => {
    console.log(`\n${title}`);
    for (const [k, n] of rows.slice(0, limit)) console.log(`  ${pct(n, of)}  ${k}`);
  };
  table(`Threads (${s.samples} samples of the relay's process)`, s.threads, s.samples, 10);
  table(`Main thread (${s.main} samples) by kind`, s.kinds, s.main);
  table("Main thread by JavaScript function, with the native and kernel code it called", s.self, s.main);
  table(
    "Main thread by JavaScript function, with everything it called (a sample counts once per function)",
    s.inclusive,
    s.main,
    40,
  );
  table("Main thread in the kernel, by system call", s.kernel, s.main, 12);
}

try {
  await main();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
