/**
 * The x402 packages from npm, unchanged, against the relay on localnet: a client paying a resource
 * server protected by @x402/express's middleware, whose facilitator is the relay (`{relay}/x402`,
 * the merchant's key as Bearer). Every balance is read on chain: the payer loses exactly the price,
 * the merchant gains it, the fee is the relay's; a replayed, an altered, a doubly settled and an
 * underfunded payment move nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  Account,
  type Keypair,
  nativeToScVal,
  Operation,
  scValToNative,
  type Transaction,
  TransactionBuilder,
  type xdr,
} from "@stellar/stellar-sdk";
import { decodePaymentResponseHeader } from "@x402/fetch";
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import { startTestRelay, type TestRelay } from "../support/relay.ts";
import { sac } from "./payments.ts";
import { startStack, type Stack } from "./stack.ts";

const PRICE = 12_345_678n;
let r: TestRelay;
let stack: Stack;
let merchant: Keypair;
let projectId: string;

beforeAll(async () => {
  // ledgers of 500 ms: the client signs its entries for ceil(60 s / 5 s) = 12 ledgers
  r = await startTestRelay({ LEDGER_CLOSE_MS: "500" });
  merchant = await r.funded();
  const project = await r.project({ x402PayTo: [merchant.publicKey()] });
  projectId = project.id;
  stack = await startStack(r, { key: project.testKey, payTo: merchant.publicKey(), asset: sac(r), price: PRICE });
});
afterAll(async () => {
  await stack?.stop();
  await r?.stop();
});

const balance = (pk: string) => r.networks.get("testnet").localnet!.account(pk)!.balance;
/** The payment header the client sent (the second request: the one with the payment). */
const paymentHeader = (sent: Headers[]) => sent.map((h) => h.get("payment-signature")).find(Boolean)!;
const get = (header?: string) => fetch(`${stack.url}/paid`, { headers: header ? { "payment-signature": header } : {} });

