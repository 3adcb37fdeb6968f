/**
 * Per end-user caps (the policy's perUser): transactions and fees per UTC day for each end user of a
 * project. Over a cap: 429 USER_LIMIT_EXCEEDED with the user, the cap and when it resets, Retry-After;
 * nothing sent, nothing charged; the project's other users unaffected.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Asset, Keypair, Operation, rpc, TransactionBuilder, type Transaction } from "@stellar/stellar-sdk";
import { until, xdrOf } from "../support/harness.ts";
import { startTestRelay, type TestRelay } from "../support/relay.ts";

let r: TestRelay;
let mainnet: rpc.Server;
beforeAll(async () => {
  r = await startTestRelay();
  mainnet = new rpc.Server(`${r.url}/localnet/mainnet/rpc`, { allowHttp: true });
});
afterAll(() => r.stop());

async function mainnetFunded(): Promise<Keypair> {
  const kp = Keypair.random();
  const res = await fetch(`${r.url}/localnet/mainnet/friendbot?addr=${kp.publicKey()}`);
  if (!res.ok) throw new Error(`mainnet friendbot ${res.status}`);
  return kp;
}

async function mainnetPayment(from: Keypair): Promise<Transaction> {
  const tx = new TransactionBuilder(await mainnet.getAccount(from.publicKey()), {
    fee: "100",
    networkPassphrase: r.networks.get("mainnet").localnet!.passphrase,
  })
    .addOperation(
      Operation.payment({
        destination: r.networks.get("mainnet").localnet!.root.publicKey(),
        asset: Asset.native(),
        amount: "1",
      }),
    )
    .setTimeout(60)
    .build();
  tx.sign(from);
  return tx;
}

const nextMidnight = () => {
  const d = new Date();
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1)).toISOString();
};

test("maxTransactionsPerDay: the user's next is 429 naming it, nothing sent; another user of the project passes", async () => {
  const p = await r.project({ policy: { perUser: { maxTransactionsPerDay: 2 } } });
  const [alice, bob] = [await r.funded(), await r.funded()];
  const headers = { "x-api-key": p.testKey };
  for (let i = 0; i < 2; i++) {
    const ok = await r.post("/v1/sponsor", { transaction: xdrOf(await r.payment(alice)), network: "testnet" }, headers);
    expect(ok.status).toBe(200);
  }
  const third = await r.payment(alice);
  const res = await r.post("/v1/sponsor", { transaction: xdrOf(third), network: "testnet" }, headers);
  expect(res.status).toBe(429);
  expect(res.body.error.code).toBe("USER_LIMIT_EXCEEDED");
  expect(res.body.error.details).toEqual({
    user: alice.publicKey(),
    limit: "maxTransactionsPerDay",
    resetAt: nextMidnight(),
  });
  expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
  expect(BigInt((await r.rpc.getAccount(alice.publicKey())).sequenceNumber())).toBe(BigInt(third.sequence) - 1n);
  const other = await r.post("/v1/sponsor", { transaction: xdrOf(await r.payment(bob)), network: "testnet" }, headers);
  expect(other.status).toBe(200);
  const read = () => r.admin("GET", `/projects/${p.id}/users/${alice.publicKey()}`);
  await until("alice's day settled", async () => (await read()).body.feeCharged === "400", 5_000, 20);
  const usage = await read();
  expect(usage.status).toBe(200);
  expect(usage.body).toMatchObject({ account: alice.publicKey(), transactions: 2 });
  expect(usage.body.day).toBe(new Date().toISOString().slice(0, 10));
  expect(BigInt(usage.body.feeCharged)).toBe(400n); // two payments at 200 stroops (1 op + the fee-bump)
});

test("maxFeePerDay on mainnet: the fee in flight counts; over it 429, and the credits are not touched", async () => {
  const p = await r.project({ credits: 100_000_000n, policy: { perUser: { maxFeePerDay: "12000000" } } });
  const user = await mainnetFunded();
  const headers = { "x-api-key": p.liveKey };
  // one transaction reserves up to the policy's maxFee (10,000,000 by default): a second in flight would pass the cap
  const first = await r.post(
    "/v1/sponsor",
    { transaction: xdrOf(await mainnetPayment(user)), network: "mainnet" },
    headers,
  );
  expect(first.status).toBe(200);
  const before = (await r.admin("GET", `/projects/${p.id}`)).body.creditBalance;
  const read = async () => (await r.admin("GET", `/projects/${p.id}/users/${user.publicKey()}`)).body;
  await until("the user's day settled", async () => (await read()).feeCharged === first.body.feePaid, 5_000, 20);
  // 200 charged + up to 10,000,000 reserved <= 12,000,000: a second passes; a third at once would not
  const [a, b] = await Promise.all([
    r.post("/v1/sponsor", { transaction: xdrOf(await mainnetPayment(user)), network: "mainnet" }, headers),
    (async () => {
      const other = await mainnetFunded();
      return r.post("/v1/sponsor", { transaction: xdrOf(await mainnetPayment(other)), network: "mainnet" }, headers);
    })(),
  ]);
  expect(a.status).toBe(200);
  expect(b.status).toBe(200); // another user: unaffected
  const tight = await r.project({
    credits: 100_000_000n,
    policy: { perUser: { maxFeePerDay: "1000" }, maxFee: "5000" },
  });
  const res = await r.post(
    "/v1/sponsor",
    { transaction: xdrOf(await mainnetPayment(user)), network: "mainnet" },
    { "x-api-key": tight.liveKey },
  );
  expect(res.status).toBe(429);
  expect(res.body.error.details.limit).toBe("maxFeePerDay");
  expect((await r.admin("GET", `/projects/${tight.id}`)).body.creditBalance).toBe("100000000");
  expect(before).toBe((100_000_000n - BigInt(first.body.feePaid)).toString());
});

test("at once: a user's burst over maxTransactionsPerDay never lands more than the cap", async () => {
  const p = await r.project({ policy: { perUser: { maxTransactionsPerDay: 3 } } });
  const user = await r.funded();
  const txs = await Promise.all([0n, 1n, 2n, 3n, 4n, 5n].map((i) => r.payment(user, { seqOffset: i })));
  const answers = await Promise.all(
    txs.map((tx) => r.post("/v1/sponsor", { transaction: xdrOf(tx), network: "testnet" }, { "x-api-key": p.testKey })),
  );
  const statuses = answers.map((a) => a.status).sort();
  // at most three are admitted at once (429 past them); one held for a refused predecessor (422) gives its
  // count back, so on a busy machine, where the six arrive spread out, a later one may take it: never more
  // than three land, and those that land are what the user's day counts
  expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(1);
  expect(statuses.every((s) => s === 200 || s === 429 || s === 422)).toBe(true);
  const ok = answers.filter((a) => a.status === 200);
  expect(ok.length).toBeLessThanOrEqual(3);
  const charged = ok.reduce((a, b) => a + BigInt(b.body.feePaid), 0n);
  // the user's day is settled just after each answer
  const usage = async () => (await r.admin("GET", `/projects/${p.id}/users/${user.publicKey()}`)).body;
  await until("the user's day settled", async () => BigInt((await usage()).feeCharged) === charged, 5_000, 20);
  expect((await usage()).transactions).toBe(ok.length);
});

test("an end user's usage is shown without a cap too: its transactions today and what they were charged", async () => {
  const p = await r.project();
  const [alice, bob] = [await r.funded(), await r.funded()];
  const headers = { "x-api-key": p.testKey };
  let charged = 0n;
  for (let i = 0; i < 2; i++) {
    const ok = await r.post("/v1/sponsor", { transaction: xdrOf(await r.payment(alice)), network: "testnet" }, headers);
    expect(ok.status).toBe(200);
    charged += BigInt(ok.body.feePaid);
  }
  const day = (await r.admin("GET", `/projects/${p.id}/users/${alice.publicKey()}`)).body;
  expect(day).toMatchObject({ account: alice.publicKey(), transactions: 2, feeCharged: charged.toString() });
  expect((await r.admin("GET", `/projects/${p.id}/users/${bob.publicKey()}`)).body.transactions).toBe(0);
  // another project's look-up of the same user sees its own transactions only
  const other = await r.project();
  expect((await r.admin("GET", `/projects/${other.id}/users/${alice.publicKey()}`)).body.transactions).toBe(0);
});
