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
import { adminOf, jsonOf, type Proc, spawnLocalnet, spawnRelay, tempDir } from "../support/processes.ts";
import { TEST_ADMIN_TOKEN } from "../support/relay.ts";

const N = 8;
const CREDITS = 1_000_000_000n;
const LEDGER_MS = 400;
const DB = process.env.TEST_DATABASE_URL;

let net: Awaited<ReturnType<typeof spawnLocalnet>>;
const relays: (Proc & { url: string })[] = [];
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  net = await spawnLocalnet({ LEDGER_CLOSE_MS: String(LEDGER_MS) });
}, 30_000);
afterAll(async () => {
  for (const r of relays) await r.kill("SIGTERM").catch(() => {});
  await net?.kill("SIGTERM");
  for (const done of cleanups) await done();
});

const json = jsonOf;

/**
 * A relay on its own data (folder, schema) whose mainnet is the localnet process, with a project,
 * its live key and credits; `restart` kills it (-9) and starts it again on the same data.
 */
async function relayWithProject() {
  const data = tempDir("relay-orderflow-kill-");
  const schema = `t_${crypto.randomUUID().replace(/-/g, "").slice(0, 16)}`;
  cleanups.push(async () => {
    if (DB) {
      const sql = postgres(DB, { max: 1, onnotice: () => {} });
      await sql.unsafe(`drop schema if exists "${schema}" cascade`);
      await sql.end();
    }
    data.done();
  });
  if (!DB) await seedPglite(data.path);
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
  const it = { relay: await spawnRelay(env), key: "", projectId: "" };
  relays.push(it.relay);
  const { admin, poolReady } = adminOf(() => it.relay.url, TEST_ADMIN_TOKEN);
  await poolReady("mainnet", 2);
  const project = (await admin("POST", "/projects", { name: "order flow kill" })).body;
  it.projectId = project.id;
  it.key = (await admin("POST", `/projects/${project.id}/keys`, { environment: "live" })).body.key as string;
  expect((await admin("POST", `/projects/${project.id}/credits`, { amount: CREDITS.toString() })).status).toBe(200);

  /** N payments of the user's account, in sequence order, signed. */
  const burst = async (): Promise<{ txs: Transaction[]; first: bigint }> => {
    const account = await server.getAccount(user.publicKey());
    const first = BigInt(account.sequenceNumber()) + 1n;
    const txs = Array.from({ length: N }, () => {
      const tx = new TransactionBuilder(account, { fee: "100", networkPassphrase: net.passphrase })
        .addOperation(Operation.payment({ destination: funder.publicKey(), asset: Asset.native(), amount: "1" }))
        .setTimeout(300)
        .build();
      tx.sign(user);
      return tx;
    });
    return { txs, first };
  };
  const send = (tx: Transaction, headers: Record<string, string> = {}) =>
    json(`${it.relay.url}/v1/sponsor`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": it.key, ...headers },
      body: JSON.stringify({ transaction: tx.toEnvelope().toXDR("base64"), network: "mainnet" }),
    });
  const restart = async () => {
    await it.relay.kill("SIGKILL");
    it.relay = await spawnRelay(env);
    relays.push(it.relay);
  };
  /** Each transaction landed once, in sequence order; the account used exactly N numbers; charged exactly. */
  const landedInOrder = async (txs: Transaction[], first: bigint) => {
    const onChain = await Promise.all(txs.map((tx) => server.getTransaction(hex(tx))));
    const fees: bigint[] = [];
    for (let i = 0; i < N; i++) {
      const got = onChain[i] as rpc.Api.GetSuccessfulTransactionResponse;
      expect(got.status).toBe(S.SUCCESS);
      if (i > 0) expect(got.ledger).toBeGreaterThan((onChain[i - 1] as { ledger: number }).ledger);
      fees.push(resultSummary(got.resultXdr.toXDR("base64")).feeCharged);
    }
    expect(BigInt((await server.getAccount(user.publicKey())).sequenceNumber())).toBe(first + BigInt(N) - 1n);
    const charged = fees.reduce((a, b) => a + b, 0n);
    let view: any;
    for (let i = 0; i < 100; i++) {
      view = (await admin("GET", `/projects/${it.projectId}`)).body;
      if (view.creditReserved === "0" && BigInt(view.creditBalance) === CREDITS - charged) break;
      await Bun.sleep(100);
    }
    expect(view.creditReserved).toBe("0");
    expect(BigInt(view.creditBalance)).toBe(CREDITS - charged);
    return { onChain, fees };
  };
  return { it, server, user, burst, send, restart, landedInOrder };
}

