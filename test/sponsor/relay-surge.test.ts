/**
 * The fee strategy against the embedded network under surge: a ledger of 4 operations, closed when
 * the test says. A `fast` submission gets into the next ledger, charged the ledger's clearing rate
 * (not its bid), while cheaper competing transactions wait; an `economy` one waits behind them.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Account, Asset, Keypair, Operation, TransactionBuilder, type Transaction } from "@stellar/stellar-sdk";
import { startTestRelay, type TestRelay } from "../support/relay.ts";
import { fundedMainnetUser, mainnetOf, mainnetPayment, rawTransaction } from "../support/mainnet.ts";

let r: TestRelay;
beforeAll(async () => {
  r = await startTestRelay({
    LEDGER_CLOSE_MS: "0",
    LOCALNET_MAX_TX_SET_SIZE: "4",
    TESTNET_CHANNELS: "1",
    MAINNET_CHANNELS: "1",
    SUBMISSION_TIMEOUT_MS: "5000",
  });
});
afterAll(() => r?.stop());

/** `n` transactions of one payment each, straight to the network, bidding `fees` per operation. */
async function competing(fees: number[]): Promise<string[]> {
  const hashes = [];
  const users = [];
  for (const _ of fees) users.push(await r.funded()); // funding closes ledgers: all of it first
  for (const [i, fee] of fees.entries()) {
    const u = users[i]!;
    const tx = new TransactionBuilder(await r.rpc.getAccount(u.publicKey()), {
      fee: String(fee),
      networkPassphrase: r.passphrase,
    })
      .addOperation(
        Operation.payment({ destination: Keypair.random().publicKey(), asset: Asset.native(), amount: "1" }),
      )
      .setTimeout(60)
      .build();
    tx.sign(u);
    expect((await r.rpc.sendTransaction(tx)).status).toBe("PENDING");
    hashes.push(Buffer.from(tx.hash()).toString("hex"));
  }
  return hashes;
}

/** POST /v1/sponsor (or /v1/estimate) of `tx` on testnet with `key`. */
const sponsor = (tx: Transaction, key: string) =>
  r.post("/v1/sponsor", { transaction: tx.toEnvelope().toXDR("base64"), network: "testnet" }, { "x-api-key": key });
const estimateOf = (tx: Transaction, key: string) =>
  r.post("/v1/estimate", { transaction: tx.toEnvelope().toXDR("base64"), network: "testnet" }, { "x-api-key": key });

const found = async (hash: string) => (await r.rpc.getTransaction(hash)).status !== "NOT_FOUND";

/** Closes ledgers (testnet's unless `close` says) until `pending` answers (each close after the relay had time to send). */
async function closeUntil<T>(pending: Promise<T>, close = () => r.close()): Promise<{ res: T; closes: number[] }> {
  let done = false;
  void pending.finally(() => {
    done = true;
  });
  const closes: number[] = [];
  for (let i = 0; i < 12 && !done; i++) {
    await Bun.sleep(300);
    if (!done) closes.push(close());
  }
  return { res: await pending, closes };
}

test("fast: into the next ledger over cheaper competing traffic, charged the clearing rate, not its bid", async () => {
  const { testKey } = await r.project({ policy: { feeStrategy: "fast" } });
  const user = await r.funded();
  const others = await competing([100, 150, 200, 250, 300]);
  const estimate = await estimateOf(await r.payment(user), testKey);
  expect(estimate.body.explanation).toContain("fast strategy");
  // the queue holds 8 operations: 5 competitors (each 1 operation) bidding 100 to 300 fill more than a ledger
  const tx = await r.payment(user);
  const { res, closes } = await closeUntil(sponsor(tx, testKey));
  expect(res.status).toBe(200);
  expect(res.body.ledger).toBe(closes[0]); // the first ledger closed after it was sent
  // 4 operations a ledger: the fee-bump (2) and the two best competitors; the clearing rate is 250
  expect(res.body.feePaid).toBe(String(250 * 2));
  expect(BigInt(estimate.body.rates.bid)).toBeGreaterThan(250n); // what it bid
  expect(await found(others[4]!)).toBe(true);
  expect(await found(others[3]!)).toBe(true);
  for (const h of others.slice(0, 3)) expect(await found(h)).toBe(false); // the cheaper ones wait
  // what it would most likely be charged now: what the last ledgers cleared at (250), not the fee
  // statistics' most common fee (100, over a longer window)
  const after = await estimateOf(await r.payment(user), testKey);
  expect(after.body.rates.likely).toBe("250");
  expect(after.body.estimatedFee).toBe(String(250 * 2));
  expect(after.body.explanation).toContain("the last ledgers cleared at up to 250 stroops per operation");
  for (let i = 0; i < 2; i++) r.close();
});

