/**
 * The relay under test: `src/index.ts` in its own process, configured only through its documented
 * environment (no tuning: the defaults users get), on PGlite in a temporary DATA_DIR or on Postgres
 * in a schema of its own (dropped afterwards). Against the standalone localnet (MAINNET_RPC_URL) or,
 * without it, with its embedded mainnet localnet, whose ledger closes it logs itself.
 *
 * The relay's pino log (stdout) is read for those ledger closes and for problems: every warn,
 * error and fatal line is counted by message, with one example kept (except the expected
 * "LOCAL NETWORK" warning each embedded network logs at boot); other info lines are counted by
 * message; of the access-log lines ("request", one per HTTP request) the slowest /v1/sponsor ones
 * are kept, to see what a stall was.
 *
 * For several instances (`bench/cluster.bench.ts`) the caller passes the schema they share (it owns
 * and drops it), the cluster's environment, and `ready: "health"` (an instance holds only a share of
 * the pool, so the caller waits for the spread itself).
 */
import postgres from "postgres";
import { LedgerCloses } from "./ledger-closes.ts";
import { atCleanup, type Child, freePort, removeDir, spawnChild, stopChild, tempDir } from "./procs.ts";

export const PG_URL = "postgres://postgres@127.0.0.1:5432/test";
const ADMIN_TOKEN = "bench-e2e-admin-token-0123456789";
const LEVELS: Record<number, string> = { 40: "warn", 50: "error", 60: "fatal" };

export type Db = "pglite" | "postgres";

export interface RelayOpts {
  db: Db;
  /** The standalone network; unset: the relay's embedded mainnet, closing a ledger every `embeddedLedgerMs`. */
  upstream?: { rpc: string; passphrase: string; funderSecret: string };
  embeddedLedgerMs?: number;
  /** Run under `bun --cpu-prof --cpu-prof-md`, writing the profile here on exit. */
  cpuProfDir?: string;
  /** Postgres: a schema the caller owns (several instances share it); stop() leaves it. Default: one of its own. */
  schema?: string;
  /** More environment, applied last (over the defaults above). */
  env?: Record<string, string>;
  /** Ready when: GET /health answers 200 and the mainnet pool is all active (default), or /health only. */
  ready?: "pool" | "health";
}

/** A problem the relay logged: how often, and the first line. */
export interface LoggedProblem {
  level: string;
  msg: string;
  count: number;
  example: string;
}

/** The slowest /v1/sponsor access-log lines kept per relay. */
const SLOWEST = 5;

export interface RelayProc {
  url: string;
  pid: number;
  child: Child;
  /** The embedded mainnet's ledger closes (empty against an upstream network). */
  closes: LedgerCloses;
  problems: Map<string, LoggedProblem>;
  /** Info lines by message (the access log's "request" and "ledger closed" not included). */
  infoCounts: Map<string, number>;
  /** The slowest /v1/sponsor access-log lines, slowest first. */
  slowest: { durationMs: number; line: string }[];
  /** /v1/sponsor access-log lines by status, with the first line of each status other than 200. */
  accessStatuses: Map<string, { count: number; example: string }>;
  admin<T>(method: string, path: string, body?: unknown): Promise<T>;
  /** SIGTERM, wait for the exit; then drop the schema and remove DATA_DIR. */
  stop(): Promise<number>;
}

