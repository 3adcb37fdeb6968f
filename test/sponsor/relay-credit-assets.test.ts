/**
 * The relay through its embedded network with a credit asset, as a wallet would use it: a sponsored
 * changeTrust, a sponsored USD payment, a refused one, an `allow.assets` refusal; each checked against
 * the balances Horizon and getLedgerEntries read back (the embedded network applies them, CAP-67
 * events included).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Asset, Horizon, type Keypair, Operation, type xdr } from "@stellar/stellar-sdk";
import { xdrOf } from "../support/harness.ts";
import { signedOp, startTestRelay, type TestRelay } from "../support/relay.ts";

let r: TestRelay;
let horizon: Horizon.Server;
beforeAll(async () => {
  r = await startTestRelay();
  horizon = new Horizon.Server(`${r.url}/localnet/testnet/horizon`, { allowHttp: true });
}, 60_000);
afterAll(() => r.stop());

const signed = async (from: Keypair, op: xdr.Operation): Promise<string> => xdrOf(await signedOp(r, from, op));
const usdOf = async (kp: Keypair, issuer: Keypair) =>
  (await horizon.loadAccount(kp.publicKey())).balances.find(
    (b) => "asset_issuer" in b && b.asset_issuer === issuer.publicKey(),
  )?.balance;
const native = async (kp: Keypair) => (await horizon.loadAccount(kp.publicKey())).balances.at(-1)!.balance;

test("a sponsored changeTrust and USD payments: the balances move, a payment past the line's limit fails on chain", async () => {
  const [issuer, alice, bob] = [await r.funded(), await r.funded(), await r.funded()];
  const usd = new Asset("USD", issuer.publicKey());
  const p = await r.project({ policy: { allow: { assets: [`USD:${issuer.publicKey()}`] } } });
  const sponsor = (transaction: string) =>
    r.post("/v1/sponsor", { network: "testnet", transaction }, { "x-api-key": p.testKey });
  const before = await native(alice);
  for (const kp of [alice, bob]) {
    const res = await sponsor(await signed(kp, Operation.changeTrust({ asset: usd, limit: "50" })));
    expect(res.status).toBe(200);
  }
  expect(await native(alice)).toBe(before); // the relay paid the fee
  expect(await usdOf(alice, issuer)).toBe("0.0000000");
  const mint = await sponsor(
    await signed(issuer, Operation.payment({ destination: alice.publicKey(), asset: usd, amount: "40" })),
  );
  expect(mint.status).toBe(200);
  const pay = await sponsor(
    await signed(alice, Operation.payment({ destination: bob.publicKey(), asset: usd, amount: "15" })),
  );
  expect(pay.status).toBe(200);
  expect(await usdOf(alice, issuer)).toBe("25.0000000");
  expect(await usdOf(bob, issuer)).toBe("15.0000000");
  // past bob's limit: the network applies it as failed (PAYMENT_LINE_FULL), charged, nothing moved
  const full = await sponsor(
    await signed(alice, Operation.payment({ destination: bob.publicKey(), asset: usd, amount: "36" })),
  );
  expect(full.status).toBe(422);
  expect(full.body.error).toMatchObject({
    code: "SUBMISSION_FAILED",
    details: { status: "failed", result_codes: { transaction: "tx_failed", operations: ["op_line_full"] } },
  });
  expect(await usdOf(bob, issuer)).toBe("15.0000000");
  expect(await usdOf(alice, issuer)).toBe("25.0000000");
});

test("allow.assets: a payment in an unlisted asset is refused before it is sent; the balances stay", async () => {
  const [issuer, alice, bob] = [await r.funded(), await r.funded(), await r.funded()];
  const eur = new Asset("EUR", issuer.publicKey());
  const p = await r.project({ policy: { allow: { assets: ["native"] } } });
  const res = await r.post(
    "/v1/sponsor",
    {
      network: "testnet",
      transaction: await signed(alice, Operation.payment({ destination: bob.publicKey(), asset: eur, amount: "1" })),
    },
    { "x-api-key": p.testKey },
  );
  expect(res.status).toBe(403);
  expect(res.body.error.details).toMatchObject({ rule: "allow.assets", value: `EUR:${issuer.publicKey()}` });
  expect(await usdOf(alice, issuer)).toBeUndefined();
});