test("economy: the fee statistic's median; under surge it waits behind better bids and gets in within 3 ledgers", async () => {
  const { testKey } = await r.project({ policy: { feeStrategy: "economy" } });
  for (let i = 0; i < 3; i++) r.close(); // the queue drained
  const user = await r.funded();
  await competing([400, 500, 600, 700]); // a full ledger of better bids (funded first, then sent)
  const tx = await r.payment(user);
  const estimate = await estimateOf(tx, testKey);
  expect(estimate.body.explanation).toContain("economy strategy");
  const { res, closes } = await closeUntil(sponsor(tx, testKey));
  expect(res.status).toBe(200);
  expect(res.body.ledger).toBeGreaterThan(closes[0]!); // not the next ledger: the competitors took it
  expect(res.body.ledger).toBeLessThanOrEqual(closes[0]! + 2);
});

test("credits (mainnet) are charged what the network charged, the clearing rate, never the bid", async () => {
  const net = r.networks.get("mainnet").localnet!;
  const { id, liveKey } = await r.project({ credits: 10_000_000n });
  const users = [];
  for (let i = 0; i < 5; i++) users.push(await fundedMainnetUser(r)); // funding closes ledgers: all of it first
  const [user, ...others] = users;
  for (const [i, o] of others.entries()) {
    const bid = new TransactionBuilder(new Account(o.publicKey(), net.account(o.publicKey())!.seqNum.toString()), {
      fee: String(300 + 100 * i), // 300 to 600 per operation: more than a ledger of 4 operations
      networkPassphrase: net.passphrase,
    })
      .addOperation(
        Operation.payment({ destination: Keypair.random().publicKey(), asset: Asset.native(), amount: "1" }),
      )
      .setTimeout(60)
      .build();
    bid.sign(o);
    expect(net.submitXdr(bid.toEnvelope().toXDR()).status).toBe("PENDING");
  }
  const { tx } = mainnetPayment(r, user!);
  const before = (await r.admin("GET", `/projects/${id}`)).body.creditBalance;
  const { res, closes } = await closeUntil(mainnetOf(r).sponsor(liveKey, tx), () => net.closeLedger().sequence);
  expect(res.status).toBe(200);
  expect(res.body.ledger).toBe(closes[0]);
  // the fee-bump (2 operations) and the 600 and 500 bids fill the ledger: 500 is the clearing rate
  expect(res.body.feePaid).toBe(String(500 * 2));
  const sent = TransactionBuilder.fromXDR(
    (await rawTransaction(r, "mainnet", res.body.hash)).envelopeXdr,
    net.passphrase,
  );
  expect(BigInt(sent.fee)).toBeGreaterThan(1000n); // the bid was higher than what was charged
  const after = (await r.admin("GET", `/projects/${id}`)).body;
  expect(BigInt(before) - BigInt(after.creditBalance)).toBe(1000n);
  expect(after.creditReserved).toBe("0");
});

test("a bid the policy caps under the clearing rate: 504 with the bid, the cap and what the ledgers cleared at", async () => {
  // 400 stroops for a 1-operation payment and its fee-bump: at most 200 per operation
  const { testKey } = await r.project({ policy: { maxFee: "400" } });
  for (let i = 0; i < 3; i++) r.close(); // the queue drained
  const user = await r.funded();
  await competing([300, 400, 500, 600]); // a full ledger of bids above the cap
  const tx = await r.payment(user);
  const pending = sponsor(tx, testKey);
  await Bun.sleep(300);
  r.close(); // the competitors fill it, clearing at 300; no other ledger closes before the relay's deadline
  const res = await pending;
  expect(res.status).toBe(504);
  expect(res.body.error.code).toBe("SUBMISSION_TIMEOUT");
  expect(res.body.error.details).toMatchObject({
    reason: "fee_cap_reached",
    bid: "200",
    cap: "200",
    strategy: "fast",
    clearingRate: "300",
  });
  expect(res.body.error.message).toContain("cleared at up to 300 stroops per operation");
  r.close(); // alone in the next ledger, it gets in at the base fee
});

