/**
 * The network and the relay in processes of their own, for tests where one of them must die
 * (kill -9) or misbehave while the other goes on: `bun run localnet` and `bun run start`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";

const ROOT = join(import.meta.dir, "..", "..");

export interface Proc {
  proc: Subprocess<"ignore", "pipe", "inherit">;
  /** The first log line that matched (parsed JSON). */
  ready: Record<string, unknown>;
  /** Warning and error log lines after that one. */
  warnings: string[];
  /** Every log line after that one. */
  lines: string[];
  /** Resolves once the child's stdout has ended and every line of it is in `lines`. */
  drained: Promise<void>;
  kill(signal?: number | NodeJS.Signals): Promise<void>;
}

/** Starts `bun <script>` and waits for a JSON log line whose `msg` is `readyMsg`. */
export async function spawn(
  script: string,
  env: Record<string, string>,
  readyMsg: string,
  timeoutMs = 30_000,
  cwd = ROOT,
): Promise<Proc> {
  const proc = Bun.spawn(["bun", script], {
    cwd,
    env: { ...process.env, ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "inherit",
  });
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  const deadline = Date.now() + timeoutMs;
  let ready: Record<string, unknown> | null = null;
  // every line after the ready one; warnings and errors are also kept apart and shown (DEBUG_CHILD=1: all)
  const lines: string[] = [];
  const warnings: string[] = [];
  const after = (line: string) => {
    if (!line) return;
    lines.push(line);
    const warning = /"level":(4|5|6)0/.test(line);
    if (warning) warnings.push(line);
    if (process.env.DEBUG_CHILD || warning) console.error(`[${script}] ${line}`);
  };
  const take = (chunk: string) => {
    buffered += chunk;
    const complete = buffered.split("\n");
    buffered = complete.pop()!;
    for (const line of complete) {
      if (ready) after(line);
      else
        try {
          const j = JSON.parse(line) as Record<string, unknown>;
          if (j.msg === readyMsg) ready = j;
        } catch {
          /* not JSON */
        }
    }
  };
  while (!ready) {
    if (Date.now() > deadline) throw new Error(`${script} did not log "${readyMsg}" within ${timeoutMs} ms`);
    const { value, done } = await reader.read();
    if (done) throw new Error(`${script} exited before "${readyMsg}" (code ${await proc.exited})`);
    take(decoder.decode(value, { stream: true }));
  }
  // keep draining stdout so the child never blocks on a full pipe
  const drained = (async () => {
    for (;;) {
      const r = await reader.read().catch(() => ({ done: true as const, value: undefined }));
      if (r.done) return after(buffered);
      take(decoder.decode(r.value, { stream: true }));
    }
  })();
  return {
    proc,
    ready,
    warnings,
    lines,
    drained,
    async kill(signal = "SIGKILL") {
      proc.kill(signal);
      await proc.exited;
    },
  };
}

/** A standalone localnet (`bun run localnet`) on a random port. */
export async function spawnLocalnet(
  env: Record<string, string> = {},
): Promise<Proc & { rpcUrl: string; url: string; passphrase: string }> {
  const p = await spawn(
    "src/localnet/main.ts",
    { LOCALNET_PORT: "0", LEDGER_CLOSE_MS: "1000", ...env },
    "localnet listening",
  );
  const url = `http://127.0.0.1:${p.ready.port}`;
  return { ...p, url, rpcUrl: `${url}/rpc`, passphrase: String(p.ready.passphrase) };
}

/** A relay (`bun run start`) on a random port; `env` is kept so that the same relay can be started again. */
export async function spawnRelay(env: Record<string, string>): Promise<Proc & { url: string }> {
  const p = await spawn("src/index.ts", { PORT: "0", LOG_LEVEL: "info", ...env }, "relay listening", 60_000);
  return { ...p, url: `http://127.0.0.1:${p.ready.port}` };
}

/** A temporary folder removed by `done()`. */
export function tempDir(prefix: string): { path: string; done: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, done: () => rmSync(path, { recursive: true, force: true }) };
}

/** An answer's status and JSON body (null when it has none). */
export async function jsonOf(url: string, init?: RequestInit): Promise<{ status: number; body: any }> {
  const r = await fetch(url, init);
  return { status: r.status, body: (await r.json().catch(() => null)) as any };
}

/**
 * The admin API of a spawned relay (`url()`: its current address, which a restart changes), and a wait
 * for a network's pool to have `active` channels (answers its view).
 */
export function adminOf(url: () => string, token: string) {
  const admin = (method: string, path: string, body?: unknown) =>
    jsonOf(`${url()}/v1/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
  const poolReady = async (network: string, active: number) => {
    for (let i = 0; ; i++) {
      const view = (await admin("GET", `/channels?network=${network}`)).body;
      if (view?.totals?.active === active) return view;
      if (i > 600) throw new Error(`the ${network} pool did not start`);
      await Bun.sleep(50);
    }
  };
  return { admin, poolReady };
}
