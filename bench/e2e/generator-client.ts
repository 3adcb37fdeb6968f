/**
 * The orchestrator's side of the load generator: spawns `generator.ts` as its own process and
 * sends it commands (`protocol.ts`), one JSON line each, resolving with the matching reply.
 */
import type {
  Command,
  FundReply,
  InitReply,
  LatencyCmd,
  LatencyReply,
  PrepareCmd,
  PrepareReply,
  RefreshReply,
  RunReply,
} from "./protocol.ts";
import { type Child, spawnWithStdin, stopChild } from "./procs.ts";

export class Generator {
  private nextId = 1;
  private waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private readonly child: Child;
  /** The generator's process id (its CPU time is reported next to the relay's). */
  readonly pid: number;
  private readonly stdin: import("bun").FileSink;

  constructor() {
    const spawned = spawnWithStdin(
      [process.execPath, "run", "bench/e2e/generator.ts"],
      // thousands of requests in flight at once (Bun's fetch allows 256 by default)
      { BUN_CONFIG_MAX_HTTP_REQUESTS: "65535" },
      (line) => this.onLine(line),
    );
    this.child = spawned;
    this.pid = spawned.pid;
    this.stdin = spawned.stdin;
    void this.child.exited.then((code) => {
      for (const w of this.waiting.values())
        w.reject(new Error(`load generator exited (${code}): ${this.child.stderrTail.join("\n")}`));
      this.waiting.clear();
    });
  }

  private onLine(line: string): void {
    if (!line.startsWith("{")) return;
    const { id, result, error } = JSON.parse(line) as { id: number; result?: unknown; error?: string };
    const w = this.waiting.get(id);
    if (!w) return;
    this.waiting.delete(id);
    if (error) w.reject(new Error(`load generator: ${error}`));
    else w.resolve(result);
  }

  private call<T>(cmd: Command): Promise<T> {
    const id = this.nextId++;
    const reply = new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
    });
    this.stdin.write(`${JSON.stringify({ id, ...cmd })}\n`);
    this.stdin.flush();
    return reply;
  }

  init(rpc: string, friendbot: string) {
    return this.call<InitReply>({ cmd: "init", rpc, friendbot });
  }
  fund(count: number) {
    return this.call<FundReply>({ cmd: "fund", count });
  }
  refresh() {
    return this.call<RefreshReply>({ cmd: "refresh" });
  }
  latency(c: Omit<LatencyCmd, "cmd">) {
    return this.call<LatencyReply>({ cmd: "latency", ...c });
  }
  prepare(c: Omit<PrepareCmd, "cmd">) {
    return this.call<PrepareReply>({ cmd: "prepare", ...c });
  }
  run(capMs: number) {
    return this.call<RunReply>({ cmd: "run", capMs });
  }
  async stop(): Promise<void> {
    await stopChild(this.child, "SIGTERM", 5_000);
  }
}
