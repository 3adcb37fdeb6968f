/**
 * /x402/verify's refusals, one cause each, in the scheme's reason codes; and what it accepts:
 * classic address credentials and CAP-71's AddressV2 alike. Payments are built on the test relay's
 * testnet as @x402/stellar's client builds them (test/x402/payments.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Keypair } from "@stellar/stellar-sdk";
import { startTestRelay, type TestRelay } from "../support/relay.ts";
import { TEST_CONTRACT_ID } from "../../src/localnet/soroban/contracts.ts";
import { body, payment, requirements, type Requirements } from "./payments.ts";
import { X402_REASONS } from "../../src/features/x402/reasons.ts";

let r: TestRelay;
let key: string;
let payer: Keypair;
let merchant: Keypair;
const PRICE = 1_000_000n;

beforeAll(async () => {
  // ledgers of 250 ms: an entry signed for 10 ledgers outlives the test's requests
  r = await startTestRelay({ LEDGER_CLOSE_MS: "250" });
  key = (await r.project()).testKey;
  [payer, merchant] = await Promise.all([r.funded(), r.funded()]);
});
afterAll(() => r.stop());

const verify = (b: unknown, k = key) => r.post("/x402/verify", b, { authorization: `Bearer ${k}` });
const req = (): Requirements => requirements(r, merchant.publicKey(), PRICE);

async function expectRefused(transaction: string, reason: string, requirementsFor = req(), accepted = {}) {
  const res = await verify(body(transaction, requirementsFor, accepted));
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ isValid: false, invalidReason: reason });
  expect(typeof res.body.invalidMessage).toBe("string");
  return res.body;
}

/** A relay channel account (admin API). */
async function channel(): Promise<string> {
  const res = await r.admin("GET", "/channels?network=testnet");
  return res.body.channels[0].publicKey;
}

describe("/x402/verify", () => {
  test("classic address credentials and CAP-71 AddressV2 credentials are both valid; payer named", async () => {
    for (const upgraded of [false, true]) {
      const { transaction, entry } = await payment(r, payer, merchant.publicKey(), PRICE, { upgraded });
      expect(entry.credentials.type).toBe(upgraded ? "sorobanCredentialsAddressV2" : "sorobanCredentialsAddress");
      const res = await verify(body(transaction, req()));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ isValid: true, payer: payer.publicKey() });
    }
  });

  test("wrong amount, wrong payTo, wrong asset: refused with the spec's reasons", async () => {
    const { transaction } = await payment(r, payer, merchant.publicKey(), PRICE);
    const other = Keypair.random().publicKey();
    expect(
      await expectRefused(
        transaction,
        "invalid_exact_stellar_payload_wrong_amount",
        requirements(r, merchant.publicKey(), PRICE + 1n),
      ),
    ).toMatchObject({ payer: payer.publicKey() });
    await expectRefused(transaction, "invalid_exact_stellar_payload_wrong_recipient", requirements(r, other, PRICE));
    await expectRefused(transaction, "invalid_exact_stellar_payload_wrong_asset", {
      ...req(),
      asset: TEST_CONTRACT_ID,
    });
  });

  test("a relay account as the transfer's from, in the auth entry, or as the operation's source: refused", async () => {
    const relay = await channel();
    // the relay's channel as from (its entry left unsigned: the check comes first)
    const { transaction: fromRelay } = await payment(
      r,
      { publicKey: () => relay } as Keypair,
      merchant.publicKey(),
      PRICE,
      {
        sign: false,
      },
    );
    await expectRefused(fromRelay, "invalid_exact_stellar_payload_facilitator_is_payer");
    const { transaction: sourced } = await payment(r, payer, merchant.publicKey(), PRICE, { source: relay });
    await expectRefused(sourced, "invalid_exact_stellar_payload_unsafe_tx_or_op_source");
  });

  test("an entry expiring before a settlement can land, or too far ahead: refused", async () => {
    const { transaction: soon } = await payment(r, payer, merchant.publicKey(), PRICE, { expiresIn: 1 });
    await expectRefused(soon, "invalid_exact_stellar_signature_expired");
    const { transaction: far } = await payment(r, payer, merchant.publicKey(), PRICE, { expiresIn: 1000 });
    await expectRefused(far, "invalid_exact_stellar_signature_expiration_too_far");
  });

  test("unsigned entries, another function's contract, protocol mismatches: refused", async () => {
    const { transaction: unsigned } = await payment(r, payer, merchant.publicKey(), PRICE, { sign: false });
    await expectRefused(unsigned, "invalid_exact_stellar_payload_missing_payer_signature");
    const { transaction } = await payment(r, payer, merchant.publicKey(), PRICE);
    await expectRefused(transaction, "network_mismatch", req(), { network: "stellar:pubnet" });
    await expectRefused(transaction, "unsupported_scheme", { ...req(), scheme: "upto" }, { scheme: "upto" });
    await expectRefused("AAAA", "invalid_exact_stellar_payload_malformed");
    const res = await verify({ ...body(transaction, req()), x402Version: 1 });
    expect(res.body).toMatchObject({ isValid: false, invalidReason: "invalid_x402_version" });
  });

  test("the merchant's key is required, on testnet too; a live key cannot verify a testnet payment", async () => {
    const { transaction } = await payment(r, payer, merchant.publicKey(), PRICE);
    const anonymous = await r.post("/x402/verify", body(transaction, req()));
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error.code).toBe("UNAUTHORIZED");
    const live = await verify(body(transaction, req()), (await r.project()).liveKey);
    expect(live.status).toBe(403);
    expect(live.body.error.details.reason).toBe("wrong_network");
  });

  test("/x402/supported: exact on the served networks, fees sponsored", async () => {
    const res = await r.http.get("/x402/supported", { authorization: `Bearer ${key}` });
    expect(res.status).toBe(200);
    expect(res.body.kinds).toEqual(
      expect.arrayContaining([
        { x402Version: 2, scheme: "exact", network: "stellar:testnet", extra: { areFeesSponsored: true } },
        { x402Version: 2, scheme: "exact", network: "stellar:pubnet", extra: { areFeesSponsored: true } },
      ]),
    );
  });

  test("docs/x402.md lists every reason code the facilitator answers", async () => {
    const doc = await Bun.file(new URL("../../docs/x402.md", import.meta.url)).text();
    expect(Object.keys(X402_REASONS).filter((code) => !doc.includes(`| \`${code}\` |`))).toEqual([]);
  });
});
