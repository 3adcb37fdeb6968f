/**
 * Several relay instances in processes of their own, in cluster mode: one Postgres schema, one Redis
 * key prefix and one CHANNEL_ENCRYPTION_KEY for all, both networks upstream. The networks are two
 * standalone localnets (`bun run localnet`) with the public testnet's and mainnet's passphrases, each
 * with a funder account its friendbot funded.
 *
 * `startCluster` starts the first instance alone (it creates the schema and runs the migrations),
 * then the others together. `stop()` kills the relays (SIGTERM, then SIGKILL), the localnets, drops
 * the schema, deletes the Redis keys under the prefix and removes the instances' DATA_DIRs; it is
 * safe to call twice, and a start that fails halfway stops what it had started before throwing.
 *
 * The relays' stderr, and their stdout's warnings and errors, are shown prefixed with the instance's
 * id (DEBUG_CHILD=1: every line).
 */
import { Keypair, Networks, rpc } from "@stellar/stellar-sdk";
import type { Subprocess } from "bun";
import { Redis } from "ioredis";
import { join } from "node:path";
import postgres from "postgres";
import { spawnLocalnet, tempDir, type Proc } from "./processes.ts";
import { REDIS_URL } from "./redis.ts";
import { TEST_ADMIN_TOKEN } from "./relay.ts";

export type NetworkName = "testnet" | "mainnet";

export interface ClusterOptions {
  instances: number;
  mainnetChannels: number;
  /** Default 2. */
  testnetChannels?: number;
  /** Extra environment of every instance (overrides the defaults below). */
  env?: Record<string, string>;
  /** Extra environment of instance `k` (overrides `env`). */
  instanceEnv?: Record<number, Record<string, string>>;
  /** The upstream networks' ledger interval (default LEDGER_CLOSE_MS, 500 ms). */
  ledgerCloseMs?: number;
}

/** A standalone localnet the instances use as an upstream network. */
export interface ClusterNet {
  name: NetworkName;
  /** Its HTTP root (friendbot at /friendbot). */
  url: string;
  rpcUrl: string;
  passphrase: string;
  server: rpc.Server;
  /** The account funding the instances' channel accounts (funded by friendbot at start). */
  funder: Keypair;
  proc: Proc;
  /** Has friendbot fund `kp` (10,000 XLM); answers `kp`. */
  fund(kp: Keypair): Promise<Keypair>;
  /** `n` new accounts, funded concurrently (friendbot puts them in one ledger). */
  funded(n: number): Promise<Keypair[]>;
}