describe("x402 packages against the relay", () => {
  test("the facilitator client sees exact on stellar:testnet with fees sponsored", async () => {
    const supported = await stack.facilitator.getSupported();
    expect(supported.kinds).toContainEqual({
      x402Version: 2,
      scheme: "exact",
      network: "stellar:testnet",
      extra: { areFeesSponsored: true },
    });
  });

  test("a client pays: 200 with the settlement; the payer loses exactly the price, the merchant gains it; a replay moves nothing", async () => {
    const payer = await r.funded();
    const before = { payer: balance(payer.publicKey()), merchant: balance(merchant.publicKey()) };
    expect((await get()).status).toBe(402);
    const sent: Headers[] = [];
    const res = await stack.payingFetch(payer, sent)(`${stack.url}/paid`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ content: "paid for" });
    const settled = decodePaymentResponseHeader(res.headers.get("payment-response")!);
    expect(settled).toMatchObject({ success: true, network: "stellar:testnet", payer: payer.publicKey() });
    expect(settled.transaction).toMatch(/^[0-9a-f]{64}$/);
    expect(balance(payer.publicKey())).toBe(before.payer - PRICE);
    expect(balance(merchant.publicKey())).toBe(before.merchant + PRICE);
    // the settlement is a submission of the merchant's project like any other: looked up by its hash
    const innerHash = (settled.extra as { innerHash: string }).innerHash;
    const looked = await r.admin("GET", `/transactions/${innerHash}`);
    expect(looked.status).toBe(200);
    expect(looked.body).toMatchObject({ status: "success", projectId, hash: settled.transaction });
    // the same payment header again: refused, nothing moves
    const replay = await get(paymentHeader(sent));
    expect(replay.status).toBe(402);
    expect(balance(payer.publicKey())).toBe(before.payer - PRICE);
    expect(balance(merchant.publicKey())).toBe(before.merchant + PRICE);
  });

  test("an altered payment (a signature byte, or the amount) is refused and moves nothing", async () => {
    const payer = await r.funded();
    const before = { payer: balance(payer.publicKey()), merchant: balance(merchant.publicKey()) };
    const accepted = await requirements();
    const payload = await stack.clientScheme(payer).createPaymentPayload(2, accepted);
    const tx = TransactionBuilder.fromXDR(payload.payload.transaction as string, r.passphrase) as Transaction;
    const op = tx.operations[0] as Operation.InvokeHostFunction;
    const entry = op.auth![0]!;
    // one bit of the payer's ed25519 signature flipped
    const raw = Buffer.from(tx.toXDR(), "base64");
    const sig = (
      scValToNative((entry.credentials.value as xdr.SorobanAddressCredentials).signature) as {
        signature: Buffer;
      }[]
    )[0]!.signature;
    const at = raw.indexOf(sig);
    expect(at).toBeGreaterThan(0);
    raw[at + 10]! ^= 0x01;
    // the amount doubled (the signed entry kept)
    const args = (op.func.value as xdr.InvokeContractArgs).args;
    const doubled = new TransactionBuilder(new Account(tx.source, "0"), { fee: "100", networkPassphrase: r.passphrase })
      .addOperation(
        Operation.invokeContractFunction({
          contract: accepted.asset,
          function: "transfer",
          args: [args[0]!, args[1]!, nativeToScVal(PRICE * 2n, { type: "i128" })],
          auth: [entry],
        }),
      )
      .setTimeout(60)
      .build()
      .toXDR();
    for (const altered of [raw.toString("base64"), doubled]) {
      const header = encodePaymentSignatureHeader({
        x402Version: 2,
        accepted,
        payload: { transaction: altered },
      } as never);
      expect((await get(header)).status).toBe(402);
      const verdict = await stack.facilitator.verify(
        { x402Version: 2, accepted, payload: { transaction: altered } } as never,
        accepted as never,
      );
      expect(verdict.isValid).toBe(false);
    }
    expect(balance(payer.publicKey())).toBe(before.payer);
    expect(balance(merchant.publicKey())).toBe(before.merchant);
  });

  test("two settles of one payment at once: exactly one success, the funds move once", async () => {
    const payer = await r.funded();
    const before = { payer: balance(payer.publicKey()), merchant: balance(merchant.publicKey()) };
    const accepted = await requirements();
    const payload = await stack.clientScheme(payer).createPaymentPayload(2, accepted);
    const full = { ...payload, accepted } as never;
    const results = await Promise.all([
      stack.facilitator.settle(full, accepted),
      stack.facilitator.settle(full, accepted),
    ]);
    expect(results.filter((s) => s.success)).toHaveLength(1);
    const refused = results.find((s) => !s.success)!;
    expect(refused).toMatchObject({ transaction: "", network: "stellar:testnet" });
    expect(refused.errorReason).toBe("invalid_exact_stellar_payload_already_settled");
    expect(balance(payer.publicKey())).toBe(before.payer - PRICE);
    expect(balance(merchant.publicKey())).toBe(before.merchant + PRICE);
  });

  test("an underfunded payment: verify says simulation_failed (the spec's reason); the resource server answers 402; nothing moves", async () => {
    const payer = await r.funded();
    const accepted = await requirements();
    // two payments signed while the funds covered each; the first drains the account
    const all = balance(payer.publicKey());
    const big = { ...accepted, amount: (all - 15_000_000n).toString() }; // 1 XLM of reserve, 0.5 XLM spendable
    const first = await stack.clientScheme(payer).createPaymentPayload(2, big);
    const second = await stack.clientScheme(payer).createPaymentPayload(2, accepted);
    const drained = await stack.facilitator.settle({ ...first, accepted: big } as never, big);
    expect(drained.success).toBe(true);
    const before = { payer: balance(payer.publicKey()), merchant: balance(merchant.publicKey()) };
    expect(before.payer - 10_000_000n).toBeLessThan(PRICE);
    const verdict = await stack.facilitator.verify({ ...second, accepted } as never, accepted);
    expect(verdict).toMatchObject({ isValid: false, invalidReason: "invalid_exact_stellar_payload_simulation_failed" });
    const res = await get(encodePaymentSignatureHeader({ ...second, accepted } as never));
    expect(res.status).toBe(402);
    expect(balance(payer.publicKey())).toBe(before.payer);
    expect(balance(merchant.publicKey())).toBe(before.merchant);
  });
});

/** The resource server's requirements for /paid, as its 402 states them. */
async function requirements() {
  const res = await get();
  const required = decodePaymentRequiredHeader(res.headers.get("payment-required")!);
  return required.accepts[0]! as never as {
    scheme: string;
    network: `${string}:${string}`;
    amount: string;
    asset: string;
    payTo: string;
    maxTimeoutSeconds: number;
    extra: Record<string, unknown>;
  };
}
