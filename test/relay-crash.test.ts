/**
 * kill -9 under load: the relay and the network run in processes of their own; the relay dies
 * while a few hundred idempotent mainnet requests are in flight, starts again on the same
 * database, and every request is retried until it is final. Every answer must be what the network
 * did, no inner transaction may be paid for twice, and the credit journal must equal the fees the
 * network charged with nothing left reserved.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Asset, Keypair, Operation, rpc, TransactionBuilder, type Transaction } from "@stellar/stellar-sdk";
import postgres from "postgres";
import { resultSummary } from "../src/stellar/xdr.ts";
import { spawnLocalnet, spawnRelay, tempDir, type Proc } from "./support/processes.ts";
import { TEST_ADMIN_TOKEN } from "./support/relay.ts";

const N = 240;
const CREDITS = 1_000_000_000n;
const DB = process.env.TEST_DATABASE_URL;

let net: Awaited<ReturnType<typeof spawnLocalnet>>;
let relay: Proc & { url: string };
const data = tempDir("relay-crash-");
const schema = `t_${crypto.randomUUID().replace(/-/g, "").slice(0, 16)}`;

beforeAll(async () => {
  net = await spawnLocalnet({ LEDGER_CLOSE_MS: "1000" });
});
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
const fund = async (kp: Keypair) => {
  const r = await fetch(`${net.url}/friendbot?addr=${kp.publicKey()}`);
  if (!r.ok) throw new Error(`friendbot ${r.status}`);
};

test("kill -9 under concurrent idempotent mainnet requests: after a restart every answer is the network's, paid once, journal = fees", {
  timeout: 120_000,
}, async () => {
  const server = new rpc.Server(net.rpcUrl, { allowHttp: true });
  const funder = Keypair.random();
  const users = Array.from({ length: N }, () => Keypair.random());
  await Promise.all([funder, ...users].map(fund));

  const env: Record<string, string> = {
    DATA_DIR: data.path,
    ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    LEDGER_CLOSE_MS: "1000",
    WATCHER_POLL_MS: "100",
    RPC_TIMEOUT_MS: "3000",
    SUBMISSION_TIMEOUT_MS: "8000",
    RECOVERY_INTERVAL_MS: "500",
    MAINNET_RPC_URL: net.rpcUrl,
    MAINNET_PASSPHRASE: net.passphrase,
    MAINNET_FUNDER_SECRET: funder.secret(),
    MAINNET_CHANNELS: "8",
    ...(DB ? { DATABASE_URL: DB, DATABASE_SCHEMA: schema } : {}),
  };
  relay = await spawnRelay(env);
  const admin = (method: string, path: string, body?: unknown) =>
    json(`${relay.url}/v1/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
  for (let i = 0; (await admin("GET", "/channels?network=mainnet")).body?.totals?.active !== 8; i++) {
    if (i > 200) throw new Error("the mainnet pool did not start");
    await Bun.sleep(100);
  }
  const project = (
    await admin("POST", "/projects", { name: "crash", policy: { requestsPerSecond: 10_000, burst: 10_000 } })
  ).body;
  const key = (await admin("POST", `/projects/${project.id}/keys`, { environment: "live" })).body.key as string;
  expect((await admin("POST", `/projects/${project.id}/credits`, { amount: CREDITS.toString() })).status).toBe(200);

  const txs: Transaction[] = [];
  for (const u of users) {
    const account = await server.getAccount(u.publicKey());
    const tx = new TransactionBuilder(account, { fee: "100", networkPassphrase: net.passphrase })
      .addOperation(Operation.payment({ destination: funder.publicKey(), asset: Asset.native(), amount: "1" }))
      .setTimeout(300)
      .build();
    tx.sign(u);
    txs.push(tx);
  }
  const inner = txs.map((t) => Buffer.from(t.hash()).toString("hex"));
  const send = (i: number) =>
    json(`${relay.url}/v1/sponsor`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": key, "x-idempotency-key": `crash-${i}` },
      body: JSON.stringify({ transaction: txs[i]!.toEnvelope().toXDR("base64"), network: "mainnet" }),
    });
  const startLedger = (await server.getLatestLedger()).sequence;

  // spread over about two ledgers, so that the relay dies with them in every state
  const answers: ({ status: number; body: any } | null)[] = new Array(N).fill(null);
  const firing = Promise.all(
    txs.map(async (_, i) => {
      await Bun.sleep(i * 8);
      answers[i] = await send(i).catch(() => null);
    }),
  );
  // the moment a quarter of them are in a ledger: the rest are being answered, queued, sent or not yet sent
  const probes = inner.slice(0, N / 4);
  for (let t = 0; t < 200; t++) {
    const got = await Promise.all(probes.map((h) => server.getTransaction(h)));
    if (got.every((g) => g.status !== "NOT_FOUND")) break;
    await Bun.sleep(20);
  }
  await relay.kill("SIGKILL");
  await firing;
  const beforeCrash = answers.filter((a) => a && (a.status === 200 || a.status === 422)).length;
  await Bun.sleep(1100); // what was sent before the crash lands in the next ledger
  const landed = (await Promise.all(inner.map((h) => server.getTransaction(h)))).filter(
    (r) => r.status !== "NOT_FOUND",
  ).length;

  relay = await spawnRelay(env);
  const deadline = Date.now() + 60_000;
  const final = (a: { status: number } | null) => a !== null && (a.status === 200 || a.status === 422);
  const retried = new Set<number>();
  while (answers.some((a) => !final(a)) && Date.now() < deadline) {
    await Promise.all(
      answers.map(async (a, i) => {
        if (final(a)) return;
        retried.add(i);
        answers[i] = await send(i);
      }),
    );
    if (answers.some((a) => !final(a))) await Bun.sleep(500);
  }
  console.log(
    `kill -9: ${N} requests, ${beforeCrash} answered before the crash, ${landed} sent before it (in a ledger after it), ${retried.size} retried`,
  );
  expect(answers.filter((a) => !final(a))).toEqual([]);

  // every answer is what the network did
  let charged = 0n;
  for (let i = 0; i < N; i++) {
    const a = answers[i]!;
    const onChain = await server.getTransaction(inner[i]!);
    if (a.status === 200) {
      expect(onChain.status).toBe("SUCCESS" as never);
      const ok = onChain as rpc.Api.GetSuccessfulTransactionResponse;
      expect(a.body.ledger).toBe(ok.ledger);
      expect(a.body.feePaid).toBe(resultSummary(ok.resultXdr.toXDR("base64")).feeCharged.toString());
      charged += BigInt(a.body.feePaid);
    } else {
      // a failure the network charged for carries its fee; one it never applied was not included
      if (a.body.error.details?.feePaid) charged += BigInt(a.body.error.details.feePaid);
      else expect(onChain.status).toBe("NOT_FOUND" as never);
    }
  }
  // no inner transaction included twice, and no other wrapping of it charged: the channels paid exactly what was answered
  let paidOnChain = 0n;
  const ours = new Set(inner);
  let seen = 0;
  for (let cursor: string | undefined; ; ) {
    const page = await server.getTransactions(
      cursor ? { pagination: { cursor, limit: 200 } } : { startLedger, pagination: { limit: 200 } },
    );
    for (const t of page.transactions) {
      const s = resultSummary(t.resultXdr.toXDR("base64"));
      if (s.innerHash && ours.has(s.innerHash)) {
        paidOnChain += s.feeCharged;
        seen++;
      }
    }
    if (page.transactions.length < 200) break;
    cursor = page.cursor;
  }
  expect(seen).toBe(answers.filter((a) => a!.status === 200 || a!.body.error?.details?.feePaid).length);
  expect(paidOnChain).toBe(charged);

  // the journal: charged exactly the fees, nothing left reserved (recovery settles what no retry did)
  let view: any;
  for (let i = 0; i < 50; i++) {
    view = (await admin("GET", `/projects/${project.id}`)).body;
    if (view.creditReserved === "0" && BigInt(view.creditBalance) === CREDITS - charged) break;
    await Bun.sleep(200);
  }
  expect(view.creditReserved).toBe("0");
  expect(BigInt(view.creditBalance)).toBe(CREDITS - charged);
  if (DB) {
    const sql = postgres(DB, { max: 1, onnotice: () => {} });
    const [j] = await sql.unsafe(
      `select coalesce(sum(amount) filter (where kind = 'charge'), 0)::text as charge,
      coalesce(sum(amount) filter (where kind in ('reserve', 'release')), 0)::text as held, coalesce(sum(amount), 0)::text as balance
      from "${schema}".credit_journal where project_id = $1`,
      [project.id],
    );
    await sql.end();
    expect(BigInt(j!.charge)).toBe(-charged);
    expect(BigInt(j!.held)).toBe(0n);
    expect(BigInt(j!.balance)).toBe(CREDITS - charged);
  }
});
