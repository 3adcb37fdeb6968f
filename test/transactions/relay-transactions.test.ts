/**
 * Submissions as resources, end to end against the embedded testnet: every answer carries innerHash
 * and status; GET /v1/transactions/{hash} by either hash, scoped to the caller, with ?wait; Prefer:
 * respond-async answers 202 once the network accepted; a wrong sequence number ends rejected; each
 * status change is an event row; the admin list pages newest first.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { expectError, expectOk, HASH, xdrOf } from "../support/harness.ts";
import { startTestRelay, type TestRelay } from "../support/relay.ts";
import { rowsOf } from "../../src/store/batch-sql.ts";

let r: TestRelay;
let project: { id: string; testKey: string; liveKey: string };
let other: { id: string; testKey: string; liveKey: string };
beforeAll(async () => {
  r = await startTestRelay();
  project = await r.project();
  other = await r.project();
});
afterAll(() => r.stop());

const innerOf = (tx: { hash(): Uint8Array }) => Buffer.from(tx.hash()).toString("hex");
const keyed = (key: string, extra: Record<string, string> = {}) => ({ "x-api-key": key, ...extra });

async function statusEvents(innerHash: string): Promise<string[]> {
  const rows = rowsOf<{ status: string }>(
    await r.database.execute(sql`select data->>'status' as status from events
      where type = 'transaction.status' and data->>'innerHash' = ${innerHash} order by id`),
  );
  return rows.map((x) => x.status);
}

describe("a synchronous sponsorship", () => {
  test("answers innerHash and status; the lookup by either hash answers the same, with its attempts", async () => {
    const user = await r.funded();
    const tx = await r.payment(user);
    const res = await r.post("/v1/sponsor", { transaction: xdrOf(tx), network: "testnet" }, keyed(project.testKey));
    expect(res.status).toBe(200);
    expect(res.body.innerHash).toBe(innerOf(tx));
    expect(res.body.status).toBe("success");
    for (const hash of [res.body.innerHash, res.body.hash]) {
      const got = await r.http.get(`/v1/transactions/${hash}?wait=5`, keyed(project.testKey));
      expect(got.status).toBe(200);
      expect(got.body).toMatchObject({
        hash: res.body.hash,
        innerHash: res.body.innerHash,
        status: "success",
        network: "testnet",
        ledger: res.body.ledger,
        feeCharged: res.body.feePaid,
        resultXdr: res.body.resultXdr,
      });
      expect(got.body.attempts).toHaveLength(1);
      expect(got.body.attempts[0]).toMatchObject({ hash: res.body.hash, answer: "PENDING" });
      expect(BigInt(got.body.attempts[0].feeBid)).toBeGreaterThanOrEqual(100n); // the bid, not the charge
      expect(got.body.attempts[0].channel).toMatch(/^G[A-Z2-7]{55}$/);
    }
    // one event per change (a new submission is pending: its first event is where it goes next), in order
    expect(await statusEvents(res.body.innerHash)).toEqual(["submitted", "success"]);
  });

  test("another project's key, an anonymous caller and an unknown hash all get the same 404", async () => {
    const user = await r.funded();
    const tx = await r.payment(user);
    const res = await r.post("/v1/sponsor", { transaction: xdrOf(tx), network: "testnet" }, keyed(project.testKey));
    expect(res.status).toBe(200);
    const theirs = await r.http.get(`/v1/transactions/${res.body.innerHash}`, keyed(other.testKey));
    expectError(theirs, 404, "NOT_FOUND");
    const anonymous = await r.http.get(`/v1/transactions/${res.body.innerHash}`);
    expectError(anonymous, 404, "NOT_FOUND");
    const unknown = await r.http.get(`/v1/transactions/${"ab".repeat(32)}`, keyed(project.testKey));
    expectError(unknown, 404, "NOT_FOUND");
    expect(unknown.body.error.message).toBe(theirs.body.error.message);
    expectError(await r.http.get("/v1/transactions/nothex", keyed(project.testKey)), 400, "VALIDATION_ERROR");
    expectError(await r.http.get(`/v1/transactions/${res.body.innerHash}?wait=31`), 400, "VALIDATION_ERROR");
  });

  test("anonymous testnet callers look up anonymous testnet submissions", async () => {
    const user = await r.funded();
    const tx = await r.payment(user);
    const res = await r.post("/v1/sponsor", { transaction: xdrOf(tx), network: "testnet" });
    expect(res.status).toBe(200);
    const got = await r.http.get(`/v1/transactions/${res.body.innerHash}`);
    expect(got.status).toBe(200);
    expect(got.body.status).toBe("success");
    expectError(await r.http.get(`/v1/transactions/${res.body.innerHash}`, keyed(project.testKey)), 404, "NOT_FOUND");
  });

  test("a wrong sequence number ends rejected, with innerHash and status in the error", async () => {
    const user = await r.funded();
    const tx = await r.payment(user, { seqOffset: -1n });
    const res = await r.post("/v1/sponsor", { transaction: xdrOf(tx), network: "testnet" }, keyed(project.testKey));
    expectError(res, 422, "SUBMISSION_FAILED");
    expect(res.body.error.details.innerHash).toBe(innerOf(tx));
    expect(res.body.error.details.status).toBe("rejected");
    const got = await r.http.get(`/v1/transactions/${innerOf(tx)}`, keyed(project.testKey));
    expect(got.body.status).toBe("rejected");
    expect(got.body.error.code).toBe("SUBMISSION_FAILED");
    expect(got.body.attempts[0].hash).toMatch(HASH);
    expect(got.body.attempts[0].answer).toBe("tx_bad_seq"); // the network's answer to that attempt
    expect(await statusEvents(innerOf(tx))).toEqual(["rejected"]);
  });

  test("sent again with another fee-bump: the hash an earlier attempt was answered with still finds it", async () => {
    const tx = await r.payment(await r.funded(), { seqOffset: -1n });
    const send = () => r.post("/v1/sponsor", { transaction: xdrOf(tx), network: "testnet" }, keyed(project.testKey));
    const first = (await send()).body.error.details.hash as string;
    // other transactions in between move the channels' rooms: the retry's fee-bump has another fee source
    let again = first;
    for (let i = 0; i < 5 && again === first; i++) {
      for (const other of await Promise.all([1, 2, 3].map(async () => r.payment(await r.funded()))))
        expectOk(
          await r.post("/v1/sponsor", { transaction: xdrOf(other), network: "testnet" }, keyed(project.testKey)),
        );
      again = (await send()).body.error.details.hash as string;
    }
    expect(again).not.toBe(first);
    for (const hash of [first, again, innerOf(tx)]) {
      const got = await r.http.get(`/v1/transactions/${hash}`, keyed(project.testKey));
      expectOk(got);
      expect([got.body.innerHash, got.body.hash, got.body.status]).toEqual([innerOf(tx), again, "rejected"]);
    }
  });
});

describe("a refusal of the relay's own", () => {
  test("a policy refusal is a rejected submission to look up; sent again once allowed, it succeeds", async () => {
    const p = await r.project({ policy: { maxOperations: 1 } });
    const user = await r.funded();
    const { Operation, TransactionBuilder, Asset } = await import("@stellar/stellar-sdk");
    const two = new TransactionBuilder(await r.rpc.getAccount(user.publicKey()), {
      fee: "100",
      networkPassphrase: r.passphrase,
    })
      .addOperation(Operation.payment({ destination: user.publicKey(), asset: Asset.native(), amount: "1" }))
      .addOperation(Operation.payment({ destination: user.publicKey(), asset: Asset.native(), amount: "2" }))
      .setTimeout(60)
      .build();
    two.sign(user);
    const refused = await r.post("/v1/sponsor", { transaction: xdrOf(two), network: "testnet" }, keyed(p.testKey));
    expectError(refused, 403, "POLICY_VIOLATION");
    const got = await r.http.get(`/v1/transactions/${innerOf(two)}`, keyed(p.testKey));
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ status: "rejected", error: { code: "POLICY_VIOLATION" }, attempts: [] });
    expect((await r.admin("PATCH", `/projects/${p.id}`, { policy: { maxOperations: 2 } })).status).toBe(200);
    const ok = await r.post("/v1/sponsor", { transaction: xdrOf(two), network: "testnet" }, keyed(p.testKey));
    expect(ok.status).toBe(200);
    const after = await r.http.get(`/v1/transactions/${innerOf(two)}`, keyed(p.testKey));
    expect(after.body.status).toBe("success");
    // sent again: pending; then submitted, unless the ledger's outcome was written before the acceptance
    // (acceptances wait up to 50 ms for intents being written: a 50 ms ledger can come first)
    const events = await statusEvents(innerOf(two));
    expect([
      ["pending", "submitted", "success"],
      ["pending", "success"],
    ]).toContainEqual(events);
  });
});

describe("Prefer: respond-async", () => {
  test("202 once the network accepted it, with Location; ?wait then answers the final status", async () => {
    const user = await r.funded();
    const tx = await r.payment(user);
    const res = await r.post(
      "/v1/sponsor",
      { transaction: xdrOf(tx), network: "testnet" },
      keyed(project.testKey, { prefer: "respond-async" }),
    );
    expect(res.status).toBe(202);
    // submitted, or success when the ledger closed before the acceptance was written
    expect(res.body).toEqual({ hash: expect.stringMatching(HASH), innerHash: innerOf(tx), status: res.body.status });
    expect(["submitted", "success"]).toContain(res.body.status);
    expect(res.headers.get("location")).toBe(`/v1/transactions/${innerOf(tx)}`);
    expect(res.headers.get("preference-applied")).toBe("respond-async");
    const now = await r.http.get(res.headers.get("location")!, keyed(project.testKey));
    expect(["submitted", "success"]).toContain(now.body.status);
    const done = await r.http.get(`${res.headers.get("location")}?wait=10`, keyed(project.testKey));
    expect(done.body.status).toBe("success");
    expect(done.body.ledger).toBeGreaterThan(0);
  });

  test("what fails before submission is answered at once, as without the preference", async () => {
    const res = await r.post(
      "/v1/sponsor",
      { transaction: "AAAA", network: "testnet" },
      keyed(project.testKey, { prefer: "respond-async" }),
    );
    expectError(res, 400, "VALIDATION_ERROR");
  });

  test("with an idempotency key: the replay answers the submission's outcome, nothing is sent twice", async () => {
    const user = await r.funded();
    const tx = await r.payment(user);
    const headers = keyed(project.testKey, { prefer: "respond-async", "x-idempotency-key": crypto.randomUUID() });
    const first = await r.post("/v1/sponsor", { transaction: xdrOf(tx), network: "testnet" }, headers);
    expect(first.status).toBe(202);
    await r.http.get(`/v1/transactions/${innerOf(tx)}?wait=10`, keyed(project.testKey));
    const again = await r.post("/v1/sponsor", { transaction: xdrOf(tx), network: "testnet" }, headers);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ innerHash: innerOf(tx), status: "success", hash: first.body.hash });
    const got = await r.http.get(`/v1/transactions/${innerOf(tx)}`, keyed(project.testKey));
    expect(got.body.attempts).toHaveLength(1);
  });
});

describe("an asynchronous replay while the first request runs", () => {
  test("the same idempotency key, at once and after the acceptance: each answered 202 without waiting for the ledger", async () => {
    const relay = await startTestRelay({ LEDGER_CLOSE_MS: "0" });
    try {
      relay.close(); // the friendbot's funding lands
      const user = await relay.funded();
      const tx = await relay.payment(user);
      const headers = { prefer: "respond-async", "x-idempotency-key": crypto.randomUUID() };
      const send = () => relay.post("/v1/sponsor", { transaction: xdrOf(tx), network: "testnet" }, headers);
      // no ledger closes: without the run's acceptance the replays would wait for its outcome
      const [a, b] = await Promise.all([send(), send()]);
      const c = await send();
      for (const res of [a, b, c]) {
        expect(res.status).toBe(202);
        expect(res.body).toMatchObject({ innerHash: innerOf(tx), status: "submitted", hash: a.body.hash });
      }
      relay.close();
      const done = await relay.http.get(`/v1/transactions/${innerOf(tx)}?wait=10`);
      expect(done.body.status).toBe("success");
      expect(done.body.attempts).toHaveLength(1);
    } finally {
      await relay.stop();
    }
  }, 30_000);
});

describe("the admin list", () => {
  test("newest first, filtered by project and status, paged by cursor", async () => {
    const p = await r.project();
    const hashes: string[] = [];
    for (let i = 0; i < 3; i++) {
      const tx = await r.payment(await r.funded());
      const res = await r.post("/v1/sponsor", { transaction: xdrOf(tx), network: "testnet" }, keyed(p.testKey));
      expect(res.status).toBe(200);
      hashes.push(res.body.innerHash);
    }
    const page1 = await r.admin("GET", `/transactions?project=${p.id}&limit=2`);
    expect(page1.status).toBe(200);
    expect(page1.body.transactions.map((t: { innerHash: string }) => t.innerHash)).toEqual([hashes[2], hashes[1]]);
    expect(page1.body.transactions[0].projectId).toBe(p.id);
    const page2 = await r.admin("GET", `/transactions?project=${p.id}&limit=2&cursor=${page1.body.nextCursor}`);
    expect(page2.body.transactions.map((t: { innerHash: string }) => t.innerHash)).toEqual([hashes[0]]);
    expect(page2.body.nextCursor).toBeNull();
    const failed = await r.admin("GET", `/transactions?project=${p.id}&status=failed`);
    expect(failed.body.transactions).toEqual([]);
    expectError(await r.admin("GET", "/transactions?status=nope"), 400, "VALIDATION_ERROR");
    expectError(await r.admin("GET", "/transactions?cursor=nope"), 400, "VALIDATION_ERROR");
  });
});

describe("a long poll at shutdown", () => {
  test("a look-up waiting for a status answers the current one at once when the relay stops", async () => {
    const relay = await startTestRelay({ LEDGER_CLOSE_MS: "0", SHUTDOWN_GRACE_MS: "20000" });
    try {
      relay.close(); // the friendbot's funding lands
      const user = await relay.funded();
      const tx = await relay.payment(user);
      const res = await relay.post(
        "/v1/sponsor",
        { transaction: xdrOf(tx), network: "testnet" },
        { prefer: "respond-async" },
      );
      expect(res.status).toBe(202); // no ledger closes: it stays submitted
      const waiting = relay.http.get(`/v1/transactions/${innerOf(tx)}?wait=30`);
      await Bun.sleep(300);
      const t0 = Date.now();
      const stopped = relay.stop();
      const answer = await waiting;
      expect(Date.now() - t0).toBeLessThan(3000);
      expect(answer.status).toBe(200);
      expect(answer.body.status).toBe("submitted");
      await stopped;
    } catch (e) {
      await relay.stop().catch(() => {});
      throw e;
    }
  }, 30_000);
});