test("kill -9 in the middle of one account's burst: each lands once, in order, charged once", {
  timeout: 120_000,
}, async () => {
  const { server, user, burst, send, restart, landedInOrder } = await relayWithProject();
  const { txs, first } = await burst();
  const answers: ({ status: number; body: any } | null)[] = new Array(N).fill(null);
  const firing = Promise.all(txs.map(async (tx, i) => (answers[i] = await send(tx).catch(() => null))));
  // killed once three are in a ledger: one is sent or queued, the rest are held
  for (let t = 0; t < 1000; t++) {
    const seq = BigInt((await server.getAccount(user.publicKey())).sequenceNumber());
    if (seq >= first + 2n) break;
    await Bun.sleep(20);
  }
  const killed = restart();
  await firing;
  const beforeCrash = answers.filter((a) => a?.status === 200).length;
  await killed;
  const final = (a: { status: number } | null) => a !== null && (a.status === 200 || a.status === 422);
  for (const deadline = Date.now() + 60_000; answers.some((a) => !final(a)) && Date.now() < deadline; ) {
    await Promise.all(answers.map(async (a, i) => (final(a) ? undefined : (answers[i] = await send(txs[i]!)))));
  }
  console.log(`order flow kill -9: ${beforeCrash} of ${N} answered before the crash, the rest after the restart`);
  for (const a of answers) expect(a?.status).toBe(200);

  // each landed once, in sequence order, as answered; the account used exactly N numbers, charged exactly
  const { onChain, fees } = await landedInOrder(txs, first);
  for (let i = 0; i < N; i++) {
    expect(answers[i]!.body.ledger).toBe((onChain[i] as { ledger: number }).ledger);
    expect(answers[i]!.body.feePaid).toBe(fees[i]!.toString());
  }
});

test("respond-async: each held one is answered 202 pending at once, and after kill -9 the relay sends them itself", {
  timeout: 120_000,
}, async () => {
  const { it, burst, send, restart, landedInOrder } = await relayWithProject();
  const { txs, first } = await burst();
  const async = { prefer: "respond-async" };
  const started = Date.now();
  // shuffled: the order they arrive in is not the order they go in
  const order = [3, 0, 6, 1, 7, 2, 5, 4];
  const answers = await Promise.all(order.map((i) => send(txs[i]!, async)));
  const answeredMs = Date.now() - started;
  for (const a of answers) expect(a.status).toBe(202);
  const pending = answers.filter((a) => a.body.status === "pending");
  // all but the one sent first are held: each answered once written, not a ledger after the other
  expect(pending.length).toBeGreaterThanOrEqual(N - 2);
  for (const a of pending) expect(a.body.hash).toBe(a.body.innerHash);
  const last = hex(txs[N - 1]!);
  const held = await json(`${it.relay.url}/v1/transactions/${last}`, { headers: { "x-api-key": it.key } });
  expect(held.body.status).toBe("pending");
  expect(held.body.waitingFor).toEqual({
    account: txs[N - 1]!.source,
    sequence: (first + BigInt(N) - 1n).toString(),
    waitingFor: (first + BigInt(N) - 2n).toString(),
  });

  await restart(); // at once: most of them are held, none of their requests is open any more
  let lookups: unknown[] = [];
  const statuses = async () => {
    const headers = { "x-api-key": it.key };
    lookups = await Promise.all(
      txs.map((tx) => json(`${it.relay.url}/v1/transactions/${hex(tx)}?wait=10`, { headers })),
    );
    return lookups.map((r) => (r as { body?: { status?: string } }).body?.status);
  };
  let seen: (string | undefined)[] = [];
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await Bun.sleep(200)) {
    seen = await statuses();
    if (seen.every((s) => s === "success")) break;
  }
  console.log(`respond-async: ${N} answered 202 in ${answeredMs} ms; after kill -9 the relay sent the held ones`);
  expect(seen, JSON.stringify(lookups).slice(0, 1500)).toEqual(txs.map(() => "success"));
  await landedInOrder(txs, first);
});
