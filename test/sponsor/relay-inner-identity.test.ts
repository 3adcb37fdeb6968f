/**
 * A submission's identity is its inner transaction: a retry while the first fee-bump is still
 * queued attaches to it and answers what the network did, on mainnet with credits, also when the
 * retry is wrapped by another channel (the network refuses that replacement: not 10x the fee).
 * These relays close ledgers only when the test says so.
 */
import { afterEach, expect, test } from "bun:test";
import {
  Account,
  Asset,
  Keypair,
  Operation,
  TransactionBuilder,
  type FeeBumpTransaction,
  type Transaction,
} from "@stellar/stellar-sdk";
import postgres from "postgres";
import { AFTER_504_ENV, startTestRelay, type TestRelay } from "../support/relay.ts";
import { fundedMainnetUser, mainnetPayment, rawTransaction } from "../support/mainnet.ts";
import { localFunder } from "../../src/boot/boot.ts";

let r: TestRelay;
afterEach(() => r?.stop());

const CREDITS = 100_000_000n;

async function signedMainnetPayment(relay: TestRelay): Promise<{ tx: Transaction; user: Keypair }> {
  const user = await fundedMainnetUser(relay);
  return { tx: mainnetPayment(relay, user).tx, user };
}

/** The project's credits as the journal has them: balance, what is still reserved, what was charged. */
async function journal(relay: TestRelay, projectId: string) {
  const view = (await relay.admin("GET", `/projects/${projectId}`)).body;
  return { balance: BigInt(view.creditBalance), reserved: BigInt(view.creditReserved) };
}

for (const otherChannel of [false, true]) {
  test(`a retry while the first fee-bump is still queued answers the true outcome${otherChannel ? " (retry wrapped by another channel)" : ""}`, {
    timeout: 20_000,
  }, async () => {
    r = await startTestRelay({ LEDGER_CLOSE_MS: "0", SUBMISSION_TIMEOUT_MS: "300", MAINNET_CHANNELS: "2" });
    const p = await r.project({ credits: CREDITS, policy: { requestsPerSecond: 1000, burst: 1000 } });
    const { tx } = await signedMainnetPayment(r);
    const body = { transaction: tx.toEnvelope().toXDR("base64"), network: "mainnet" };
    const headers = { "x-api-key": p.liveKey, "x-idempotency-key": `race-${otherChannel}` };
    const innerHash = Buffer.from(tx.hash()).toString("hex");

    const first = await r.post("/v1/sponsor", body, headers);
    expect(first.body).toMatchObject({ error: { code: "SUBMISSION_TIMEOUT" } }); // queued: the ledger is not closed
    const queued = first.body.error.details.hash as string;

    let blocker: Promise<unknown> | null = null;
    if (otherChannel) {
      // a row written before envelopes were kept, and the first channel busy: the retry wraps with the other
      await r.database.execute(
        (await import("drizzle-orm")).sql`update submissions set envelope = null where inner_hash = ${innerHash}`,
      );
      const other = await signedMainnetPayment(r);
      blocker = r.post(
        "/v1/sponsor",
        { transaction: other.tx.toEnvelope().toXDR("base64"), network: "mainnet" },
        { "x-api-key": p.liveKey },
      );
      await Bun.sleep(50);
    }
    const retry = r.post("/v1/sponsor", body, headers);
    await Bun.sleep(150); // the retry reaches the network before the ledger closes
    r.networks.get("mainnet").localnet!.closeLedger();
    const answer = await retry;
    expect(answer.status).toBe(200);
    expect(answer.body.hash).toBe(queued); // the first fee-bump, found by its inner hash
    const onChain = await rawTransaction(r, "mainnet", innerHash);
    expect(onChain.status).toBe("SUCCESS");
    expect(answer.body.ledger).toBe(onChain.ledger);

    const replay = await r.post("/v1/sponsor", body, headers);
    expect(replay.body).toEqual(answer.body);
    if (blocker) expect(((await blocker) as { status: number }).status).toBe(200);
    // charged exactly what the network charged, nothing left reserved
    const paid = BigInt(answer.body.feePaid) + (otherChannel ? 200n : 0n);
    const j = await journal(r, p.id);
    expect(j.reserved).toBe(0n);
    expect(j.balance).toBe(CREDITS - paid);
  });
}

test("recovery settles an unanswered submission the network applied, without a client", {
  timeout: 20_000,
}, async () => {
  r = await startTestRelay({ LEDGER_CLOSE_MS: "0", SUBMISSION_TIMEOUT_MS: "200", RECOVERY_INTERVAL_MS: "100" });
  const p = await r.project({ credits: CREDITS });
  const { tx } = await signedMainnetPayment(r);
  const first = await r.post(
    "/v1/sponsor",
    { transaction: tx.toEnvelope().toXDR("base64"), network: "mainnet" },
    { "x-api-key": p.liveKey },
  );
  expect(first.status).toBe(504);
  r.networks.get("mainnet").localnet!.closeLedger();
  let j = await journal(r, p.id);
  for (let i = 0; i < 50 && j.balance !== CREDITS - 200n; i++) {
    await Bun.sleep(100);
    j = await journal(r, p.id);
  }
  expect(j).toEqual({ balance: CREDITS - 200n, reserved: 0n });
  if (process.env.TEST_DATABASE_URL) {
    const sql = postgres(process.env.TEST_DATABASE_URL, { max: 1, onnotice: () => {} });
    const [row] = await sql.unsafe(
      `select outcome_kind, fee_charged::text from "${r.env.DATABASE_SCHEMA}".submissions`,
    );
    await sql.end();
    expect([row?.outcome_kind, row?.fee_charged]).toEqual(["success", "200"]);
  }
});

