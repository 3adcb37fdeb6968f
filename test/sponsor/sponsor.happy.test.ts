/** POST /v1/sponsor end to end against the embedded testnet localnet: what succeeds. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { TransactionBuilder, xdr } from "@stellar/stellar-sdk";
import { UUID, xdrOf } from "../support/harness.ts";
import { startTestRelay, type TestRelay } from "../support/relay.ts";

let r: TestRelay;
beforeAll(async () => {
  r = await startTestRelay();
});
afterAll(() => r.stop());

const balance = (id: string) => r.networks.get("testnet").localnet!.account(id)!.balance;

describe("success", () => {
  test("a payment is wrapped, paid by the relay, and confirmed with hash, fee, ledger and result", async () => {
    const user = await r.funded();
    const tx = await r.payment(user, { amount: "3" });
    const before = balance(user.publicKey());
    const res = await r.post("/v1/sponsor", { transaction: xdrOf(tx), network: "testnet" });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-request-id")).toMatch(UUID);
    expect(res.body.feePaid).toBe("200"); // 100 x (1 op + 1)
    expect(res.body.hash).not.toBe(Buffer.from(tx.hash()).toString("hex"));
    expect(balance(user.publicKey())).toBe(before - 30_000_000n); // the user pays no fee
    const got = await r.rpc.getTransaction(res.body.hash);
    expect(got.status).toBe("SUCCESS" as never);
    expect((got as { ledger: number }).ledger).toBe(res.body.ledger);
    expect(xdr.TransactionResult.fromXdr(res.body.resultXdr, "base64").feeCharged).toBe(200n);
  });

  test("a client fee-bump is unwrapped and re-wrapped by the relay", async () => {
    const [user, other] = [await r.funded(), await r.funded()];
    const inner = await r.payment(user);
    const clientFb = TransactionBuilder.buildFeeBumpTransaction(other, "500", inner, r.passphrase);
    clientFb.sign(other);
    const otherBefore = balance(other.publicKey());
    const res = await r.post("/v1/sponsor", { transaction: xdrOf(clientFb), network: "testnet" });
    expect(res.status).toBe(200);
    expect(res.body.hash).not.toBe(Buffer.from(clientFb.hash()).toString("hex"));
    expect(balance(other.publicKey())).toBe(otherBefore); // the client's fee source paid nothing
    const byInner = await r.rpc.getTransaction(Buffer.from(inner.hash()).toString("hex"));
    expect(byInner.status).toBe("SUCCESS" as never);
  });
});

describe("never paid twice", () => {
  test("the same inner transaction sent twice (also concurrently) is submitted once", async () => {
    const user = await r.funded();
    const body = { transaction: xdrOf(await r.payment(user)), network: "testnet" };
    const [a, b] = await Promise.all([r.post("/v1/sponsor", body), r.post("/v1/sponsor", body)]);
    expect(a.status).toBe(200);
    expect(b.body).toEqual(a.body);
    const c = await r.post("/v1/sponsor", body);
    expect(c.body).toEqual(a.body);
  });
});

describe("X-Idempotency-Key", () => {
  test("replays the first outcome with Idempotent-Replayed, concurrently and afterwards", async () => {
    const user = await r.funded();
    const body = { transaction: xdrOf(await r.payment(user)), network: "testnet" };
    const key = { "x-idempotency-key": `k-${crypto.randomUUID()}` };
    const [a, b] = await Promise.all([r.post("/v1/sponsor", body, key), r.post("/v1/sponsor", body, key)]);
    expect(a.status).toBe(200);
    expect(b.body).toEqual(a.body);
    expect([a.headers.get("idempotent-replayed"), b.headers.get("idempotent-replayed")].sort()).toEqual(
      ["true", null].sort() as never,
    );
    const c = await r.post("/v1/sponsor", body, key);
    expect(c.body).toEqual(a.body);
    expect(c.headers.get("idempotent-replayed")).toBe("true");
  });
});