test("bounds that pass while it waits: expired as soon as the ledger past them is read, with the bid and the clearing rate", async () => {
  const { testKey } = await r.project({ policy: { maxFee: "400" } }); // at most 200 per operation
  for (let i = 0; i < 3; i++) r.close(); // the queue drained
  const user = await r.funded();
  await competing([300, 400, 500, 600]); // a full ledger of bids above the cap
  const next = (await r.rpc.getLatestLedger()).sequence + 1;
  const tx = new TransactionBuilder(await r.rpc.getAccount(user.publicKey()), {
    fee: "100",
    networkPassphrase: r.passphrase,
  })
    .addOperation(Operation.payment({ destination: Keypair.random().publicKey(), asset: Asset.native(), amount: "1" }))
    .setTimeout(60)
    .setLedgerbounds(0, next + 1) // valid in ledger `next` only
    .build();
  tx.sign(user);
  const innerHash = Buffer.from(tx.hash()).toString("hex");
  const pending = sponsor(tx, testKey);
  await Bun.sleep(300);
  r.close(); // the competitors fill ledger `next`; its bounds end with it
  const res = await pending; // answered at that ledger, not at SUBMISSION_TIMEOUT_MS (a 504)
  expect(res.status).toBe(422);
  expect(res.body.error.code).toBe("SUBMISSION_FAILED");
  expect(res.body.error.details).toMatchObject({
    status: "expired",
    innerHash,
    result_codes: { transaction: "tx_too_late" },
    maxLedger: next + 1,
    bid: "200",
    cap: "200",
    clearingRate: "300",
  });
  expect(res.body.error.message).toContain(`maxLedger ${next + 1}`);
  expect(res.body.error.message).toContain("cleared at up to 300 stroops per operation");
  // the estimate a moment later quotes the same figure (one source: the ledgers the relay read)
  const estimate = await estimateOf(await r.payment(user), testKey);
  expect(estimate.body.explanation).toContain("the last ledgers cleared at up to 300 stroops per operation");
  expect(estimate.body.rates.likely).toBe("300");
  expect(await found(innerHash)).toBe(false);
  const seen = await r.http.get(`/v1/transactions/${innerHash}`, { "x-api-key": testKey });
  expect(seen.body).toMatchObject({ status: "expired", innerHash });
  // no ledger can take it any more: sent again, it is answered expired at once, without a send
  const again = await sponsor(tx, testKey);
  expect(again.status).toBe(422);
  expect(again.body.error.details.result_codes.transaction).toBe("tx_too_late");
  expect(again.body.error.details.status).toBe("expired");
  const attempts = (await r.http.get(`/v1/transactions/${innerHash}`, { "x-api-key": testKey })).body.attempts;
  expect(attempts).toHaveLength(1);
  for (let i = 0; i < 2; i++) r.close();
});

test("bounds passed before it is sent: answered expired without a send, and kept to be looked up", async () => {
  const { testKey } = await r.project();
  const user = await r.funded();
  const latest = (await r.rpc.getLatestLedger()).sequence;
  const tx = new TransactionBuilder(await r.rpc.getAccount(user.publicKey()), {
    fee: "100",
    networkPassphrase: r.passphrase,
  })
    .addOperation(Operation.payment({ destination: Keypair.random().publicKey(), asset: Asset.native(), amount: "1" }))
    .setTimeout(60)
    .setLedgerbounds(0, latest - 1) // no ledger from latest - 1 on can include it
    .build();
  tx.sign(user);
  const innerHash = Buffer.from(tx.hash()).toString("hex");
  const res = await sponsor(tx, testKey);
  expect(res.status).toBe(422);
  expect(res.body.error.details).toMatchObject({ status: "expired", innerHash, maxLedger: latest - 1 });
  // nothing was sent: no bid is quoted, and the message says none was sent
  expect(res.body.error.details.bid).toBeUndefined();
  expect(res.body.error.message).not.toContain("with a bid of");
  expect(res.body.error.message).toContain("no fee-bump of it was sent");
  const seen = await r.http.get(`/v1/transactions/${innerHash}`, { "x-api-key": testKey });
  expect(seen.status).toBe(200);
  expect(seen.body).toMatchObject({ status: "expired", innerHash, attempts: [] });
  expect(seen.body.error.code).toBe("SUBMISSION_FAILED");
});
