/**
 * POST /v1/sponsor end to end against the embedded localnets: who may sponsor what. Nothing a
 * refused request carries is sent or charged; one project never sees another's submission; no
 * answer carries a key.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectError, expectOk, xdrOf } from "../support/harness.ts";
import { startTestRelay, type TestRelay } from "../support/relay.ts";

let r: TestRelay;
beforeAll(async () => {
  r = await startTestRelay({ NETWORKS: "testnet,mainnet" });
});
afterAll(() => r.stop());

const key = (k: string) => ({ "x-api-key": k });
const balance = (id: string) => r.networks.get("testnet").localnet!.account(id)!.balance;

/** A signed testnet payment and its source's balance before it is sent. */
async function payment() {
  const user = await r.funded();
  const tx = await r.payment(user);
  return {
    body: { transaction: xdrOf(tx), network: "testnet" },
    innerHash: Buffer.from(tx.hash()).toString("hex"),
    source: user.publicKey(),
    before: balance(user.publicKey()),
  };
}

describe("who may sponsor", () => {
  test("without a key: testnet only; mainnet is 401, nothing sent", async () => {
    const p = await payment();
    expectError(await r.post("/v1/sponsor", { ...p.body, network: "mainnet" }), 401, "UNAUTHORIZED");
    expect(balance(p.source)).toBe(p.before);
  });

  test("a key of one network asking for the other is 403 wrong_network, nothing sent", async () => {
    const project = await r.project();
    const p = await payment();
    const res = await r.post("/v1/sponsor", { ...p.body, network: "mainnet" }, key(project.testKey));
    expectError(res, 403, "FORBIDDEN");
    expect(res.body.error.details).toEqual({ reason: "wrong_network", keyNetwork: "testnet", network: "mainnet" });
    expect(balance(p.source)).toBe(p.before);
  });

  test("a key without the sponsor scope is 403 SCOPE_REQUIRED; a revoked key 401; nothing sent", async () => {
    const project = await r.project();
    const read = await r.admin("POST", `/projects/${project.id}/keys`, { environment: "test", scopes: ["read"] });
    expectOk(read, 201);
    const p = await payment();
    const refused = await r.post("/v1/sponsor", p.body, key(read.body.key));
    expectError(refused, 403, "SCOPE_REQUIRED");
    expect(refused.body.error.details.scope).toBe("sponsor");
    const revoked = await r.admin("POST", `/projects/${project.id}/keys`, { environment: "test" });
    expectOk(await r.admin("DELETE", `/projects/${project.id}/keys/${revoked.body.id}`));
    expectError(await r.post("/v1/sponsor", p.body, key(revoked.body.key)), 401, "UNAUTHORIZED");
    expect(balance(p.source)).toBe(p.before);
  });
});

describe("what an answer shows", () => {
  test("a project's submission is its own: another project's key gets 404; no answer carries a key", async () => {
    const [a, b] = [await r.project(), await r.project()];
    const p = await payment();
    const sponsored = await r.post("/v1/sponsor", p.body, key(a.testKey));
    expectOk(sponsored);
    expect(JSON.stringify(sponsored.body)).not.toContain(a.testKey);
    expectOk(await r.http.get(`/v1/transactions/${sponsored.body.innerHash}`, key(a.testKey)));
    expectError(await r.http.get(`/v1/transactions/${sponsored.body.innerHash}`, key(b.testKey)), 404, "NOT_FOUND");
    // the same transaction sent again through the other project: the network's answer, not a second submission
    const again = await r.post("/v1/sponsor", p.body, key(b.testKey));
    expectOk(again);
    expect(again.body.hash).toBe(sponsored.body.hash);
  });

  test("respond-async for another project's transaction: its outcome, no 202 naming its record", async () => {
    const [a, b] = [await r.project(), await r.project()];
    const user = await r.funded();
    const [first, second] = [await r.payment(user), await r.payment(user, { seqOffset: 1n })];
    const body = (tx: typeof first) => ({ transaction: xdrOf(tx), network: "testnet" });
    const async = (k: string) => ({ ...key(k), prefer: "respond-async" });
    // a's transaction held for its predecessor: a's 202 names a's record
    const held = await r.post("/v1/sponsor", body(second), async(a.testKey));
    expect(held.status).toBe(202);
    expectOk(await r.http.get(held.headers.get("location")!, key(a.testKey)));
    // b sends the same one while a's run holds it: b waits for its outcome (never paid twice), answered as without
    // the preference (given time to arrive first; arriving after the predecessor it is answered the same way)
    const joined = r.post("/v1/sponsor", body(second), async(b.testKey));
    await Bun.sleep(200);
    expectOk(await r.post("/v1/sponsor", body(first), key(a.testKey)));
    const answers = [await joined, await r.post("/v1/sponsor", body(second), async(b.testKey))];
    for (const res of answers) {
      expectOk(res);
      expect(res.body.innerHash).toBe(held.body.innerHash);
      expect([res.headers.get("location"), res.headers.get("preference-applied")]).toEqual([null, null]);
    }
    expect(answers[1]!.body.hash).toBe(answers[0]!.body.hash);
    expectError(await r.http.get(`/v1/transactions/${held.body.innerHash}`, key(b.testKey)), 404, "NOT_FOUND");
  });

  test("a transaction one project refused, sent through another: 403 another_project, its record stays the first's, nothing sent", async () => {
    const a = await r.project({ policy: { allowedOperations: ["createAccount"] } });
    const b = await r.project();
    const p = await payment();
    expectError(await r.post("/v1/sponsor", p.body, key(a.testKey)), 403, "POLICY_VIOLATION");
    const other = await r.post("/v1/sponsor", p.body, key(b.testKey));
    expectError(other, 403, "FORBIDDEN");
    expect(other.body.error.details.reason).toBe("another_project");
    expect(balance(p.source)).toBe(p.before);
    const hash = p.innerHash;
    const own = await r.http.get(`/v1/transactions/${hash}`, key(a.testKey));
    expectOk(own);
    expect(own.body.status).toBe("rejected");
    expectError(await r.http.get(`/v1/transactions/${hash}`, key(b.testKey)), 404, "NOT_FOUND");
    // the other project's reservation was given back: it sponsors its own transactions as before
    expectOk(await r.post("/v1/sponsor", (await payment()).body, key(b.testKey)));
  });
});