export interface Cluster {
  instances: RelayInstance[];
  nets: Record<NetworkName, ClusterNet>;
  /** The Postgres schema all instances share. */
  schema: string;
  /** The Redis key prefix all instances share. */
  prefix: string;
  /** How long `startCluster` took. */
  startedInMs: number;
  /** A JSON request to instance `i`'s admin API (`path` under /v1/admin) with the admin token. */
  admin(i: number, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  /** Instance `i`'s GET /v1/admin/channels?network=… body (an error's body when it is not 200). */
  channels(i: number, network: NetworkName): Promise<any>;
  /** Stops and removes everything; safe to call twice. */
  stop(): Promise<void>;
}

const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;
const PASSPHRASES: Record<NetworkName, string> = { testnet: Networks.TESTNET, mainnet: Networks.PUBLIC };
const LEDGER_CLOSE_MS = "500";
const RELAY_READY = "relay listening";
/** How long an instance may take to log RELAY_READY. */
const START_TIMEOUT_MS = 60_000;
/** How long a SIGTERM'd process may take to exit before it gets SIGKILL. */
const TERM_GRACE_MS = 5_000;
/** Lines of an instance's stderr kept for the error when it exits before it is ready. */
const STDERR_TAIL = 20;

const ROOT = join(import.meta.dir, "..", "..");

/** Starts the localnets and `opts.instances` relays; see the header. */
export async function startCluster(opts: ClusterOptions): Promise<Cluster> {
  if (!TEST_DATABASE_URL) throw new Error("startCluster needs TEST_DATABASE_URL (cluster mode runs on Postgres)");
  const t0 = Date.now();
  const teardown = new Teardown();
  const schema = `t_${crypto.randomUUID().replace(/-/g, "").slice(0, 16)}`;
  const prefix = `test:cl:${crypto.randomUUID()}:`;
  const instances: RelayInstance[] = [];
  // registered first, run last: nothing of the run is left in Postgres or Redis
  teardown.add(() => dropSchema(TEST_DATABASE_URL, schema));
  teardown.add(() => deleteRedisKeys(prefix));
  try {
    const close = String(opts.ledgerCloseMs ?? LEDGER_CLOSE_MS);
    const [testnet, mainnet] = await Promise.all([
      startNet("testnet", teardown, close),
      startNet("mainnet", teardown, close),
    ]);
    const nets = { testnet, mainnet };
    const shared = clusterEnv({ nets, schema, prefix, ...opts });
    for (let k = 0; k < opts.instances; k++) {
      const data = tempDir(`relay-cluster-i${k}-`);
      teardown.add(async () => data.done());
      const own = opts.instanceEnv?.[k] ?? {};
      instances.push(new RelayInstance(`i${k}`, { ...shared, ...own, INSTANCE_ID: `i${k}`, DATA_DIR: data.path }));
    }
    // run before the DATA_DIRs are removed and the networks stopped
    teardown.add(() => Promise.all(instances.map((r) => r.kill("SIGTERM"))));
    // the first creates the schema and runs the migrations alone; then the others at once
    await instances[0]?.start();
    await Promise.all(instances.slice(1).map((r) => r.start()));
    return clusterOf({ instances, nets, schema, prefix, startedInMs: Date.now() - t0, stop: () => teardown.run() });
  } catch (e) {
    await teardown.run().catch((cleanup) => console.error(`stopping a cluster that failed to start: ${cleanup}`));
    throw e;
  }
}

/** The Cluster's request helpers around its parts. */
function clusterOf(parts: Omit<Cluster, "admin" | "channels">): Cluster {
  const admin = async (i: number, method: string, path: string, body?: unknown) => {
    const instance = parts.instances[i];
    if (!instance) throw new Error(`no instance ${i}`);
    const res = await fetch(`${instance.url}/v1/admin${path}`, {
      method,
      headers: {
        authorization: `Bearer ${TEST_ADMIN_TOKEN}`,
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
      },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json().catch(() => null)) as any };
  };
  return {
    ...parts,
    admin,
    channels: async (i, network) => (await admin(i, "GET", `/channels?network=${network}`)).body,
  };
}

/** The environment every instance shares (INSTANCE_ID and DATA_DIR are added per instance). */
function clusterEnv(o: ClusterOptions & { nets: Record<NetworkName, ClusterNet>; schema: string; prefix: string }) {
  const key = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64");
  return {
    LOG_LEVEL: "info",
    ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    DATABASE_URL: TEST_DATABASE_URL!,
    DATABASE_SCHEMA: o.schema,
    REDIS_URL,
    REDIS_PREFIX: o.prefix,
    CLUSTER_LEASE_MS: "3000",
    CHANNEL_ENCRYPTION_KEY: key,
    TESTNET_RPC_URL: o.nets.testnet.rpcUrl,
    TESTNET_PASSPHRASE: o.nets.testnet.passphrase,
    TESTNET_FUNDER_SECRET: o.nets.testnet.funder.secret(),
    TESTNET_CHANNELS: String(o.testnetChannels ?? 2),
    MAINNET_RPC_URL: o.nets.mainnet.rpcUrl,
    MAINNET_PASSPHRASE: o.nets.mainnet.passphrase,
    MAINNET_FUNDER_SECRET: o.nets.mainnet.funder.secret(),
    MAINNET_CHANNELS: String(o.mainnetChannels),
    WATCHER_POLL_MS: "100",
    RPC_TIMEOUT_MS: "3000",
    SUBMISSION_TIMEOUT_MS: "8000",
    RECOVERY_INTERVAL_MS: "500",
    SHUTDOWN_GRACE_MS: "2000",
    CHECKPOINT_DEBOUNCE_MS: "10",
    ANONYMOUS_POLICY: JSON.stringify({ requestsPerSecond: 100_000, burst: 100_000 }),
    ...o.env,
  };
}

/** A standalone localnet with `name`'s public passphrase and a funded funder; stopped by `teardown`. */
async function startNet(name: NetworkName, teardown: Teardown, closeMs: string): Promise<ClusterNet> {
  const proc = await spawnLocalnet({ LOCALNET_PASSPHRASE: PASSPHRASES[name], LEDGER_CLOSE_MS: closeMs });
  teardown.add(() => proc.kill("SIGTERM"));
  const fund = async (kp: Keypair) => {
    const res = await fetch(`${proc.url}/friendbot?addr=${kp.publicKey()}`);
    if (!res.ok) throw new Error(`${name} friendbot ${res.status}: ${await res.text()}`);
    return kp;
  };
  const funder = await fund(Keypair.random());
  return {
    name,
    url: proc.url,
    rpcUrl: proc.rpcUrl,
    passphrase: proc.passphrase,
    server: new rpc.Server(proc.rpcUrl, { allowHttp: true }),
    funder,
    proc,
    fund,
    funded: (n) => Promise.all(Array.from({ length: n }, () => fund(Keypair.random()))),
  };
}

/**
 * One relay instance (`bun src/index.ts`) on a random port. Its process is known from the moment it
 * is spawned, so that a stop during a start kills it too.
 */
export class RelayInstance {
  url = "";
  proc: Subprocess<"ignore", "pipe", "pipe"> | null = null;
  /** Warning and error log lines (JSON) of its stdout, over all its runs. */
  readonly warnings: string[] = [];

