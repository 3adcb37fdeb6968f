/**
 * The benchmark's child processes and temporary directories: every child is spawned through
 * `spawnChild` and every directory made through `tempDir`, so that `cleanup` (run on normal exit,
 * on an error and on SIGINT/SIGTERM) kills whatever is still running and removes the directories.
 * Also: free ports, stdout/stderr split into lines, and a process's CPU time and RSS from /proc.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";

/** The project's root: children run from there (`src/index.ts`, `src/localnet/main.ts`). */
export const ROOT = join(import.meta.dir, "../..");
const children = new Set<Subprocess>();
const dirs = new Set<string>();
const finalizers: (() => Promise<void>)[] = [];

export interface Child {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  pid: number;
  /** The last lines of stderr, for error messages. */
  stderrTail: string[];
  exited: Promise<number>;
}

/** A child's environment: only PATH and HOME are inherited (no stray DATABASE_URL or tuning variable). */
const childEnv = (env: Record<string, string>) => ({
  PATH: process.env.PATH ?? "",
  HOME: process.env.HOME ?? "",
  ...env,
});

/** Spawns `cmd` in the project's directory; `onLine` gets each stdout line. */
export function spawnChild(
  cmd: string[],
  env: Record<string, string>,
  onLine: (line: string) => void,
  cwd = ROOT,
): Child {
  const proc = Bun.spawn(cmd, { cwd, env: childEnv(env), stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  return track(proc, onLine);
}

/** Like spawnChild, with a stdin pipe (the load generator's commands). */
export function spawnWithStdin(cmd: string[], env: Record<string, string>, onLine: (line: string) => void) {
  const proc = Bun.spawn(cmd, { cwd: ROOT, env: childEnv(env), stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  return { ...track(proc as unknown as Subprocess<"ignore", "pipe", "pipe">, onLine), stdin: proc.stdin };
}

function track(proc: Subprocess<"ignore", "pipe", "pipe">, onLine: (line: string) => void): Child {
  children.add(proc);
  const stderrTail: string[] = [];
  void eachLine(proc.stdout, onLine);
  void eachLine(proc.stderr, (l) => {
    stderrTail.push(l);
    if (stderrTail.length > 40) stderrTail.shift();
  });
  const exited = proc.exited.finally(() => children.delete(proc));
  return { proc, pid: proc.pid, stderrTail, exited };
}

async function eachLine(stream: ReadableStream<Uint8Array>, fn: (line: string) => void): Promise<void> {
  const decoder = new TextDecoder();
  let rest = "";
  for await (const chunk of stream) {
    rest += decoder.decode(chunk, { stream: true });
    let nl = rest.indexOf("\n");
    while (nl >= 0) {
      fn(rest.slice(0, nl));
      rest = rest.slice(nl + 1);
      nl = rest.indexOf("\n");
    }
  }
  if (rest) fn(rest);
}

/** Sends `signal`, then SIGKILL if the child has not exited within `graceMs`; resolves with its exit code. */
export async function stopChild(child: Child, signal: NodeJS.Signals = "SIGTERM", graceMs = 15_000): Promise<number> {
  child.proc.kill(signal);
  const timer = setTimeout(() => child.proc.kill("SIGKILL"), graceMs);
  try {
    return await child.exited;
  } finally {
    clearTimeout(timer);
  }
}

export function tempDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.add(d);
  return d;
}

export function removeDir(d: string): void {
  rmSync(d, { recursive: true, force: true });
  dirs.delete(d);
}

/** Work to do at clean-up besides killing and removing (dropping a Postgres schema). */
export function atCleanup(fn: () => Promise<void>): void {
  finalizers.push(fn);
}

let cleaning: Promise<void> | null = null;
/** Kills every child still running, runs the finalizers and removes the temporary directories. */
export function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    for (const c of children) c.kill("SIGKILL");
    await Promise.allSettled([...children].map((c) => c.exited));
    for (const fn of finalizers.splice(0)) await fn().catch((e) => console.error(`clean-up: ${e}`));
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    dirs.clear();
  })();
  return cleaning;
}

for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const)
  process.on(sig, () => {
    console.error(`\n${sig}: stopping the benchmark's processes`);
    void cleanup().finally(() => process.exit(130));
  });
process.on("exit", () => {
  // last resort (synchronous): nothing may outlive the benchmark
  for (const c of children) c.kill("SIGKILL");
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A TCP port nobody listens on right now. */
export function freePort(): number {
  const s = Bun.serve({ port: 0, fetch: () => new Response() });
  const port = s.port!;
  s.stop(true);
  return port;
}

/**
 * User + system CPU time of a process, in ms (from /proc/<pid>/stat, at CLK_TCK ticks per second);
 * `mainThread`: only its main thread's (/proc/<pid>/task/<pid>/stat: the JavaScript thread, without
 * the JIT compiler's and the garbage collector's helper threads).
 */
export function cpuMs(pid: number, clkTck: number, mainThread = false): number {
  return (ticks(mainThread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`) * 1000) / clkTck;
}

/** User + system CPU ticks from a /proc stat file (after "pid (comm) ": utime is field 14, stime 15). */
function ticks(statPath: string): number {
  const stat = readFileSync(statPath, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

/**
 * User + system CPU time, in ms, of a process's threads named `name` (/proc/<pid>/task/<tid>/comm):
 * "Worker" is a Bun worker's, which on PGlite is the embedded database's thread.
 */
export function threadsCpuMs(pid: number, clkTck: number, name: string): number {
  let total = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      if (readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim() === name)
        total += ticks(`/proc/${pid}/task/${tid}/stat`);
    } catch {} // a thread that ended meanwhile
  }
  return (total * 1000) / clkTck;
}

/**
 * User + system CPU time, in ms, of each of a process's threads, summed by thread name
 * (/proc/<pid>/task/<tid>/comm; the main thread as "main"), and the process's system time as "(kernel)".
 */
export function cpuByThread(pid: number, clkTck: number): Map<string, number> {
  const by = new Map<string, number>();
  let sys = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const name = tid === String(pid) ? "main" : readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim();
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      by.set(name, (by.get(name) ?? 0) + ((Number(fields[11]) + Number(fields[12])) * 1000) / clkTck);
      sys += (Number(fields[12]) * 1000) / clkTck;
    } catch {} // a thread that ended meanwhile
  }
  by.set("(kernel)", sys);
  return by;
}

/** Resident set size of a process, in MB (/proc/<pid>/status VmRSS). */
export function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

/** The machine's CPU time since boot from /proc/stat, in ticks: all of it, and the busy part (not idle or iowait). */
export function machineTicks(): { total: number; busy: number } {
  const cpu = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = cpu.slice(0, 8).reduce((a, b) => a + b, 0);
  return { total, busy: total - cpu[3]! - cpu[4]! };
}
