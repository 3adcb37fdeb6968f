/** POST /v1/sponsor end to end against the embedded testnet localnet: what is refused, and how. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Keypair, TransactionBuilder } from "@stellar/stellar-sdk";
import { expectError, xdrOf } from "../support/harness.ts";
import { startTestRelay, type TestRelay } from "../support/relay.ts";

let r: TestRelay;
beforeAll(async () => {
  r = await startTestRelay();
});
afterAll(() => r.stop());

describe("spec rule 1: malformed or invalid XDR is VALIDATION_ERROR", () => {
  test("not base64, not an envelope, trailing bytes", async () => {
    for (const [transaction, reason] of [
      ["%%%", "not_base64"],
      ["AAAA", "not_an_envelope"],
    ] as const) {
      const res = await r.post("/v1/sponsor", { transaction, network: "testnet" });
      expectError(res, 400, "VALIDATION_ERROR");
      expect(res.body.error.details.reason).toBe(reason);
    }
    const user = await r.funded();
    const raw = (await r.payment(user)).toEnvelope().toXdr();
    const trailing = Buffer.concat([raw, Buffer.alloc(4)]).toString("base64");
    const res = await r.post("/v1/sponsor", { transaction: trailing, network: "testnet" });
    expectError(res, 400, "VALIDATION_ERROR");
    expect(res.body.error.details.reason).toBe("trailing_bytes");
    expect(res.body.error.message).toContain("trailing bytes");
  });

  test("no signatures", async () => {
    const user = await r.funded();
    const tx = await r.payment(user);
    const unsigned = TransactionBuilder.fromXDR(xdrOf(tx), r.passphrase);
    unsigned.signatures.splice(0);
    const res = await r.post("/v1/sponsor", { transaction: xdrOf(unsigned), network: "testnet" });
    expectError(res, 400, "VALIDATION_ERROR");
    expect(res.body.error.details.reason).toBe("no_signatures");
    expect(res.body.error.message).toContain("no signatures");
  });

  test("unknown network and missing fields name the field", async () => {
    let res = await r.post("/v1/sponsor", { transaction: "AAAA", network: "futurenet" });
    expectError(res, 400, "VALIDATION_ERROR");
    expect(res.body.error.details.field).toBe("network");
    res = await r.post("/v1/sponsor", { network: "testnet" });
    expectError(res, 400, "VALIDATION_ERROR");
    expect(res.body.error.details.field).toBe("transaction");
    res = await r.post("/v1/sponsor", "{not json");
    expectError(res, 400, "VALIDATION_ERROR");
  });
});

describe("spec rule 3: what the network rejects is SUBMISSION_FAILED", () => {
  test("tx_bad_seq, reported as the client's code inside tx_fee_bump_inner_failed", async () => {
    const user = await r.funded();
    const tx = await r.payment(user, { seqOffset: -1n });
    const res = await r.post("/v1/sponsor", { transaction: xdrOf(tx), network: "testnet" });
    expectError(res, 422, "SUBMISSION_FAILED");
    expect(res.body.error.details.result_codes).toEqual({ transaction: "tx_bad_seq" });
    expect(res.body.error.message).toContain("tx_fee_bump_inner_failed");
    expect(res.body.error.message).toContain("tx_bad_seq");
    expect(res.body.error.details.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  test("an applied but failed transaction reports ledger, fee paid and result", async () => {
    const user = await r.funded();
    const tx = await r.payment(user, { to: Keypair.random().publicKey() });
    const res = await r.post("/v1/sponsor", { transaction: xdrOf(tx), network: "testnet" });
    expectError(res, 422, "SUBMISSION_FAILED");
    expect(res.body.error.details.result_codes).toEqual({
      transaction: "tx_failed",
      operations: ["op_no_destination"],
    });
    expect(res.body.error.details.feePaid).toBe("200");
    expect(res.body.error.details.ledger).toBeGreaterThan(1);
    expect(typeof res.body.error.details.resultXdr).toBe("string");
  });
});

describe("X-Idempotency-Key", () => {
  test("an error outcome is replayed too, with the new request's id", async () => {
    const user = await r.funded();
    const body = { transaction: xdrOf(await r.payment(user, { seqOffset: -1n })), network: "testnet" };
    const key = { "x-idempotency-key": `k-${crypto.randomUUID()}` };
    const a = await r.post("/v1/sponsor", body, key);
    const b = await r.post("/v1/sponsor", body, key);
    expectError(b, 422, "SUBMISSION_FAILED");
    expect(b.body.error.details).toEqual(a.body.error.details);
    expect(b.body.error.requestId).not.toBe(a.body.error.requestId);
    expect(b.headers.get("idempotent-replayed")).toBe("true");
  });

  test("the same key with another body is IDEMPOTENCY_KEY_REUSED; a bad key is VALIDATION_ERROR", async () => {
    const user = await r.funded();
    const key = { "x-idempotency-key": `k-${crypto.randomUUID()}` };
    await r.post("/v1/sponsor", { transaction: xdrOf(await r.payment(user)), network: "testnet" }, key);
    const other = await r.post(
      "/v1/sponsor",
      { transaction: xdrOf(await r.payment(user, { amount: "2" })), network: "testnet" },
      key,
    );
    expectError(other, 422, "IDEMPOTENCY_KEY_REUSED");
    const bad = await r.post(
      "/v1/sponsor",
      { transaction: "AAAA", network: "testnet" },
      { "x-idempotency-key": "has space" },
    );
    expectError(bad, 400, "VALIDATION_ERROR");
    expect(bad.body.error.details.field).toBe("X-Idempotency-Key");
  });
});

describe("limits and routes", () => {
  test("a body over the size limit is PAYLOAD_TOO_LARGE; an unknown route is NOT_FOUND", async () => {
    const big = await r.post("/v1/sponsor", { transaction: "A".repeat(300_000), network: "testnet" });
    expectError(big, 413, "PAYLOAD_TOO_LARGE");
    expect(big.headers.get("ratelimit-limit")).not.toBeNull(); // counted against the rate limit like any /v1 request
    expectError(await r.http.get("/v1/nothing"), 404, "NOT_FOUND");
  });

  test("a path that exists, asked with another method: 405 METHOD_NOT_ALLOWED with Allow, in the envelope", async () => {
    const res = await r.http.get("/v1/sponsor");
    expectError(res, 405, "METHOD_NOT_ALLOWED");
    expect(res.headers.get("allow")).toBe("POST");
    expect(res.body.error.message).toBe("/v1/sponsor does not take GET: it takes POST");
    const lookup = await r.http.request("DELETE", `/v1/transactions/${"0".repeat(64)}`);
    expectError(lookup, 405, "METHOD_NOT_ALLOWED");
    expect(lookup.headers.get("allow")).toBe("GET");
  });
});