export async function startRelay(opts: RelayOpts): Promise<RelayProc> {
  const port = freePort();
  const dataDir = tempDir("relay-e2e-");
  const schema = opts.schema ?? `bench_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const env: Record<string, string> = {
    PORT: String(port),
    DATA_DIR: dataDir,
    ADMIN_TOKEN,
    LOG_LEVEL: "debug", // the embedded networks' "ledger closed" lines are debug
    MAINNET_CHANNELS: "8",
  };
  if (opts.db === "postgres") {
    env.DATABASE_URL = PG_URL;
    env.DATABASE_SCHEMA = schema;
  }
  if (opts.upstream) {
    env.MAINNET_RPC_URL = opts.upstream.rpc;
    env.MAINNET_PASSPHRASE = opts.upstream.passphrase;
    env.MAINNET_FUNDER_SECRET = opts.upstream.funderSecret;
  } else env.LEDGER_CLOSE_MS = String(opts.embeddedLedgerMs ?? 1000);
  // BENCH_RELAY_ENV: settings added to the relay's (a JSON object; bench:hsm's channel keys in a token)
  Object.assign(env, opts.env, JSON.parse(process.env.BENCH_RELAY_ENV || "{}"));
  const dropSchema = async () => {
    if (opts.db !== "postgres" || opts.schema) return;
    const sql = postgres(PG_URL, { onnotice: () => {}, max: 1 });
    await sql.unsafe(`drop schema if exists "${schema}" cascade`);
    await sql.end();
  };
  atCleanup(dropSchema);

  const closes = new LedgerCloses();
  const problems = new Map<string, LoggedProblem>();
  const infoCounts = new Map<string, number>();
  const slowest: { durationMs: number; line: string }[] = [];
  const accessStatuses = new Map<string, { count: number; example: string }>();
  const onLine = (line: string) => {
    if (!line.startsWith("{")) return;
    if (line.includes('"msg":"request"') && line.includes('"level":30')) {
      // the access log: thousands a second under load, so only a regular expression unless it is slow
      if (!line.includes('"route":"/v1/sponsor"')) return;
      const status = /"status":(\d+)/.exec(line)?.[1] ?? "?";
      const seen = accessStatuses.get(status);
      if (seen) seen.count++;
      else accessStatuses.set(status, { count: 1, example: status === "200" ? "" : line.slice(0, 600) });
      const durationMs = Number(/"durationMs":([0-9.]+)/.exec(line)?.[1] ?? 0);
      if (slowest.length < SLOWEST || durationMs > slowest[slowest.length - 1]!.durationMs) {
        slowest.push({ durationMs, line: line.slice(0, 600) });
        slowest.sort((a, b) => b.durationMs - a.durationMs);
        slowest.length = Math.min(slowest.length, SLOWEST);
      }
      return;
    }
    let j: {
      level?: number;
      msg?: string;
      network?: string;
      ledger?: number;
      closedAtMs?: number;
      appliedAtMs?: number;
    };
    try {
      j = JSON.parse(line);
    } catch {
      return;
    }
    if (j.msg === "ledger closed" && j.network === "mainnet") closes.add(j.ledger!, j.closedAtMs!, j.appliedAtMs!);
    const level = LEVELS[j.level ?? 0];
    if (!level && j.msg !== "ledger closed") infoCounts.set(j.msg ?? "", (infoCounts.get(j.msg ?? "") ?? 0) + 1);
    if (!level || j.msg?.startsWith("LOCAL NETWORK")) return;
    const key = `${level} ${j.msg}`;
    const p = problems.get(key);
    if (p) p.count++;
    else problems.set(key, { level, msg: j.msg ?? "", count: 1, example: line.slice(0, 400) });
  };
  const prof = opts.cpuProfDir ? ["--cpu-prof", "--cpu-prof-md", `--cpu-prof-dir=${opts.cpuProfDir}`] : [];
  // BENCH_RELAY_DIR: another checkout's relay under the same load (bench:compare), else this one's
  const child = spawnChild([process.execPath, ...prof, "src/index.ts"], env, onLine, process.env.BENCH_RELAY_DIR);
  const url = `http://127.0.0.1:${port}`;
  const admin = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${url}/v1/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} /v1/admin${path}: ${res.status} ${text.slice(0, 300)}`);
    return JSON.parse(text) as T;
  };
  const relay: RelayProc = {
    url,
    pid: child.pid,
    child,
    closes,
    problems,
    infoCounts,
    slowest,
    accessStatuses,
    admin,
    stop: async () => {
      const code = await stopChild(child, "SIGTERM", 45_000);
      await dropSchema();
      removeDir(dataDir);
      return code;
    },
  };
  try {
    await waitReady(relay, opts.ready ?? "pool");
  } catch (e) {
    await relay.stop();
    throw e;
  }
  return relay;
}

interface PoolView {
  target: number;
  totals: { active: number; creating: number };
  lastError: string | null;
}

/** Waits for GET /health to answer 200 and (ready "pool") the mainnet pool to have every channel active. */
async function waitReady(relay: RelayProc, ready: "pool" | "health", timeoutMs = 120_000): Promise<void> {
  const t0 = Date.now();
  let last = "no answer yet";
  let exited: number | null = null;
  void relay.child.exited.then((c) => {
    exited = c;
  });
  while (Date.now() - t0 < timeoutMs) {
    if (exited !== null) throw new Error(`relay exited (${exited}): ${relay.child.stderrTail.join("\n")}`);
    try {
      const health = await fetch(`${relay.url}/health`);
      if (health.status !== 200) last = `health ${health.status}`;
      else if (ready === "health") return;
      else {
        const pool = await relay.admin<PoolView>("GET", "/channels?network=mainnet");
        if (pool.totals.active >= pool.target && pool.totals.creating === 0) return;
        last = `pool ${pool.totals.active}/${pool.target} active, lastError ${pool.lastError}`;
      }
    } catch (e) {
      last = e instanceof Error ? e.message : String(e);
    }
    await Bun.sleep(250);
  }
  throw new Error(`relay not ready within ${timeoutMs} ms: ${last}`);
}

/** A project allowed a million requests/s, with 10^15 stroops of credits; its live (mainnet) key. */
export async function projectKey(relay: RelayProc, x402PayTo: string[] = []): Promise<string> {
  const project = await relay.admin<{ id: string }>("POST", "/projects", {
    name: "bench-e2e",
    policy: { requestsPerSecond: 1_000_000, burst: 1_000_000 },
  });
  if (x402PayTo.length) await relay.admin("PATCH", `/projects/${project.id}`, { x402: { payTo: x402PayTo } });
  await relay.admin("POST", `/projects/${project.id}/credits`, { amount: "1000000000000000" });
  const { key } = await relay.admin<{ key: string }>("POST", `/projects/${project.id}/keys`, { environment: "live" });
  return key;
}