  constructor(
    /** Its INSTANCE_ID. */
    readonly id: string,
    /** Its whole environment (the same on a restart: DATA_DIR, INSTANCE_ID, schema, prefix). */
    readonly env: Record<string, string>,
  ) {}

  get running(): boolean {
    return this.proc !== null && this.proc.exitCode === null && this.proc.signalCode === null;
  }

  /** Spawns it and waits for "relay listening" (throws with its stderr's last lines if it exits first). */
  async start(): Promise<void> {
    if (this.running) throw new Error(`instance ${this.id} is running`);
    const proc = Bun.spawn(["bun", "src/index.ts"], {
      cwd: ROOT,
      env: { ...process.env, PORT: "0", ...this.env },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    this.proc = proc;
    const port = await this.untilReady(proc);
    this.url = `http://127.0.0.1:${port}`;
  }

  /** Sends `signal` (default SIGKILL) and waits for the exit; SIGKILL follows any other signal unobeyed for 5 s. */
  async kill(signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
    const proc = this.proc;
    if (!proc || !this.running) return;
    proc.kill(signal);
    if (signal === "SIGKILL") {
      await proc.exited;
      return;
    }
    const timer = setTimeout(() => proc.kill("SIGKILL"), TERM_GRACE_MS);
    await proc.exited;
    clearTimeout(timer);
  }

  /** Stops it (SIGTERM) if it runs, and starts it again with the same environment (a new port: see `url`). */
  async restart(): Promise<void> {
    await this.kill("SIGTERM");
    await this.start();
  }

  /** Reads the process's output until its ready line; the port it logged. */
  private untilReady(proc: Subprocess<"ignore", "pipe", "pipe">): Promise<number> {
    const tag = `[${this.id}]`;
    const stderr: string[] = [];
    const stderrDone = eachLine(proc.stderr, (line) => {
      stderr.push(line);
      if (stderr.length > STDERR_TAIL) stderr.shift();
      console.error(`${tag} ${line}`);
    });
    return new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => {
        proc.kill("SIGKILL");
        reject(new Error(`instance ${this.id} did not log "${RELAY_READY}" within ${START_TIMEOUT_MS} ms`));
      }, START_TIMEOUT_MS);
      void eachLine(proc.stdout, (line) => {
        const json = parseJson(line);
        if (json?.msg === RELAY_READY) {
          clearTimeout(timer);
          resolve(Number(json.port));
        }
        const warning = typeof json?.level === "number" && json.level >= 40;
        if (warning) this.warnings.push(line);
        if (warning || process.env.DEBUG_CHILD) console.error(`${tag} ${line}`);
      });
      void proc.exited.then(async (code) => {
        clearTimeout(timer);
        await stderrDone;
        const why = stderr.length ? `:\n${stderr.join("\n")}` : "";
        // no effect once resolved
        reject(new Error(`instance ${this.id} exited before "${RELAY_READY}" (code ${code})${why}`));
      });
    });
  }
}

/** Calls `fn` with each line of `stream` until it ends. */
async function eachLine(stream: ReadableStream<Uint8Array>, fn: (line: string) => void): Promise<void> {
  const decoder = new TextDecoder();
  let buffered = "";
  try {
    for await (const chunk of stream) {
      buffered += decoder.decode(chunk, { stream: true });
      const lines = buffered.split("\n");
      buffered = lines.pop()!;
      for (const line of lines) if (line) fn(line);
    }
  } catch {
    /* the process is gone */
  }
  if (buffered) fn(buffered);
}

function parseJson(line: string): Record<string, any> | null {
  try {
    const j = JSON.parse(line);
    return j && typeof j === "object" ? j : null;
  } catch {
    return null;
  }
}

async function dropSchema(url: string, schema: string): Promise<void> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await sql.unsafe(`drop schema if exists "${schema}" cascade`);
  } finally {
    await sql.end();
  }
}

async function deleteRedisKeys(prefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
      if (keys.length) await redis.del(...keys);
      cursor = next;
    } while (cursor !== "0");
  } finally {
    redis.disconnect();
  }
}

/**
 * Undo steps run once, last added first; every step runs even when one fails (the first failure is
 * thrown at the end). A second `run()` waits for the first; a step added after `run()` (by a start
 * still under way when another failed) runs at once.
 */
class Teardown {
  private readonly steps: (() => Promise<unknown>)[] = [];
  private running: Promise<void> | null = null;

  add(step: () => Promise<unknown>): void {
    if (this.running) void step().catch((e) => console.error(`cleaning up: ${e}`));
    else this.steps.push(step);
  }

  run(): Promise<void> {
    this.running ??= (async () => {
      const errors: unknown[] = [];
      for (const step of this.steps.splice(0).reverse()) await step().catch((e) => errors.push(e));
      if (errors.length) throw errors[0];
    })();
    return this.running;
  }
}