test("surge: a fee-bump outbid is replaced at 10x its rate after one missed ledger (fast), until it is included", {
  timeout: 20_000,
}, async () => {
  // a ledger holds 2 operations: each ledger a competitor bidding 3,000 per operation takes it
  r = await startTestRelay({
    LEDGER_CLOSE_MS: "0",
    LOCALNET_MAX_TX_SET_SIZE: "2",
    TESTNET_CHANNELS: "1",
    MAINNET_CHANNELS: "1",
    SUBMISSION_TIMEOUT_MS: "20000",
  });
  const user = await r.funded();
  const rival = await r.funded();
  const compete = async () => {
    const acc = await r.rpc.getAccount(rival.publicKey());
    const pay = () =>
      Operation.payment({ destination: Keypair.random().publicKey(), asset: Asset.native(), amount: "1" });
    const tx = new TransactionBuilder(acc, { fee: "3000", networkPassphrase: r.passphrase })
      .addOperation(pay())
      .addOperation(pay())
      .setTimeout(60)
      .build();
    tx.sign(rival);
    // TRY_AGAIN_LATER: the rival's transaction of the ledger before still waits (it competes all the same)
    expect(["PENDING", "TRY_AGAIN_LATER"]).toContain((await r.rpc.sendTransaction(tx)).status);
  };
  const tx = await r.payment(user);
  const answer = r.post("/v1/sponsor", { transaction: tx.toEnvelope().toXDR("base64"), network: "testnet" });
  let settled: { status: number; body: any } | null = null;
  void answer.then((a) => {
    settled = a;
  });
  for (let ledger = 0; ledger < 8 && !settled; ledger++) {
    await Bun.sleep(150);
    if (ledger < 4) await compete(); // a rival bidding 3,000 per operation at every ledger: 1,000 loses
    r.close();
  }
  const a = await answer;
  expect(a.status).toBe(200);
  const onChain = await rawTransaction(r, "testnet", Buffer.from(tx.hash()).toString("hex"));
  expect(onChain.status).toBe("SUCCESS");
  const fee = (TransactionBuilder.fromXDR(onChain.envelopeXdr, r.passphrase) as FeeBumpTransaction).fee;
  // the fast strategy's 1,000 per operation (10x the quiet clearing rate), then 10,000 after one
  // missed ledger: the second bid beat 3,000
  expect(BigInt(fee)).toBe(10_000n * 2n);
});

test("recovery gives back the reservation of a fee-bump the network dropped; a later retry submits it again and pays once", {
  timeout: 30_000,
}, async () => {
  // each ledger holds 2 operations and a rival outbids the capped fee-bump until the queue drops it (4 ledgers)
  r = await startTestRelay({
    ...AFTER_504_ENV,
    LOCALNET_MAX_TX_SET_SIZE: "2",
    TESTNET_CHANNELS: "1",
    MAINNET_CHANNELS: "1",
  });
  const p = await r.project({ credits: CREDITS, policy: { maxFee: "400", requestsPerSecond: 1000, burst: 1000 } });
  const net = r.networks.get("mainnet").localnet!;
  const { tx } = await signedMainnetPayment(r);
  const rival = (await signedMainnetPayment(r)).user;
  const compete = () => {
    const acc = net.account(rival.publicKey())!;
    const pay = () =>
      Operation.payment({ destination: localFunder(net.passphrase).publicKey(), asset: Asset.native(), amount: "1" });
    const t = new TransactionBuilder(new Account(rival.publicKey(), acc.seqNum.toString()), {
      fee: "3000",
      networkPassphrase: net.passphrase,
    })
      .addOperation(pay())
      .addOperation(pay())
      .setTimeout(60)
      .build();
    t.sign(rival);
    return fetch(`${r.url}/localnet/mainnet/rpc`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "sendTransaction",
        params: { transaction: t.toEnvelope().toXDR("base64") },
      }),
    });
  };
  const body = { transaction: tx.toEnvelope().toXDR("base64"), network: "mainnet" };
  const first = await r.post("/v1/sponsor", body, { "x-api-key": p.liveKey });
  expect(first.body.error.code).toBe("SUBMISSION_TIMEOUT");
  expect((await journal(r, p.id)).balance).toBe(CREDITS - 400n); // reserved
  for (let ledger = 0; ledger < 16; ledger++) {
    if (ledger < 5) await compete();
    await Bun.sleep(20);
    net.closeLedger();
  }
  let j = await journal(r, p.id);
  for (let i = 0; i < 50 && j.balance !== CREDITS; i++) {
    await Bun.sleep(100);
    j = await journal(r, p.id);
  }
  expect(j).toEqual({ balance: CREDITS, reserved: 0n }); // given back: nothing of it can land any more
  expect((await rawTransaction(r, "mainnet", Buffer.from(tx.hash()).toString("hex"))).status).toBe("NOT_FOUND");

  const retry = r.post("/v1/sponsor", body, { "x-api-key": p.liveKey });
  await Bun.sleep(150);
  net.closeLedger();
  const a = await retry;
  expect(a.status).toBe(200);
  expect(await journal(r, p.id)).toEqual({ balance: CREDITS - BigInt(a.body.feePaid), reserved: 0n });
});
