/**
 * Test harness: the whole relay (embedded localnets, fast ledgers) on a random port; requests to its
 * app in this process (`post`, `admin`, `http`) or over its socket (`tcp`), and SDK clients for its networks.
 */
import { mkdtempSync, rmSync } from "node:fs";
import postgres from "postgres";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  Account,
  Keypair,
  rpc,
  TransactionBuilder,
  Asset,
  Operation,
  type Transaction,
  type xdr,
} from "@stellar/stellar-sdk";
import { loadConfig } from "../../src/config.ts";
import { createLogger, type Logger } from "../../src/kernel/log.ts";
import { startRelay, type Relay } from "../../src/boot/boot.ts";
import { inProcess, overTcp, type Http, type Res } from "./harness.ts";
import { seedPglite } from "./pglite.ts";

export interface TestRelay extends Omit<Relay, "stop"> {
  /** Stops the relay, drops its Postgres schema and removes its DATA_DIR, unless `keepData` (to restart with `env`). */
  stop(opts?: { keepData?: boolean }): Promise<void>;
  /** The environment it was started with (restart with the same to keep its state). */
  env: Record<string, string>;
  rpc: rpc.Server;
  passphrase: string;
  /** Closes a testnet ledger now (for relays started with LEDGER_CLOSE_MS=0). */
  close(): number;
  /** A new testnet account funded by the embedded friendbot (with 10,000 XLM; never handed out before). */
  funded(): Promise<Keypair>;
  /**
   * A signed 1-operation payment from `from` (to the localnet root unless given); `seqOffset` > 0
   * skips numbers (held for its predecessors by order flow), < 0 uses one already used (tx_bad_seq).
   */
  payment(
    from: Keypair,
    opts?: { amount?: string; to?: string; fee?: string; seqOffset?: bigint },
  ): Promise<Transaction>;
  /** Requests to the relay's app in this process (`app.handle`), the admin API's with the test token. */
  http: Http;
  /** The same over a socket to `url`: where the client's address or the server itself matters. */
  tcp: Http;
  /** `http.post`. */
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<Res>;
  /** `http.admin`: a request to the admin API with the test token. */
  admin(method: string, path: string, body?: unknown): Promise<Res>;
  /** A new project (optional policy and credits) with an sr_test_ and an sr_live_ key. */
  project(opts?: {
    policy?: Record<string, unknown>;
    credits?: bigint;
    /** The addresses it accepts x402 payments to (x402.payTo). */
    x402PayTo?: string[];
  }): Promise<{ id: string; testKey: string; liveKey: string }>;
}

export const TEST_ADMIN_TOKEN = "test-admin-token-0123456789";

/**
 * For tests of what follows a 504: ledgers close only when the test says, a request gives up after
 * 300 ms, and recovery runs every 100 ms.
 */
export const AFTER_504_ENV = { LEDGER_CLOSE_MS: "0", SUBMISSION_TIMEOUT_MS: "300", RECOVERY_INTERVAL_MS: "100" };
/** How many testnet accounts `funded()` has friendbot fund at once (each waits for a ledger otherwise). */
const FUNDED_AHEAD = 16;

/** Postgres for the relay suites when TEST_DATABASE_URL is set (CI sets it); embedded PGlite otherwise. */
const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;
export const databaseKind = TEST_DATABASE_URL ? "postgres" : "pglite";
/** The databases a suite that runs on both runs on: embedded PGlite always, Postgres too when there is one. */
export const databaseKinds = databaseKind === "postgres" ? ["pglite", "postgres"] : ["pglite"];
/**
 * The suites that run the store's batch statements also run on Postgres without prepared statements
 * (`?prepare=false` in DATABASE_URL, as behind a pooler in transaction mode).
 */
export const UNPREPARED = "postgres, prepare=false";
export const storeKinds = databaseKind === "postgres" ? [...databaseKinds, UNPREPARED] : databaseKinds;
/** The environment of a relay on `kind` (PGlite: no DATABASE_URL even when the suite has one). */
export const databaseEnv = (kind: string): Record<string, string> =>
  kind === "pglite"
    ? { DATABASE_URL: "", DATABASE_SCHEMA: "" }
    : kind === UNPREPARED
      ? { DATABASE_URL: `${TEST_DATABASE_URL}?prepare=false` }
      : {};

async function dropSchema(schema: string): Promise<void> {
  const sql = postgres(TEST_DATABASE_URL!, { max: 1, onnotice: () => {} });
  await sql.unsafe(`drop schema if exists "${schema}" cascade`);
  await sql.end();
}

/**
 * Starts a relay: its own DATA_DIR and, on Postgres, its own schema (dropped by `stop()`), unless
 * `env` names them (a restart). On PGlite a new DATA_DIR starts with the database a first start
 * creates, copied (test/support/pglite.ts: initdb runs once per test process, not once per relay).
 * `log`: its logger (default: silent).
 */
