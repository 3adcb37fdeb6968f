/**
 * `bun run bench:relay`: the relay's own cost on POST /v1/sponsor against its embedded mainnet,
 * with a project's sr_live_ key (authentication, rate limit, policy, credit reservation journaled
 * with the intent, settlement). N users (distinct accounts) each send one signed payment at once;
 * ledgers close on demand. Prints
 * how long the relay took to submit them all (decode, fee, sign, record the intent, send), the
 * confirmation delay from ledger close to HTTP response (p50/p99), and sponsored transactions/s.
 * BENCH_USERS (default 500). The load comes from a worker thread, but Bun's fetch pool is per
 * process (256 requests by default), shared with the relay's own calls to its embedded network:
 * `bun run bench:relay` raises it with BUN_CONFIG_MAX_HTTP_REQUESTS so that the load cannot starve them.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Asset, Operation, TransactionBuilder, Account } from "@stellar/stellar-sdk";
import { loadConfig } from "../src/config.ts";
import { createLogger } from "../src/kernel/log.ts";
import { startRelay } from "../src/boot/boot.ts";
import { fastKey, fastSign } from "./keys.ts";
import type { SendJob, SendReport } from "./send-worker.ts";
import postgres from "postgres";

const N = Number(process.env.BENCH_USERS ?? 500);
const ADMIN_TOKEN = "bench-admin-token-0123456789";
const dataDir = mkdtempSync(join(tmpdir(), "relay-bench-"));
const databaseUrl = process.env.DATABASE_URL;
const schema = `bench_${Date.now()}`;
const relay = await startRelay(
  loadConfig({
    ADMIN_TOKEN,
    PORT: "0",
    DATA_DIR: dataDir,
    LEDGER_CLOSE_MS: "0",
    LOCALNET_MAX_TX_SET_SIZE: String(4 * N),
    ...(databaseUrl ? { DATABASE_URL: databaseUrl, DATABASE_SCHEMA: schema } : {}),
  }),
  createLogger("silent"),
);
const admin = async (path: string, body: unknown) =>
  (
    await fetch(`${relay.url}/v1/admin${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    })
  ).json() as Promise<{ id: string; key: string }>;
const project = await admin("/projects", { name: "bench", policy: { requestsPerSecond: 1_000_000, burst: 1_000_000 } });
await admin(`/projects/${project.id}/credits`, { amount: String(BigInt(N) * 10_000_000n) });

/** One run: N users of `network` send one payment each, with the project's key for that network. */
async function phase(network: "testnet" | "mainnet"): Promise<boolean> {
  const net = relay.networks.get(network).localnet!;
  const { key } = await admin(`/projects/${project.id}/keys`, { environment: network === "mainnet" ? "live" : "test" });
  // users funded in-process by one createAccount transaction per 100
  const users = Array.from({ length: N }, fastKey);
  for (let i = 0; i < N; i += 100) {
    const root = net.account(net.root.publicKey())!;
    const b = new TransactionBuilder(new Account(net.root.publicKey(), root.seqNum.toString()), {
      fee: "100",
      networkPassphrase: net.passphrase,
    }).setTimeout(0);
    for (const u of users.slice(i, i + 100))
      b.addOperation(Operation.createAccount({ destination: u.publicKey, startingBalance: "100" }));
    const tx = b.build();
    tx.sign(net.root);
    net.submitXdr(tx.toEnvelope().toXdr());
    net.closeLedger();
  }
  const bodies = users.map((u) => {
    const ok = new TransactionBuilder(new Account(u.publicKey, net.account(u.publicKey)!.seqNum.toString()), {
      fee: "100",
      networkPassphrase: net.passphrase,
    })
      .addOperation(Operation.payment({ destination: net.root.publicKey(), asset: Asset.native(), amount: "1" }))
      .setTimeout(300)
      .build();
    fastSign(ok, u);
    return JSON.stringify({ transaction: ok.toEnvelope().toXdr("base64"), network });
  });

  // load from a worker thread (its own connections, like a separate client)
  let closedAt = 0;
  net.onLedgerClosed(() => {
    closedAt = performance.timeOrigin + performance.now();
  });
  const worker = new Worker(new URL("./send-worker.ts", import.meta.url).href);
  const report = new Promise<SendReport>((resolve) => {
    worker.onmessage = (e) => resolve(e.data);
  });
  const t0 = performance.now();
  worker.postMessage({
    url: `${relay.url}/v1/sponsor`,
    bodies,
    concurrency: N,
    outcome: "http-status",
    headers: { "x-api-key": key },
  } satisfies SendJob);
  // close the ledger once every transaction is in the queue
  while (net.queue.size < N && performance.now() - t0 < 60_000) await Bun.sleep(1);
  const submittedMs = performance.now() - t0;
  net.closeLedger();
  const { statuses, doneAt } = await report;
  worker.terminate();
  const delays = doneAt.map((t) => t - closedAt).sort((a, b) => a - b);
  const pct = (p: number) => delays[Math.min(delays.length - 1, Math.floor((p / 100) * delays.length))]!.toFixed(1);
  console.log(
    `${network}${network === "mainnet" ? " (credits)" : " (no credits)"}: submitted ${N} concurrent sponsor requests (auth, policy, reserve, decode, fee, sign, intent, send) in ${submittedMs.toFixed(0)} ms = ${Math.round((N * 1000) / submittedMs)} req/s`,
  );
  console.log(
    `  confirmation after the ledger closed: p50 ${pct(50)} ms, p99 ${pct(99)} ms; statuses ${JSON.stringify(statuses)}`,
  );
  return (statuses["200"] ?? 0) === N;
}

const ok = (await phase("testnet")) && (await phase("mainnet"));
const after = (await (
  await fetch(`${relay.url}/v1/admin/projects/${project.id}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
).json()) as { creditBalance: string; creditReserved: string };
console.log(
  `credits: balance ${after.creditBalance}, reserved ${after.creditReserved} (started with ${BigInt(N) * 10_000_000n}; the mainnet fees were charged)`,
);
await relay.stop();
// nothing of the run is left behind: its data folder, and its schema on Postgres
rmSync(dataDir, { recursive: true, force: true });
if (databaseUrl) {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  await sql.unsafe(`drop schema if exists "${schema}" cascade`);
  await sql.end();
}
process.exit(ok ? 0 : 1);
