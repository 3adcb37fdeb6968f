/**
 * Order flow and kill -9: one account's 8 payments sent at once (held in order by the relay), the
 * relay killed once some have landed, restarted, and the unanswered ones sent again. Every payment
 * lands once, in sequence order; every answer is the chain's; the credits are charged exactly the fees.
 * The network runs in its own process, so only the relay dies.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Asset, Keypair, Operation, rpc, TransactionBuilder, type Transaction } from "@stellar/stellar-sdk";
import postgres from "postgres";
import { resultSummary } from "../../src/stellar/xdr.ts";
import { hex, S } from "../support/localnet.ts";
import { seedPglite } from "../support/pglite.ts";
import { type Proc, spawnLocalnet, spawnRelay, tempDir } from "../support/processes.ts";
import { TEST_ADMIN_TOKEN } from "../support/relay.ts";

const N = 8;
const CREDITS = 1_000_000_000n;
const LEDGER_MS = 400;
const DB = process.env.TEST_DATABASE_URL;

let net: Awaited<ReturnType<typeof spawnLocalnet>>;
let relay: Proc & { url: string };
const data = tempDir("relay-orderflow-kill-");
const schema = `t_${crypto.randomUUID().replace(/-/g, "").slice(0, 16)}`;

beforeAll(async () => {
  net = await spawnLocalnet({ LEDGER_CLOSE_MS: String(LEDGER_MS) });
  if (!DB) await seedPglite(data.path);
}, 30_000);
afterAll(async () => {
  await relay?.kill("SIGTERM").catch(() => {});
  await net?.kill("SIGTERM");
  if (DB) {
    const sql = postgres(DB, { max: 1, onnotice: () => {} });
    await sql.unsafe(`drop schema if exists "${schema}" cascade`);
    await sql.end();
  }
  data.done();
});

const json = async (url: string, init?: RequestInit) => {
  const r = await fetch(url, init);
  return { status: r.status, body: (await r.json().catch(() => null)) as any };
};

test("kill -9 in the middle of one account's burst: each lands once, in order, charged once", {
  timeout: 120_000,
}, async () => {
  const server = new rpc.Server(net.rpcUrl, { allowHttp: true });
  const [funder, user] = [Keypair.random(), Keypair.random()];
  for (const kp of [funder, user]) {
    const r = await fetch(`${net.url}/friendbot?addr=${kp.publicKey()}`);
    if (!r.ok) throw new Error(`friendbot ${r.status}`);
  }
  const env: Record<string, string> = {
    DATA_DIR: data.path,
    ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    LEDGER_CLOSE_MS: "100",
    WATCHER_POLL_MS: "100",
    SUBMISSION_TIMEOUT_MS: "8000",
    RECOVERY_INTERVAL_MS: "500",
    MAINNET_RPC_URL: net.rpcUrl,
    MAINNET_PASSPHRASE: net.passphrase,
    MAINNET_FUNDER_SECRET: funder.secret(),
    MAINNET_CHANNELS: "2",
    ...(DB ? { DATABASE_URL: DB, DATABASE_SCHEMA: schema } : { DATABASE_URL: "", DATABASE_SCHEMA: "" }),
    REDIS_URL: "",
  };
  relay = await spawnRelay(env);
  const admin = (method: string, path: string, body?: unknown) =>
    json(`${relay.url}/v1/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
  for (let i = 0; (await admin("GET", "/channels?network=mainnet")).body?.totals?.active !== 2; i++) {
    if (i > 400) throw new Error("the mainnet pool did not start");
    await Bun.sleep(50);
  }
  const project = (await admin("POST", "/projects", { name: "order flow kill" })).body;
  const key = (await admin("POST", `/projects/${project.id}/keys`, { environment: "live" })).body.key as string;
  expect((await admin("POST", `/projects/${project.id}/credits`, { amount: CREDITS.toString() })).status).toBe(200);

  const account = await server.getAccount(user.publicKey());
  const first = BigInt(account.sequenceNumber()) + 1n;
  const txs: Transaction[] = Array.from({ length: N }, () => {
    const tx = new TransactionBuilder(account, { fee: "100", networkPassphrase: net.passphrase })
      .addOperation(Operation.payment({ destination: funder.publicKey(), asset: Asset.native(), amount: "1" }))
      .setTimeout(300)
      .build();
    tx.sign(user);
    return tx;
  });
  const send = (i: number) =>
    json(`${relay.url}/v1/sponsor`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": key },
      body: JSON.stringify({ transaction: txs[i]!.toEnvelope().toXDR("base64"), network: "mainnet" }),
    });
  const answers: ({ status: number; body: any } | null)[] = new Array(N).fill(null);
  const firing = Promise.all(txs.map(async (_, i) => (answers[i] = await send(i).catch(() => null))));
  // killed once three are in a ledger: one is sent or queued, the rest are held
  for (let t = 0; t < 1000; t++) {
    const seq = BigInt((await server.getAccount(user.publicKey())).sequenceNumber());
    if (seq >= first + 2n) break;
    await Bun.sleep(20);
  }
  await relay.kill("SIGKILL");
  await firing;
  const beforeCrash = answers.filter((a) => a?.status === 200).length;

  relay = await spawnRelay(env);
  const final = (a: { status: number } | null) => a !== null && (a.status === 200 || a.status === 422);
  for (const deadline = Date.now() + 60_000; answers.some((a) => !final(a)) && Date.now() < deadline; ) {
    await Promise.all(answers.map(async (a, i) => (final(a) ? undefined : (answers[i] = await send(i)))));
  }
  console.log(`order flow kill -9: ${beforeCrash} of ${N} answered before the crash, the rest after the restart`);
  for (const a of answers) expect(a?.status).toBe(200);

  // each landed once, in sequence order, as answered; the account used exactly N numbers
  const onChain = await Promise.all(txs.map((tx) => server.getTransaction(hex(tx))));
  let charged = 0n;
  for (let i = 0; i < N; i++) {
    const got = onChain[i] as rpc.Api.GetSuccessfulTransactionResponse;
    expect(got.status).toBe(S.SUCCESS);
    expect(answers[i]!.body.ledger).toBe(got.ledger);
    if (i > 0) expect(got.ledger).toBeGreaterThan((onChain[i - 1] as { ledger: number }).ledger);
    expect(answers[i]!.body.feePaid).toBe(resultSummary(got.resultXdr.toXDR("base64")).feeCharged.toString());
    charged += BigInt(answers[i]!.body.feePaid);
  }
  expect(BigInt((await server.getAccount(user.publicKey())).sequenceNumber())).toBe(first + BigInt(N) - 1n);
  let view: any;
  for (let i = 0; i < 100; i++) {
    view = (await admin("GET", `/projects/${project.id}`)).body;
    if (view.creditReserved === "0" && BigInt(view.creditBalance) === CREDITS - charged) break;
    await Bun.sleep(100);
  }
  expect(view.creditReserved).toBe("0");
  expect(BigInt(view.creditBalance)).toBe(CREDITS - charged);
});
