/**
 * A cluster of relay instances for the benchmark, each `src/index.ts` in its own process
 * (`bench/e2e/relay-proc.ts`), in cluster mode: one fresh Postgres schema and one fresh Redis key
 * prefix for all (on the Redis of `redis-proc.ts`), the same CHANNEL_ENCRYPTION_KEY, both networks
 * upstream (two standalone localnets with the public passphrases), one funder per network
 * (friendbot-funded), INSTANCE_ID i0, i1, …. Everything else is the relay's default, as users get it.
 *
 * The first instance starts alone (it creates the schema and runs the migrations), then the others
 * together; `waitSpread` waits until the mainnet pool is all active and every instance holds its
 * fair share. `stop` stops the instances (SIGTERM), then drops the schema and deletes the keys under
 * the prefix; both are also registered with the benchmark's clean-up (errors, Ctrl-C).
 */
import { Keypair } from "@stellar/stellar-sdk";
import { Redis } from "ioredis";
import postgres from "postgres";
import type { LocalnetProc } from "../e2e/localnet-proc.ts";
import { atCleanup } from "../e2e/procs.ts";
import { PG_URL, type RelayProc, startRelay } from "../e2e/relay-proc.ts";
import type { RedisTarget } from "./redis-proc.ts";

export interface Nets {
  testnet: LocalnetProc;
  mainnet: LocalnetProc;
}

/** An instance's GET /v1/admin/channels?network=mainnet, the parts read here. */
export interface PoolView {
  instance?: string;
  target: number;
  totals: { active: number; creating: number; draining: number };
  /** Every channel of the pool, each with the instance holding it. */
  channels: { state: string; holder: string | null }[];
  lastError: string | null;
}

export interface ClusterProc {
  ids: string[];
  instances: RelayProc[];
  schema: string;
  prefix: string;
  /** Every instance's mainnet pool, in instance order. */
  pools(): Promise<PoolView[]>;
  /** Waits for the whole target active and a fair share on each instance; the pools then (or at the timeout). */
  waitSpread(timeoutMs?: number): Promise<{ pools: PoolView[]; spread: boolean; ms: number }>;
  /** Stops every instance; their exit codes. Then drops the schema and deletes the Redis keys. */
  stop(): Promise<number[]>;
}

async function funded(net: LocalnetProc): Promise<Keypair> {
  const kp = Keypair.random();
  const res = await fetch(`${net.friendbot}?addr=${kp.publicKey()}`);
  if (!res.ok) throw new Error(`friendbot (${net.passphrase}) answered ${res.status}`);
  return kp;
}

/** Deletes every key under `prefix` (SCAN, then DEL). */
export async function deleteKeys(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, retryStrategy: () => null });
  redis.on("error", () => {});
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

async function dropSchema(schema: string): Promise<void> {
  const sql = postgres(PG_URL, { onnotice: () => {}, max: 1 });
  try {
    await sql.unsafe(`drop schema if exists "${schema}" cascade`);
  } finally {
    await sql.end();
  }
}

export async function startCluster(
  size: number,
  nets: Nets,
  channels: number,
  redis: RedisTarget,
): Promise<ClusterProc> {
  const id = crypto.randomUUID().replaceAll("-", "");
  const schema = `bench_cl_${id.slice(0, 12)}`;
  const prefix = `bench:cl:${id}:`;
  let removed = false;
  const remove = async () => {
    if (removed) return;
    removed = true;
    await dropSchema(schema);
    // a private Redis already stopped (Ctrl-C) took the keys with it
    await deleteKeys(redis.url, prefix).catch((e) => {
      if (redis.pid === null) throw e;
    });
  };
  atCleanup(remove);
  const [testFunder, mainFunder] = await Promise.all([funded(nets.testnet), funded(nets.mainnet)]);
  const shared: Record<string, string> = {
    REDIS_URL: redis.url,
    REDIS_PREFIX: prefix,
    CHANNEL_ENCRYPTION_KEY: Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64"),
    TESTNET_RPC_URL: nets.testnet.rpc,
    TESTNET_PASSPHRASE: nets.testnet.passphrase,
    TESTNET_FUNDER_SECRET: testFunder.secret(),
    TESTNET_CHANNELS: "1",
    MAINNET_CHANNELS: String(channels),
  };
  const ids = Array.from({ length: size }, (_, k) => `i${k}`);
  const start = (k: number) =>
    startRelay({
      db: "postgres",
      upstream: { rpc: nets.mainnet.rpc, passphrase: nets.mainnet.passphrase, funderSecret: mainFunder.secret() },
      schema,
      env: { ...shared, INSTANCE_ID: ids[k]! },
      ready: "health",
    });
  const instances: RelayProc[] = [];
  const stopAll = async () => {
    const codes = await Promise.all(instances.map((r) => r.stop()));
    await remove();
    return codes;
  };
  try {
    // the first creates the schema and runs the migrations alone; then the others at once
    instances.push(await start(0));
    const rest = await Promise.allSettled(ids.slice(1).map((_, k) => start(k + 1)));
    for (const r of rest) if (r.status === "fulfilled") instances.push(r.value);
    const failed = rest.find((r) => r.status === "rejected");
    if (failed) throw failed.reason;
  } catch (e) {
    await stopAll().catch(() => {});
    throw e;
  }
  const pools = () => Promise.all(instances.map((r) => r.admin<PoolView>("GET", "/channels?network=mainnet")));
  const waitSpread = async (timeoutMs = 120_000) => {
    const t0 = Date.now();
    const fair = Math.floor(channels / size);
    for (;;) {
      const p = await pools().catch(() => null);
      const spread =
        p !== null &&
        p.reduce((a, v) => a + heldActive(v), 0) === channels &&
        p.every((v) => heldActive(v) >= fair && v.totals.creating === 0 && v.totals.draining === 0);
      if (p && (spread || Date.now() - t0 > timeoutMs)) return { pools: p, spread, ms: Date.now() - t0 };
      if (Date.now() - t0 > timeoutMs + 30_000) throw new Error("the instances' pools did not answer");
      await Bun.sleep(250);
    }
  };
  return { ids, instances, schema, prefix, pools, waitSpread, stop: stopAll };
}

/** The active channels the answering instance holds (any instance lists the whole pool, with each holder). */
export const heldActive = (v: PoolView): number =>
  v.channels.filter((c) => c.state === "active" && c.holder === v.instance).length;
