/** Test harness: the whole relay (embedded localnets, fast ledgers) on a random port, plus SDK clients for its networks. */
import { mkdtempSync, rmSync } from "node:fs";
import postgres from "postgres";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Keypair, rpc, TransactionBuilder, Asset, Operation, type Transaction } from "@stellar/stellar-sdk";
import { loadConfig } from "../../src/config.ts";
import { createLogger, type Logger } from "../../src/log.ts";
import { startRelay, type Relay } from "../../src/boot.ts";

export interface TestRelay extends Omit<Relay, "stop"> {
  /** Stops the relay, drops its Postgres schema and removes its DATA_DIR, unless `keepData` (to restart with `env`). */
  stop(opts?: { keepData?: boolean }): Promise<void>;
  /** The environment it was started with (restart with the same to keep its state). */
  env: Record<string, string>;
  rpc: rpc.Server;
  passphrase: string;
  /** Closes a testnet ledger now (for relays started with LEDGER_CLOSE_MS=0). */
  close(): number;
  /** A new testnet account funded by the embedded friendbot. */
  funded(): Promise<Keypair>;
  /** A signed 1-operation payment from `from` (to the localnet root unless given). */
  payment(
    from: Keypair,
    opts?: { amount?: string; to?: string; fee?: string; seqOffset?: bigint },
  ): Promise<Transaction>;
  post(
    path: string,
    body: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; headers: Headers; body: any }>;
  /** A request to the admin API with the test token. */
  admin(method: string, path: string, body?: unknown): Promise<{ status: number; headers: Headers; body: any }>;
  /** A new project (optional policy and credits) with an sr_test_ and an sr_live_ key. */
  project(opts?: {
    policy?: Record<string, unknown>;
    credits?: bigint;
  }): Promise<{ id: string; testKey: string; liveKey: string }>;
}

export const TEST_ADMIN_TOKEN = "test-admin-token-0123456789";

/** Postgres for the relay suites when TEST_DATABASE_URL is set (CI sets it); embedded PGlite otherwise. */
const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;
export const databaseKind = TEST_DATABASE_URL ? "postgres" : "pglite";

async function dropSchema(schema: string): Promise<void> {
  const sql = postgres(TEST_DATABASE_URL!, { max: 1, onnotice: () => {} });
  await sql.unsafe(`drop schema if exists "${schema}" cascade`);
  await sql.end();
}

/**
 * Starts a relay: its own DATA_DIR and, on Postgres, its own schema (dropped by `drop()`), unless
 * `env` names them (a restart). `log`: its logger (default: silent).
 */
export async function startTestRelay(
  env: Record<string, string> = {},
  log: Logger = createLogger("silent"),
): Promise<TestRelay> {
  const full: Record<string, string> = {
    PORT: "0",
    DATA_DIR: env.DATA_DIR ?? mkdtempSync(join(tmpdir(), "relay-")),
    LEDGER_CLOSE_MS: "100",
    WATCHER_POLL_MS: "50",
    SUBMISSION_TIMEOUT_MS: "5000",
    TRY_AGAIN_LATER_MS: "500",
    // suites that test limits set their own; the rest must not run into the open relay's per-IP limit
    ANONYMOUS_POLICY: JSON.stringify({ requestsPerSecond: 100_000, burst: 100_000 }),
    ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    ...(TEST_DATABASE_URL
      ? { DATABASE_URL: TEST_DATABASE_URL, DATABASE_SCHEMA: `t_${crypto.randomUUID().replace(/-/g, "").slice(0, 16)}` }
      : {}),
    ...env,
  };
  const relay = await startRelay(loadConfig(full), log);
  const net = relay.localnets.testnet;
  const server = new rpc.Server(net ? `${relay.url}/localnet/testnet/rpc` : full.TESTNET_RPC_URL!, { allowHttp: true });
  const needNet = () => {
    if (!net) throw new Error("this relay has no embedded testnet");
    return net;
  };
  return {
    ...relay,
    env: full,
    rpc: server,
    passphrase: net?.passphrase ?? full.TESTNET_PASSPHRASE ?? "",
    async stop(opts = {}) {
      await relay.stop();
      if (opts.keepData) return;
      if (full.DATABASE_URL && full.DATABASE_SCHEMA) await dropSchema(full.DATABASE_SCHEMA);
      rmSync(full.DATA_DIR!, { recursive: true, force: true });
    },
    close: () => needNet().closeLedger().sequence,
    async funded() {
      const n = needNet();
      const kp = Keypair.random();
      const pending = fetch(`${relay.url}/localnet/testnet/friendbot?addr=${kp.publicKey()}`);
      if (n.ledgerCloseMs <= 0) {
        await Bun.sleep(20);
        n.closeLedger();
      }
      const r = await pending;
      if (!r.ok) throw new Error(`friendbot ${r.status}`);
      return kp;
    },
    async payment(from, opts = {}) {
      const acc = await server.getAccount(from.publicKey());
      if (opts.seqOffset) for (let i = 0n; i < opts.seqOffset; i++) acc.incrementSequenceNumber();
      const tx = new TransactionBuilder(acc, { fee: opts.fee ?? "100", networkPassphrase: needNet().passphrase })
        .addOperation(
          Operation.payment({
            destination: opts.to ?? needNet().root.publicKey(),
            asset: Asset.native(),
            amount: opts.amount ?? "1",
          }),
        )
        .setTimeout(60)
        .build();
      tx.sign(from);
      return tx;
    },
    post: (path, body, headers = {}) => request(relay.url, "POST", path, body, headers),
    admin: (method, path, body) =>
      request(relay.url, method, `/v1/admin${path}`, body, { authorization: `Bearer ${full.ADMIN_TOKEN}` }),
    async project(opts = {}) {
      const admin = (method: string, path: string, body?: unknown) =>
        request(relay.url, method, `/v1/admin${path}`, body, { authorization: `Bearer ${full.ADMIN_TOKEN}` });
      const p = await admin("POST", "/projects", {
        name: `project ${crypto.randomUUID().slice(0, 8)}`,
        ...(opts.policy ? { policy: opts.policy } : {}),
      });
      if (p.status !== 201) throw new Error(`creating a project: ${p.status} ${JSON.stringify(p.body)}`);
      const test = await admin("POST", `/projects/${p.body.id}/keys`, { environment: "test" });
      const live = await admin("POST", `/projects/${p.body.id}/keys`, { environment: "live" });
      if (opts.credits) {
        const c = await admin("POST", `/projects/${p.body.id}/credits`, { amount: opts.credits.toString() });
        if (c.status !== 200) throw new Error(`adding credits: ${c.status} ${JSON.stringify(c.body)}`);
      }
      return { id: p.body.id, testKey: test.body.key, liveKey: live.body.key };
    },
  };
}

async function request(base: string, method: string, path: string, body: unknown, headers: Record<string, string>) {
  const r = await fetch(`${base}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
  const text = await r.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* keep the text */
  }
  return { status: r.status, headers: r.headers, body: parsed as any };
}

/** A logger that keeps its JSON lines (parsed) in `lines`, to check what the relay logs. */
export function capturingLogger(level = "info"): { log: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  return {
    log: createLogger(level, {
      write: (s: string) => {
        lines.push(JSON.parse(s));
      },
    }),
    lines,
  };
}
