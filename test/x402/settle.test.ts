/**
 * /x402/settle as a submission of the merchant's project: on mainnet with an sr_live_ key the fee is
 * charged to its credits (exactly feePaid), its policy refuses what it does not allow (nothing moves),
 * and a refusal keeps the protocol's shape (`transaction` and `network`).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Keypair } from "@stellar/stellar-sdk";
import { readPayment } from "../../src/features/x402/payment.ts";
import type { PaymentRequirements } from "../../src/features/x402/x402.model.ts";
import { CLAIM_SCOPE, settleClaimMs } from "../../src/features/x402/settle.service.ts";
import { operationHash } from "../../src/features/x402/verify.service.ts";
import { IdempotencyRepo } from "../../src/store/idempotency.repo.ts";
import { idempotencyKeys } from "../../src/store/schema.ts";
import { and, eq } from "drizzle-orm";
import { type Res, until } from "../support/harness.ts";
import { startTestRelay, type TestRelay } from "../support/relay.ts";
import { body, mainnet, payment, requirements } from "./payments.ts";

let r: TestRelay;
beforeAll(async () => {
  r = await startTestRelay({ LEDGER_CLOSE_MS: "250" });
});
afterAll(() => r.stop());

const PRICE = 3_000_000n;
const balance = (pk: string) => r.networks.get("mainnet").localnet!.account(pk)!.balance;
async function fund(): Promise<Keypair> {
  const kp = Keypair.random();
  const res = await fetch(`${r.url}/localnet/mainnet/friendbot?addr=${kp.publicKey()}`);
  if (!res.ok) throw new Error(`friendbot ${res.status}`);
  return kp;
}
const settle = (b: unknown, key: string) => r.post("/x402/settle", b, { authorization: `Bearer ${key}` });

test("mainnet: settled with the merchant's live key, its credits charged exactly feePaid", async () => {
  const credits = 50_000_000n;
  const [payer, merchant] = [await fund(), await fund()];
  const p = await r.project({ credits, x402PayTo: [merchant.publicKey()] });
  const net = mainnet(r);
  const req = requirements(r, merchant.publicKey(), PRICE, net);
  const { transaction } = await payment(r, payer, merchant.publicKey(), PRICE, { net });
  const [payer0, merchant0] = [balance(payer.publicKey()), balance(merchant.publicKey())];
  const res = await settle(body(transaction, req), p.liveKey);
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ success: true, network: "stellar:pubnet", payer: payer.publicKey() });
  expect(balance(payer.publicKey())).toBe(payer0 - PRICE);
  expect(balance(merchant.publicKey())).toBe(merchant0 + PRICE);
  const fee = BigInt(res.body.extra.feePaid);
  expect(fee).toBeGreaterThan(0n);
  let view = (await r.admin("GET", `/projects/${p.id}`)).body;
  for (let i = 0; i < 100 && view.creditReserved !== "0"; i++) {
    await Bun.sleep(10);
    view = (await r.admin("GET", `/projects/${p.id}`)).body;
  }
  expect(BigInt(view.creditBalance)).toBe(credits - fee);
  // settled already: verify and settle refuse it, nothing more is charged
  const again = await settle(body(transaction, req), p.liveKey);
  expect(again.body).toMatchObject({
    success: false,
    errorReason: "invalid_exact_stellar_payload_already_settled",
    transaction: "",
    network: "stellar:pubnet",
  });
  expect(balance(payer.publicKey())).toBe(payer0 - PRICE);
});

test("another project's key cannot settle a merchant's payment: refused, nothing moves; the merchant then settles it", async () => {
  const [payer, merchant] = [await fund(), await fund()];
  const owner = await r.project({ credits: 50_000_000n, x402PayTo: [merchant.publicKey()] });
  const other = await r.project({ credits: 50_000_000n });
  const net = mainnet(r);
  const req = requirements(r, merchant.publicKey(), PRICE, net);
  const { transaction } = await payment(r, payer, merchant.publicKey(), PRICE, { net });
  const [payer0, merchant0] = [balance(payer.publicKey()), balance(merchant.publicKey())];
  const refused = await settle(body(transaction, req), other.liveKey);
  expect(refused.status).toBe(200);
  expect(refused.body).toMatchObject({ success: false, errorReason: "pay_to_not_declared", network: "stellar:pubnet" });
  expect(refused.body.errorMessage).toContain(merchant.publicKey());
  expect(balance(payer.publicKey())).toBe(payer0);
  expect((await r.admin("GET", `/projects/${other.id}`)).body.creditBalance).toBe("50000000");
  const settled = await settle(body(transaction, req), owner.liveKey);
  expect(settled.body.success).toBe(true);
  expect(balance(merchant.publicKey())).toBe(merchant0 + PRICE);
  // the declaration is shown, and replaced whole
  expect((await r.admin("GET", `/projects/${owner.id}`)).body.x402).toEqual({ payTo: [merchant.publicKey()] });
  const cleared = await r.admin("PATCH", `/projects/${owner.id}`, { x402: { payTo: [] } });
  expect(cleared.body.x402).toEqual({ payTo: [] });
  const bad = await r.admin("PATCH", `/projects/${owner.id}`, { x402: { payTo: ["not-an-address"] } });
  expect(bad.status).toBe(400);
});

test("/x402/supported lists the relay's signers for each network it settles on", async () => {
  const { testKey } = await r.project();
  const res = await r.http.get("/x402/supported", { authorization: `Bearer ${testKey}` });
  expect(res.status).toBe(200);
  const channels = (n: "mainnet" | "testnet") =>
    r.networks
      .get(n)
      .pool!.list()
      .channels.map((c) => c.publicKey);
  expect(Object.keys(res.body.signers)).toEqual(["stellar:*"]);
  expect(res.body.signers["stellar:*"].sort()).toEqual([...channels("mainnet"), ...channels("testnet")].sort());
});

test("without credits, or against the project's policy: refused with transaction and network, nothing moves", async () => {
  const [payer, merchant] = [await fund(), await fund()];
  const broke = await r.project({ x402PayTo: [merchant.publicKey()] });
  const strict = await r.project({
    credits: 50_000_000n,
    policy: { allow: { contracts: [{ contract: "C".padEnd(56, "A") }] } },
    x402PayTo: [merchant.publicKey()],
  });
  const net = mainnet(r);
  const req = requirements(r, merchant.publicKey(), PRICE, net);
  const { transaction } = await payment(r, payer, merchant.publicKey(), PRICE, { net });
  const payer0 = balance(payer.publicKey());
  for (const [key, code] of [
    [broke.liveKey, "INSUFFICIENT_CREDITS"],
    [strict.liveKey, "POLICY_VIOLATION"],
  ] as const) {
    const res = await settle(body(transaction, req), key);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      success: false,
      errorReason: "settle_exact_stellar_transaction_submission_failed",
      transaction: "",
      network: "stellar:pubnet",
      payer: payer.publicKey(),
    });
    expect(res.body.errorMessage).toStartWith(`${code}:`);
  }
  expect(balance(payer.publicKey())).toBe(payer0);
  // the cause gone (credits given), the same payment settles
  const credited = await r.admin("POST", `/projects/${broke.id}/credits`, { amount: "50000000" });
  expect(credited.status).toBeLessThan(300);
  const res = await settle(body(transaction, req), broke.liveKey);
  expect(res.body.success).toBe(true);
  expect(balance(payer.publicKey())).toBe(payer0 - PRICE);
});

test("a claim left by an instance that died mid-settlement: refused as running until it lapses, then settled once", async () => {
  const short = await startTestRelay({ LEDGER_CLOSE_MS: "500", SUBMISSION_TIMEOUT_MS: "1000" });
  try {
    const fundOn = async () => {
      const kp = Keypair.random();
      const res = await fetch(`${short.url}/localnet/mainnet/friendbot?addr=${kp.publicKey()}`);
      if (!res.ok) throw new Error(`friendbot ${res.status}`);
      return kp;
    };
    const [payer, merchant] = [await fundOn(), await fundOn()];
    const p = await short.project({ credits: 50_000_000n, x402PayTo: [merchant.publicKey()] });
    const net = mainnet(short);
    const req = requirements(short, merchant.publicKey(), PRICE, net);
    const { transaction } = await payment(short, payer, merchant.publicKey(), PRICE, { net, expiresIn: 14 });
    const read = readPayment(transaction, req as PaymentRequirements, () => false);
    if ("reason" in read) throw new Error(read.reason);
    const innerHash = operationHash(read.operation);
    // what an instance that died after its claim left: the claim, with the relay's own lifetime
    const ttl = settleClaimMs(1000);
    const claims = new IdempotencyRepo(short.database);
    expect(await claims.claimKey(CLAIM_SCOPE, `mainnet:${innerHash}`, innerHash, ttl)).toBeNull();
    const claimedAt = Date.now();
    const payer0 = short.networks.get("mainnet").localnet!.account(payer.publicKey())!.balance;
    const refused = await short.post("/x402/settle", body(transaction, req), { authorization: `Bearer ${p.liveKey}` });
    expect(refused.body).toMatchObject({
      success: false,
      errorReason: "invalid_exact_stellar_payload_already_settled",
    });
    expect(refused.body.errorMessage).toContain("running");
    let settled: Res | undefined;
    await until(
      "the claim lapsed and the payment settled",
      async () => {
        settled = await short.post("/x402/settle", body(transaction, req), { authorization: `Bearer ${p.liveKey}` });
        return settled.body.success === true;
      },
      ttl + 5000,
      250,
    );
    expect(Date.now() - claimedAt).toBeGreaterThanOrEqual(ttl - 250);
    expect(short.networks.get("mainnet").localnet!.account(payer.publicKey())!.balance).toBe(payer0 - PRICE);
    // the relay's own claim of that settlement lapses as soon: three submission timeouts, not a day
    const [row] = await short.database
      .select({ expiresAt: idempotencyKeys.expiresAt })
      .from(idempotencyKeys)
      .where(and(eq(idempotencyKeys.scope, CLAIM_SCOPE), eq(idempotencyKeys.key, `mainnet:${innerHash}`)));
    expect(row!.expiresAt.getTime() - Date.now()).toBeLessThanOrEqual(ttl);
  } finally {
    await short.stop();
  }
}, 30_000);