export async function startTestRelay(
  env: Record<string, string> = {},
  log: Logger = createLogger("silent"),
): Promise<TestRelay> {
  const fresh = !env.DATA_DIR;
  const full: Record<string, string> = {
    PORT: "0",
    DATA_DIR: env.DATA_DIR ?? mkdtempSync(join(tmpdir(), "relay-")),
    // fast ledgers: a sponsor request or a friendbot call waits for one (each close also writes the localnet's
    // snapshot, which grows with its ledgers: much faster and a relay that lives a minute spends a core on it)
    LEDGER_CLOSE_MS: "50",
    WATCHER_POLL_MS: "50",
    SUBMISSION_TIMEOUT_MS: "5000",
    TRY_AGAIN_LATER_MS: "500",
    // a transaction ahead of its account's sequence is held this long for its predecessor (order flow)
    SEQUENCE_HOLD_MS: "1000",
    // suites that test limits set their own; the rest must not run into the open relay's per-IP limit
    ANONYMOUS_POLICY: JSON.stringify({ requestsPerSecond: 100_000, burst: 100_000 }),
    ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    ...(TEST_DATABASE_URL
      ? { DATABASE_URL: TEST_DATABASE_URL, DATABASE_SCHEMA: `t_${crypto.randomUUID().replace(/-/g, "").slice(0, 16)}` }
      : {}),
    ...env,
  };
  if (fresh && !full.DATABASE_URL) await seedPglite(full.DATA_DIR!);
  const relay = await startRelay(loadConfig(full), log);
  const http = inProcess(relay.app, full.ADMIN_TOKEN);
  const net = relay.networks.get("testnet").localnet;
  const server = new rpc.Server(net ? `${relay.url}/localnet/testnet/rpc` : full.TESTNET_RPC_URL!, { allowHttp: true });
  const friendbot = async (kp: Keypair) => {
    const r = await fetch(`${relay.url}/localnet/testnet/friendbot?addr=${kp.publicKey()}`);
    if (!r.ok) throw new Error(`friendbot ${r.status}`);
    return kp;
  };
  const ahead: Keypair[] = [];
  let refill: Promise<void> | null = null;
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
      if (n.ledgerCloseMs <= 0) {
        const kp = Keypair.random();
        // a ledger closes once the funding is queued, however long a busy machine takes to queue it
        let funded = false;
        const pending = friendbot(kp).finally(() => {
          funded = true;
        });
        while (!funded) {
          await Bun.sleep(20);
          n.closeIfPending();
        }
        await pending;
        return kp;
      }
      // ledgers close by themselves: accounts are funded FUNDED_AHEAD at a time (friendbot batches them into one
      // ledger) and handed out one by one, unused
      while (!ahead.length) {
        refill ??= Promise.all(Array.from({ length: FUNDED_AHEAD }, () => Keypair.random()).map(friendbot))
          .then((kps) => void ahead.push(...kps))
          .finally(() => {
            refill = null;
          });
        await refill;
      }
      return ahead.pop()!;
    },
    async payment(from, opts = {}) {
      let acc = await server.getAccount(from.publicKey());
      if (opts.seqOffset && opts.seqOffset > 0n)
        for (let i = 0n; i < opts.seqOffset; i++) acc.incrementSequenceNumber();
      // behind the account (a number used already): the network refuses it at once as tx_bad_seq
      if (opts.seqOffset && opts.seqOffset < 0n)
        acc = new Account(from.publicKey(), (BigInt(acc.sequenceNumber()) + opts.seqOffset - 1n).toString());
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
    http,
    tcp: overTcp(relay.url, full.ADMIN_TOKEN),
    post: http.post,
    admin: http.admin,
    async project(opts = {}) {
      const admin = http.admin;
      const p = await admin("POST", "/projects", {
        name: `project ${crypto.randomUUID().slice(0, 8)}`,
        ...(opts.policy ? { policy: opts.policy } : {}),
      });
      if (p.status !== 201) throw new Error(`creating a project: ${p.status} ${JSON.stringify(p.body)}`);
      const test = await admin("POST", `/projects/${p.body.id}/keys`, { environment: "test" });
      const live = await admin("POST", `/projects/${p.body.id}/keys`, { environment: "live" });
      if (opts.x402PayTo) {
        const x = await admin("PATCH", `/projects/${p.body.id}`, { x402: { payTo: opts.x402PayTo } });
        if (x.status !== 200) throw new Error(`declaring x402.payTo: ${x.status} ${JSON.stringify(x.body)}`);
      }
      if (opts.credits) {
        const c = await admin("POST", `/projects/${p.body.id}/credits`, { amount: opts.credits.toString() });
        if (c.status !== 200) throw new Error(`adding credits: ${c.status} ${JSON.stringify(c.body)}`);
      }
      return { id: p.body.id, testKey: test.body.key, liveKey: live.body.key };
    },
  };
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

/** `op` in a transaction of `from` on the relay's testnet, at its next sequence number, signed (60 s to live). */
export async function signedOp(r: TestRelay, from: Keypair, op: xdr.Operation): Promise<Transaction> {
  const t = new TransactionBuilder(await r.rpc.getAccount(from.publicKey()), {
    fee: "100",
    networkPassphrase: r.passphrase,
  })
    .addOperation(op)
    .setTimeout(60)
    .build();
  t.sign(from);
  return t;
}
