/**
 * The relay when the network is slow or busy: no confirmation in time (504, then the retry finds
 * it), TRY_AGAIN_LATER past its budget (503), and a full queue that asks for a higher fee.
 * These relays close ledgers only when the test says so.
 */
import { afterEach, expect, test } from "bun:test";
import { Asset, Keypair, Operation, TransactionBuilder, type Transaction } from "@stellar/stellar-sdk";
import { startTestRelay, type TestRelay } from "../support/relay.ts";

let r: TestRelay;
afterEach(() => r?.stop());
const xdrOf = (tx: Transaction) => tx.toEnvelope().toXdr("base64");

test("no confirmation within SUBMISSION_TIMEOUT_MS is 504 with the hash; the retry returns the confirmed outcome", async () => {
  r = await startTestRelay({ LEDGER_CLOSE_MS: "0", SUBMISSION_TIMEOUT_MS: "300" });
  const user = await r.funded();
  const body = { transaction: xdrOf(await r.payment(user)), network: "testnet" };
  const first = await r.post("/v1/sponsor", body);
  expect(first.status).toBe(504);
  expect(first.body.error.code).toBe("SUBMISSION_TIMEOUT");
  const hash = first.body.error.details.hash;
  expect(hash).toMatch(/^[0-9a-f]{64}$/);
  r.close();
  const retry = await r.post("/v1/sponsor", body);
  expect(retry.status).toBe(200);
  expect(retry.body.hash).toBe(hash); // found on the network, not submitted again
  expect(retry.body.feePaid).toBe("200");
});

test("TRY_AGAIN_LATER is retried within TRY_AGAIN_LATER_MS, then 503 with Retry-After", async () => {
  r = await startTestRelay({ LEDGER_CLOSE_MS: "0", TRY_AGAIN_LATER_MS: "400" });
  const user = await r.funded();
  // the user's own transaction waits in the queue: the next one from the same source cannot join it
  const first = await r.payment(user);
  expect((await r.rpc.sendTransaction(first)).status).toBe("PENDING");
  const second = await r.payment(user, { seqOffset: 1n });
  const started = Date.now();
  const res = await r.post("/v1/sponsor", { transaction: xdrOf(second), network: "testnet" });
  expect(res.status).toBe(503);
  expect(res.body.error.code).toBe("NETWORK_UNAVAILABLE");
  expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  expect(Date.now() - started).toBeGreaterThanOrEqual(250);
});

test("an insufficient-fee answer from a full queue raises the bid and resends", async () => {
  // the queue holds 4 operations (and a ledger 2: one channel per network, created one operation at a time)
  r = await startTestRelay({
    LEDGER_CLOSE_MS: "0",
    LOCALNET_MAX_TX_SET_SIZE: "2",
    TESTNET_CHANNELS: "1",
    MAINNET_CHANNELS: "1",
  });
  const users = [];
  for (let i = 0; i < 5; i++) users.push(await r.funded());
  for (const u of users.slice(0, 4)) {
    const acc = await r.rpc.getAccount(u.publicKey());
    const tx = new TransactionBuilder(acc, { fee: "1000", networkPassphrase: r.passphrase })
      .addOperation(
        Operation.payment({ destination: Keypair.random().publicKey(), asset: Asset.native(), amount: "1" }),
      )
      .setTimeout(60)
      .build();
    tx.sign(u);
    expect((await r.rpc.sendTransaction(tx)).status).toBe("PENDING");
  }
  const tx = await r.payment(users[4]);
  const pending = r.post("/v1/sponsor", { transaction: xdrOf(tx), network: "testnet" });
  // the ledger closes once the relay's fee-bump is in the queue (its first bid refused, its second taken):
  // however long a busy machine takes to get there
  const queue = r.networks.get("testnet").localnet!.queue;
  const inner = Buffer.from(tx.hash()).toString("hex");
  while (!queue.byAnyHash(inner)) await Bun.sleep(10);
  r.close();
  const res = await pending;
  expect(res.status).toBe(200);
  // the fast strategy's first bid, 1,000 per operation (10x the quiet clearing rate), only tied the queue's
  // cheapest and was refused; 2,000 per operation evicted two cheaper transactions and, alone in the
  // ledger, set its surge rate
  expect(res.body.feePaid).toBe("4000");
});
