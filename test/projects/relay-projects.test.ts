/**
 * Projects over HTTP: API keys and their networks, suspension, every policy rule, rate limits
 * (per project and per anonymous client IP) and the admin API's authentication. The main suite
 * runs on embedded PGlite, and on Postgres too when TEST_DATABASE_URL is set. One relay per
 * configuration, its app called in this process (test/support/harness.ts), but over a socket where
 * the anonymous bucket is the connection's address. That keys known at boot stay known across a
 * restart: relay-restart.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  Asset,
  Contract,
  Keypair,
  Operation,
  StrKey,
  TransactionBuilder,
  nativeToScVal,
  scValToNative,
  type Transaction,
  xdr,
} from "@stellar/stellar-sdk";
import { TEST_CONTRACT_ID } from "../../src/localnet/soroban/contracts.ts";
import { expectError, expectOk, rateHeaders, type Res, UUID, xdrOf } from "../support/harness.ts";
import { databaseEnv, databaseKinds, startTestRelay, TEST_ADMIN_TOKEN, type TestRelay } from "../support/relay.ts";

const key = (k: string) => ({ "x-api-key": k });
/** Another valid contract id (not the test contract). */
const OTHER_CONTRACT = StrKey.encodeContract(Buffer.alloc(32, 7));
const DEFAULTS = {
  requestsPerSecond: 50,
  burst: 100,
  maxFee: "10000000",
  allowedOperations: null,
  allowedContractIds: null,
  maxOperations: 100,
  dailySpendLimit: null,
  testnetDailySpendLimit: "1000000000",
  lowBalanceAlert: null,
  feeStrategy: "fast",
  allow: null,
  activeFrom: null,
  activeUntil: null,
  perUser: null,
  approval: null,
};

/** A classic transaction of `ops` payments to the localnet root, signed. */
async function payments(r: TestRelay, from: Keypair, ops: number): Promise<Transaction> {
  const b = new TransactionBuilder(await r.rpc.getAccount(from.publicKey()), {
    fee: "100",
    networkPassphrase: r.passphrase,
  });
  for (let i = 0; i < ops; i++)
    b.addOperation(
      Operation.payment({
        destination: r.networks.get("testnet").localnet!.root.publicKey(),
        asset: Asset.native(),
        amount: "1",
      }),
    );
  const tx = b.setTimeout(60).build();
  tx.sign(from);
  return tx;
}

/** An unprepared call of the test contract's echo (for simulate and estimate). */
async function echoCall(r: TestRelay, from: Keypair): Promise<Transaction> {
  return new TransactionBuilder(await r.rpc.getAccount(from.publicKey()), {
    fee: "100",
    networkPassphrase: r.passphrase,
  })
    .addOperation(new Contract(TEST_CONTRACT_ID).call("echo", nativeToScVal(7, { type: "u32" })))
    .setTimeout(60)
    .build();
}

/** The echo call simulated, assembled (footprint and resource fee) and signed: ready to sponsor. */
async function preparedEcho(r: TestRelay, from: Keypair): Promise<Transaction> {
  const tx = await r.rpc.prepareTransaction(await echoCall(r, from));
  tx.sign(from);
  return tx;
}

// embedded PGlite always; Postgres too when the suite has one (TEST_DATABASE_URL)
describe.each(databaseKinds)("projects over HTTP (%s)", (kind) => {
  let r: TestRelay;
  beforeAll(
    async () => {
      r = await startTestRelay(databaseEnv(kind));
    },
    { timeout: 30_000 },
  );
  afterAll(() => r.stop());

  const sponsor = (tx: Transaction, headers: Record<string, string> = {}, network = "testnet") =>
    r.post("/v1/sponsor", { transaction: xdrOf(tx), network }, headers);
  const patch = (id: string, body: unknown) => r.admin("PATCH", `/projects/${id}`, body);

  describe("API keys", () => {
    test("created keys are shown once; the list has no secrets", async () => {
      const p = await r.project();
      const made: Res[] = [];
      for (const [environment, label] of [
        ["test", "ci"],
        ["live", undefined],
      ] as const) {
        const res = await r.admin("POST", `/projects/${p.id}/keys`, { environment, ...(label ? { label } : {}) });
        expectOk(res, 201);
        expect(Object.keys(res.body).sort()).toEqual(
          expect.arrayContaining(["createdAt", "environment", "id", "key", "label", "prefix"]),
        );
        expect(res.body.environment).toBe(environment);
        expect(res.body.label).toBe(label ?? null);
        expect(res.body.id).toMatch(UUID);
        expect(res.body.key).toMatch(
          environment === "test" ? /^sr_test_[0-9A-Za-z]{32,}$/ : /^sr_live_[0-9A-Za-z]{32,}$/,
        );
        expect(res.body.key.startsWith(res.body.prefix)).toBe(true);
        expect(res.body.prefix.length).toBeLessThan(res.body.key.length - 16);
        expect(Number.isNaN(Date.parse(res.body.createdAt))).toBe(false);
        made.push(res);
      }
      const list = await r.admin("GET", `/projects/${p.id}/keys`);
      expectOk(list);
      // the harness's two keys and these two
      expect(list.body.keys.length).toBe(4);
      const text = JSON.stringify(list.body);
      for (const k of list.body.keys) expect("key" in k).toBe(false);
      for (const m of made) {
        expect(text).not.toContain(m.body.key);
        expect(text).not.toContain(m.body.key.slice(m.body.prefix.length));
        const listed = list.body.keys.find((k: { id: string }) => k.id === m.body.id);
        expect(listed).toEqual({
          id: m.body.id,
          prefix: m.body.prefix,
          environment: m.body.environment,
          label: m.body.label,
          scopes: ["sponsor", "simulate", "estimate", "read"],
          createdAt: m.body.createdAt,
          expiresAt: null,
          lastUsedAt: null,
          revokedAt: null,
        });
      }
      expect(text).not.toContain(p.testKey);
      expect(text).not.toContain(p.liveKey);
      // and the new keys work
      const user = await r.funded();
      expectOk(await sponsor(await r.payment(user), key(made[0]!.body.key)));
    });

    test("a key for another environment, an unknown project or without environment is refused", async () => {
      const p = await r.project();
      expectError(await r.admin("POST", `/projects/${p.id}/keys`, { environment: "prod" }), 400, "VALIDATION_ERROR");
      expectError(await r.admin("POST", `/projects/${p.id}/keys`, {}), 400, "VALIDATION_ERROR");
      expectError(
        await r.admin("POST", `/projects/${crypto.randomUUID()}/keys`, { environment: "test" }),
        404,
        "NOT_FOUND",
      );
      expectError(await r.admin("GET", `/projects/${crypto.randomUUID()}/keys`), 404, "NOT_FOUND");
    });

    test("an sr_test_ key sponsors on testnet", async () => {
      const p = await r.project();
      const user = await r.funded();
      const res = await sponsor(await r.payment(user), key(p.testKey));
      expectOk(res);
      expect(res.body.feePaid).toBe("200");
      rateHeaders(res);
    });

    test("an sr_test_ key on mainnet is FORBIDDEN (sponsor, simulate, estimate), naming testnet", async () => {
      const p = await r.project();
      const user = await r.funded();
      const tx = await r.payment(user);
      const answers = [
        await sponsor(tx, key(p.testKey), "mainnet"),
        await r.post(
          "/v1/simulate",
          { transaction: xdrOf(await echoCall(r, user)), network: "mainnet" },
          key(p.testKey),
        ),
        await r.post("/v1/estimate", { transaction: xdrOf(tx), network: "mainnet" }, key(p.testKey)),
      ];
      for (const res of answers) {
        expectError(res, 403, "FORBIDDEN");
        expect(res.body.error.message).toContain("testnet");
        expect(res.body.error.details).toEqual({ reason: "wrong_network", keyNetwork: "testnet", network: "mainnet" });
      }
      // the same transaction is still sponsorable on testnet (nothing was reserved or submitted)
      expectOk(await sponsor(tx, key(p.testKey)));
    });

    test("an sr_live_ key on testnet is FORBIDDEN (sponsor, simulate, estimate), naming mainnet", async () => {
      const p = await r.project({ credits: 10_000_000n });
      const user = await r.funded();
      const tx = await r.payment(user);
      const answers = [
        await sponsor(tx, key(p.liveKey), "testnet"),
        await r.post(
          "/v1/simulate",
          { transaction: xdrOf(await echoCall(r, user)), network: "testnet" },
          key(p.liveKey),
        ),
        await r.post("/v1/estimate", { transaction: xdrOf(tx), network: "testnet" }, key(p.liveKey)),
      ];
      for (const res of answers) {
        expectError(res, 403, "FORBIDDEN");
        expect(res.body.error.message).toContain("mainnet");
        expect(res.body.error.details).toEqual({ reason: "wrong_network", keyNetwork: "mainnet", network: "testnet" });
      }
    });

    test("without a network, simulate and estimate use the key's network", async () => {
      const p = await r.project();
      const user = await r.funded();
      const tx = await r.payment(user);
      // sr_live_: mainnet
      const live = await r.post("/v1/estimate", { transaction: xdrOf(tx) }, key(p.liveKey));
      expectOk(live);
      expect(live.body).toMatchObject({ estimatedFee: "200", breakdown: { baseFee: "200", resourceFee: "0" } });
      expectOk(await r.post("/v1/estimate", { transaction: xdrOf(tx), network: "mainnet" }, key(p.liveKey)));
      // sr_test_: testnet (the echo contract call simulates against the testnet's state)
      const sim = await r.post("/v1/simulate", { transaction: xdrOf(await echoCall(r, user)) }, key(p.testKey));
      expectOk(sim);
      expect(scValToNative(xdr.ScVal.fromXdr(sim.body.results[0].retval, "base64"))).toBe(7);
      expectOk(await r.post("/v1/estimate", { transaction: xdrOf(tx) }, key(p.testKey)));
    });

    test("malformed and unknown keys are UNAUTHORIZED, on testnet too", async () => {
      const user = await r.funded();
      const tx = await r.payment(user);
      for (const bad of [
        "sr_test_short",
        "abc",
        "sr_prod_0123456789abcdefghijklmnopqrstuvwxyz",
        `sr_test_${"a".repeat(31)}`,
        `sr_test_${"a-".repeat(20)}`,
      ]) {
        const res = await sponsor(tx, key(bad));
        expectError(res, 401, "UNAUTHORIZED");
        expect(res.body.error.message).toMatch(/malformed/);
      }
      for (const unknown of [`sr_test_${"A".repeat(43)}`, `sr_live_${"z".repeat(40)}`]) {
        const res = await sponsor(tx, key(unknown));
        expectError(res, 401, "UNAUTHORIZED");
        expect(res.body.error.message).toMatch(/unknown or revoked/);
        expectError(await r.post("/v1/estimate", { transaction: xdrOf(tx) }, key(unknown)), 401, "UNAUTHORIZED");
      }
      // none of this used the transaction
      expectOk(await sponsor(tx));
    });

    test("a revoked key is refused at once; revoking needs the right project", async () => {
      const p = await r.project();
      const other = await r.project();
      const made = await r.admin("POST", `/projects/${p.id}/keys`, { environment: "test", label: "to revoke" });
      expectOk(made, 201);
      const user = await r.funded();
      expectOk(await sponsor(await r.payment(user), key(made.body.key))); // known and cached
      // another project's id, or an unknown key id: 404, and the key still works
      expectError(await r.admin("DELETE", `/projects/${other.id}/keys/${made.body.id}`), 404, "NOT_FOUND");
      expectError(await r.admin("DELETE", `/projects/${p.id}/keys/${crypto.randomUUID()}`), 404, "NOT_FOUND");
      expectOk(await r.post("/v1/estimate", { transaction: xdrOf(await r.payment(user)) }, key(made.body.key)));

      const del = await r.admin("DELETE", `/projects/${p.id}/keys/${made.body.id}`);
      expectOk(del);
      expect(del.body.id).toBe(made.body.id);
      expect(Number.isNaN(Date.parse(del.body.revokedAt))).toBe(false);
      expect(JSON.stringify(del.body)).not.toContain(made.body.key);
      const res = await sponsor(await r.payment(user), key(made.body.key));
      expectError(res, 401, "UNAUTHORIZED");
      expectError(
        await r.post("/v1/estimate", { transaction: xdrOf(await r.payment(user)) }, key(made.body.key)),
        401,
        "UNAUTHORIZED",
      );
      const listed = (await r.admin("GET", `/projects/${p.id}/keys`)).body.keys.find(
        (k: { id: string }) => k.id === made.body.id,
      );
      expect(listed.revokedAt).toBe(del.body.revokedAt);
      // the project's other keys are unaffected
      expectOk(await sponsor(await r.payment(user), key(p.testKey)));
    });

    test("no key: mainnet is UNAUTHORIZED, testnet is the open relay", async () => {
      const user = await r.funded();
      const tx = await r.payment(user);
      for (const res of [
        await sponsor(tx, {}, "mainnet"),
        await r.post("/v1/estimate", { transaction: xdrOf(tx), network: "mainnet" }),
      ]) {
        expectError(res, 401, "UNAUTHORIZED");
        expect(res.body.error.message).toContain("mainnet");
      }
      const res = await sponsor(tx);
      expectOk(res);
      expect(res.body.feePaid).toBe("200");
    });
  });

  describe("suspension", () => {
    test("a suspended project's keys are FORBIDDEN until it is active again", async () => {
      const p = await r.project({ credits: 10_000_000n });
      const user = await r.funded();
      const tx = await r.payment(user);
      const s = await patch(p.id, { status: "suspended" });
      expectOk(s);
      expect(s.body.status).toBe("suspended");
      expect((await r.admin("GET", `/projects/${p.id}`)).body.status).toBe("suspended");
      const answers = [
        await sponsor(tx, key(p.testKey)),
        await r.post("/v1/estimate", { transaction: xdrOf(tx) }, key(p.testKey)),
        await r.post("/v1/estimate", { transaction: xdrOf(tx) }, key(p.liveKey)),
        await r.post("/v1/sponsor", "{not json", key(p.testKey)),
      ];
      for (const res of answers) {
        expectError(res, 403, "FORBIDDEN");
        expect(res.body.error.details.reason).toBe("project_suspended");
      }
      // a key of a suspended project may not fall back to the open relay either; the open relay still works
      expectOk(await r.post("/v1/estimate", { transaction: xdrOf(tx) }));

      const a = await patch(p.id, { status: "active" });
      expectOk(a);
      expect(a.body.status).toBe("active");
      expectOk(await sponsor(tx, key(p.testKey)));
      expectOk(await r.post("/v1/estimate", { transaction: xdrOf(tx) }, key(p.liveKey)));
    });

    test("suspending keeps the policy; an invalid status is a VALIDATION_ERROR", async () => {
      const p = await r.project({ policy: { maxOperations: 3 } });
      expectOk(await patch(p.id, { status: "suspended" }));
      const got = await r.admin("GET", `/projects/${p.id}`);
      expect(got.body.policy.maxOperations).toBe(3);
      expectError(await patch(p.id, { status: "deleted" }), 400, "VALIDATION_ERROR");
      expect((await r.admin("GET", `/projects/${p.id}`)).body.status).toBe("suspended");
      expectOk(await patch(p.id, { status: "active" }));
    });
  });

  describe("policy rules: POLICY_VIOLATION with details.rule", () => {
    test("maxOperations", async () => {
      const p = await r.project({ policy: { maxOperations: 1 } });
      const user = await r.funded();
      const two = await payments(r, user, 2);
      const res = await sponsor(two, key(p.testKey));
      expectError(res, 403, "POLICY_VIOLATION");
      expect(res.body.error.details).toEqual({ rule: "maxOperations", limit: 1, actual: 2 });
      expectOk(await sponsor(await payments(r, await r.funded(), 1), key(p.testKey)));
      // raised at once by PATCH: the same transaction now passes
      expectOk(await patch(p.id, { policy: { maxOperations: 2 } }));
      const ok = await sponsor(two, key(p.testKey));
      expectOk(ok);
      expect(ok.body.feePaid).toBe("300");
    });

    test("allowedOperations", async () => {
      const p = await r.project({ policy: { allowedOperations: ["createAccount"] } });
      const user = await r.funded();
      const pay = await r.payment(user);
      const res = await sponsor(pay, key(p.testKey));
      expectError(res, 403, "POLICY_VIOLATION");
      expect(res.body.error.details.rule).toBe("allowedOperations");
      expect(res.body.error.details.operation).toBe("payment");
      expect(res.body.error.details.allowed).toEqual(["createAccount"]);
      // an allowed operation passes
      const create = new TransactionBuilder(await r.rpc.getAccount(user.publicKey()), {
        fee: "100",
        networkPassphrase: r.passphrase,
      })
        .addOperation(Operation.createAccount({ destination: Keypair.random().publicKey(), startingBalance: "2" }))
        .setTimeout(60)
        .build();
      create.sign(user);
      expectOk(await sponsor(create, key(p.testKey)));
      // back to any operation
      expectOk(await patch(p.id, { policy: { allowedOperations: null } }));
      expectOk(await sponsor(await r.payment(user), key(p.testKey)));
    });

    test("allowedContractIds (kept as allow.contracts)", async () => {
      const p = await r.project({ policy: { allowedContractIds: [OTHER_CONTRACT] } });
      const user = await r.funded();
      const call = await preparedEcho(r, user);
      const res = await sponsor(call, key(p.testKey));
      expectError(res, 403, "POLICY_VIOLATION");
      expect(res.body.error.details).toEqual({
        rule: "allow.contracts",
        value: TEST_CONTRACT_ID,
        operation: 0,
        allowed: [OTHER_CONTRACT],
        allowedCount: 1,
      });
      expect(res.body.error.message).toContain(TEST_CONTRACT_ID);
      // classic operations call no contract: not affected
      expectOk(await sponsor(await payments(r, await r.funded(), 1), key(p.testKey)));
      // allowing the test contract: the same transaction is sponsored
      const allowed = await patch(p.id, { policy: { allowedContractIds: [OTHER_CONTRACT, TEST_CONTRACT_ID] } });
      expectOk(allowed);
      expect(allowed.body.policy.allowedContractIds).toEqual([OTHER_CONTRACT, TEST_CONTRACT_ID]);
      expectOk(await sponsor(call, key(p.testKey)));
    });

    test("maxFee", async () => {
      const p = await r.project({ policy: { maxFee: "100" } });
      const user = await r.funded();
      const tx = await r.payment(user);
      const res = await sponsor(tx, key(p.testKey));
      expectError(res, 403, "POLICY_VIOLATION");
      expect(res.body.error.details).toEqual({ rule: "maxFee", limit: "100", required: "200" });
      // a fee cap that covers the lowest bid: sponsored at that bid
      expectOk(await patch(p.id, { policy: { maxFee: "200" } }));
      const ok = await sponsor(tx, key(p.testKey));
      expectOk(ok);
      expect(ok.body.feePaid).toBe("200");
    });

    test("dailySpendLimit below one reservation", async () => {
      const p = await r.project({ policy: { dailySpendLimit: "300" } });
      const res = await sponsor(await r.payment(await r.funded()), key(p.testKey));
      expectError(res, 403, "POLICY_VIOLATION");
      expect(res.body.error.details.rule).toBe("dailySpendLimit");
      expect(res.body.error.details.limit).toBe("300");
      expect(BigInt(res.body.error.details.required)).toBeGreaterThan(300n);
    });

    test("dailySpendLimit: what was spent today and the next reservation", async () => {
      const p = await r.project({ policy: { maxFee: "1000", dailySpendLimit: "1000" } });
      const first = await sponsor(await r.payment(await r.funded()), key(p.testKey));
      expectOk(first);
      expect(first.body.feePaid).toBe("200");
      const second = await r.payment(await r.funded());
      const res = await sponsor(second, key(p.testKey));
      expectError(res, 403, "POLICY_VIOLATION");
      expect(res.body.error.details).toEqual({
        rule: "dailySpendLimit",
        limit: "1000",
        spent: "200",
        reserved: "0",
        required: "1000",
      });
      // raising the limit (maxFee is kept): 200 + 1000 <= 1200
      const raised = await patch(p.id, { policy: { dailySpendLimit: "1200" } });
      expectOk(raised);
      expect(raised.body.policy.maxFee).toBe("1000");
      expectOk(await sponsor(second, key(p.testKey)));
    });

    test("PATCH merges policy fields; null returns a field to its default", async () => {
      const created = await r.admin("POST", "/projects", {
        name: "policy merge",
        policy: { maxOperations: 5, maxFee: "5000", allowedOperations: ["payment"] },
      });
      expectOk(created, 201);
      const id = created.body.id;
      expect(created.body.policy).toEqual({
        ...DEFAULTS,
        maxOperations: 5,
        maxFee: "5000",
        allowedOperations: ["payment"],
      });

      let res = await patch(id, { policy: { burst: 7, feeStrategy: "economy" } });
      expectOk(res);
      expect(res.body.policy).toEqual({
        ...DEFAULTS,
        maxOperations: 5,
        maxFee: "5000",
        allowedOperations: ["payment"],
        burst: 7,
        feeStrategy: "economy",
      });
      res = await patch(id, { policy: { maxFee: null, dailySpendLimit: "123456" } });
      expectOk(res);
      expect(res.body.policy).toEqual({
        ...DEFAULTS,
        maxOperations: 5,
        allowedOperations: ["payment"],
        burst: 7,
        dailySpendLimit: "123456",
        feeStrategy: "economy",
      });
      res = await patch(id, { name: "renamed" });
      expectOk(res);
      expect(res.body.name).toBe("renamed");
      expect(res.body.policy).toEqual({
        ...DEFAULTS,
        maxOperations: 5,
        allowedOperations: ["payment"],
        burst: 7,
        dailySpendLimit: "123456",
        feeStrategy: "economy",
      });
      res = await patch(id, {
        policy: { maxOperations: null, allowedOperations: null, burst: null, dailySpendLimit: null, feeStrategy: null },
      });
      expectOk(res);
      expect(res.body.policy).toEqual(DEFAULTS);
      const got = await r.admin("GET", `/projects/${id}`);
      expectOk(got);
      expect(got.body.policy).toEqual(DEFAULTS);
      expect(got.body.name).toBe("renamed");
      const listed = (await r.admin("GET", "/projects")).body.projects.find((p: { id: string }) => p.id === id);
      expect(listed.policy).toEqual(DEFAULTS);
    });

    test("invalid policy values are VALIDATION_ERROR and change nothing", async () => {
      const p = await r.project({ policy: { maxOperations: 4 } });
      const before = (await r.admin("GET", `/projects/${p.id}`)).body;
      const invalid: Record<string, unknown>[] = [
        { burst: 0 },
        { burst: 1.5 },
        { requestsPerSecond: 0 },
        { requestsPerSecond: -1 },
        { requestsPerSecond: "5" },
        { maxFee: "abc" },
        { maxFee: "-1" },
        { maxFee: 100 },
        { maxOperations: 0 },
        { maxOperations: 101 },
        { allowedOperations: ["teleport"] },
        { allowedOperations: "payment" },
        { allowedOperations: ["payment", "payment"] },
        { allowedContractIds: ["CABC"] },
        { allowedContractIds: [OTHER_CONTRACT.toLowerCase()] },
        { allowedContractIds: [Keypair.random().publicKey()] },
        { dailySpendLimit: "-5" },
        { dailySpendLimit: "1.5" },
        { lowBalanceAlert: "-1" },
        { lowBalanceAlert: 1000 },
        { lowBalanceAlert: "1e6" },
        { feeStrategy: "turbo" },
        { feeStrategy: 1 },
      ];
      for (const policy of invalid) {
        const res = await patch(p.id, { policy });
        expectError(res, 400, "VALIDATION_ERROR");
        expect(res.body.error.details.field).toStartWith("policy");
        expectError(await r.admin("POST", "/projects", { name: "invalid policy", policy }), 400, "VALIDATION_ERROR");
      }
      const after = (await r.admin("GET", `/projects/${p.id}`)).body;
      expect(after.policy).toEqual(before.policy);
      expect(after.policy.burst).toBe(100);
    });

    // PolicyPatch and the admin bodies are declared additionalProperties: false; a typo must not be a silent no-op
    test("an unknown policy field (a typo) is VALIDATION_ERROR, not silently ignored", async () => {
      const p = await r.project({ policy: { maxOperations: 4 } });
      const before = (await r.admin("GET", `/projects/${p.id}`)).body;
      const typo = await patch(p.id, { policy: { maxfee: "100" } });
      const extra = await patch(p.id, { policy: { burst: 3 }, extra: true });
      const created = await r.admin("POST", "/projects", { name: "typo", policy: { dailySpendlimit: "5" } });
      expectError(typo, 400, "VALIDATION_ERROR");
      expect(typo.body.error.details.field).toStartWith("policy");
      expectError(extra, 400, "VALIDATION_ERROR");
      expectError(created, 400, "VALIDATION_ERROR");
      expect((await r.admin("GET", `/projects/${p.id}`)).body.policy).toEqual(before.policy);
    });
  });

  describe("rate limits", () => {
    test("RateLimit headers on every /v1 response; an empty bucket is 429 with Retry-After, for invalid requests too", async () => {
      const p = await r.project({ policy: { requestsPerSecond: 1, burst: 3 } });
      const user = await r.funded();
      const valid = { transaction: xdrOf(await r.payment(user)) };
      const k = key(p.testKey);

      const first = await r.post("/v1/estimate", valid, k);
      expectOk(first);
      const h1 = rateHeaders(first);
      expect(h1.limit).toBe(3);
      expect(h1.remaining).toBe(2);
      expect(h1.reset).toBeGreaterThanOrEqual(1);

      const second = await r.post("/v1/sponsor", "{not json", k); // counts although its body is not JSON
      expectError(second, 400, "VALIDATION_ERROR");
      const h2 = rateHeaders(second);
      expect(h2.limit).toBe(3);
      expect(h2.remaining).toBe(1);

      const third = await r.post("/v1/sponsor", { network: "testnet" }, k); // counts although a field is missing
      expectError(third, 400, "VALIDATION_ERROR");
      expect(third.body.error.details.field).toBe("transaction");
      expect(rateHeaders(third).remaining).toBe(0);

      // the bucket is empty: 429 before the body is looked at
      for (const res of [await r.post("/v1/sponsor", "{not json", k), await r.post("/v1/estimate", valid, k)]) {
        expectError(res, 429, "RATE_LIMIT_EXCEEDED");
        const retryAfter = res.headers.get("retry-after");
        expect(retryAfter).toMatch(/^[1-9][0-9]*$/);
        expect(res.body.error.details.retryAfter).toBe(Number(retryAfter));
        const h = rateHeaders(res);
        expect(h.limit).toBe(3);
        expect(h.remaining).toBe(0);
      }
      const last = await r.post("/v1/estimate", valid, k);
      expectError(last, 429, "RATE_LIMIT_EXCEEDED");
      const wait = Number(last.headers.get("retry-after"));
      expect(wait).toBeGreaterThanOrEqual(1);

      await Bun.sleep(wait * 1000);
      const again = await r.post("/v1/estimate", valid, k);
      expectOk(again);
      expect(rateHeaders(again).remaining).toBe(0);
    });

    test("projects have their own buckets; keys of one project share one", async () => {
      const p = await r.project({ policy: { requestsPerSecond: 0.5, burst: 2 } });
      const other = await r.project({ policy: { requestsPerSecond: 0.5, burst: 2 } });
      const body = { transaction: xdrOf(await r.payment(await r.funded())) };
      expectOk(await r.post("/v1/estimate", body, key(p.testKey)));
      expectOk(await r.post("/v1/estimate", body, key(p.liveKey)));
      expectError(await r.post("/v1/estimate", body, key(p.testKey)), 429, "RATE_LIMIT_EXCEEDED");
      expectError(await r.post("/v1/estimate", body, key(p.liveKey)), 429, "RATE_LIMIT_EXCEEDED");
      const fresh = await r.post("/v1/estimate", body, key(other.testKey));
      expectOk(fresh);
      expect(rateHeaders(fresh).remaining).toBe(1);
      // a new policy takes effect at once: the bucket refills at the new rate up to the new burst
      expectOk(await patch(p.id, { policy: { requestsPerSecond: 1000, burst: 1000 } }));
      await Bun.sleep(20);
      const raised = await r.post("/v1/estimate", body, key(p.testKey));
      expectOk(raised);
      expect(rateHeaders(raised).limit).toBe(1000);
    });

    test("admin requests are not rate limited and carry no RateLimit headers", async () => {
      const p = await r.project({ policy: { requestsPerSecond: 0.1, burst: 1 } });
      for (let i = 0; i < 20; i++) {
        const res = await r.admin("GET", `/projects/${p.id}`);
        expectOk(res);
        expect(res.headers.get("ratelimit-limit")).toBeNull();
        expect(res.headers.get("x-ratelimit-limit")).toBeNull();
      }
      // the project's own bucket is untouched by them
      const res = await r.post(
        "/v1/estimate",
        { transaction: xdrOf(await r.payment(await r.funded())) },
        key(p.testKey),
      );
      expectOk(res);
      expect(rateHeaders(res)).toMatchObject({ limit: 1, remaining: 0 });
    });
  });

  describe("admin API", () => {
    test("no or a wrong bearer token is UNAUTHORIZED", async () => {
      const attempts: RequestInit[] = [
        {},
        { headers: { authorization: "Bearer wrong-token-0123456789" } },
        { headers: { authorization: TEST_ADMIN_TOKEN } },
        { headers: { authorization: `Basic ${TEST_ADMIN_TOKEN}` } },
        { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}x` } },
        { headers: { authorization: "Bearer " } },
        { headers: { "x-api-key": TEST_ADMIN_TOKEN } },
      ];
      for (const init of attempts) {
        for (const [method, path, body] of [
          ["GET", "", undefined],
          ["POST", "", { name: "x" }],
          ["GET", "/anything", undefined],
        ] as const) {
          const res = await r.http.request(
            method,
            `/v1/admin/projects${path}`,
            body,
            (init.headers ?? {}) as Record<string, string>,
          );
          // wrong tokens are counted per client IP: past 5 a minute they are 429 (the right one still passes)
          if (res.status === 429) {
            expectError(res, 429, "RATE_LIMIT_EXCEEDED");
            continue;
          }
          expectError(res, 401, "UNAUTHORIZED");
          expect(res.headers.get("www-authenticate")).toBe("Bearer");
        }
      }
      expectOk(await r.admin("GET", "/projects"));
    });

    test("an unknown project is NOT_FOUND; a project needs a name", async () => {
      const unknown = crypto.randomUUID();
      expectError(await r.admin("GET", `/projects/${unknown}`), 404, "NOT_FOUND");
      expectError(await r.admin("GET", "/projects/not-a-uuid"), 404, "NOT_FOUND");
      expectError(await patch(unknown, { status: "suspended" }), 404, "NOT_FOUND");
      expectError(await r.admin("GET", `/projects/${unknown}/credits`), 404, "NOT_FOUND");
      expectError(await r.admin("POST", `/projects/${unknown}/credits`, { amount: "100" }), 404, "NOT_FOUND");
      for (const body of [{}, { name: "" }, { policy: { burst: 3 } }, { name: 5 }]) {
        const res = await r.admin("POST", "/projects", body);
        expectError(res, 400, "VALIDATION_ERROR");
        expect(res.body.error.details.field).toBe("name");
      }
      expectError(await r.admin("POST", "/projects", "{not json"), 400, "VALIDATION_ERROR");
      const ok = await r.admin("POST", "/projects", { name: "named" });
      expectOk(ok, 201);
      expect(ok.body).toMatchObject({
        name: "named",
        status: "active",
        creditBalance: "0",
        creditReserved: "0",
        policy: DEFAULTS,
      });
      expect(ok.body.id).toMatch(UUID);
    });
  });
});

describe("the anonymous relay: one bucket per client IP (X-Forwarded-For with TRUST_PROXY)", () => {
  let r: TestRelay;
  beforeAll(
    async () => {
      r = await startTestRelay({
        ANONYMOUS_POLICY: JSON.stringify({ requestsPerSecond: 1, burst: 2 }),
        TRUST_PROXY: "true",
      });
    },
    { timeout: 30_000 },
  );
  afterAll(() => r.stop());

  test("the 3rd quick request from one IP is 429 while another IP still passes", async () => {
    const body = { transaction: xdrOf(await r.payment(await r.funded())) };
    const a = { "x-forwarded-for": "203.0.113.7" };
    const b = { "x-forwarded-for": "198.51.100.9, 10.0.0.1" };
    const a1 = await r.post("/v1/estimate", body, a);
    expectOk(a1);
    expect(rateHeaders(a1)).toMatchObject({ limit: 2, remaining: 1 });
    const a2 = await r.post("/v1/estimate", "{not json", a);
    expectError(a2, 400, "VALIDATION_ERROR");
    expect(rateHeaders(a2)).toMatchObject({ limit: 2, remaining: 0 });
    const a3 = await r.post("/v1/estimate", body, a);
    expectError(a3, 429, "RATE_LIMIT_EXCEEDED");
    expect(Number(a3.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);

    const b1 = await r.post("/v1/estimate", body, b);
    expectOk(b1);
    expect(rateHeaders(b1)).toMatchObject({ limit: 2, remaining: 1 });
    // IP A stays limited; B's bucket is its own
    expectError(await r.post("/v1/estimate", body, a), 429, "RATE_LIMIT_EXCEEDED");
    expectOk(await r.post("/v1/estimate", body, b));
  });

  test("a project key is not limited by the anonymous bucket of its IP; admin requests are not limited", async () => {
    const ip = { "x-forwarded-for": "192.0.2.55" };
    const body = { transaction: xdrOf(await r.payment(await r.funded())) };
    expectOk(await r.post("/v1/estimate", body, ip));
    expectOk(await r.post("/v1/estimate", body, ip));
    expectError(await r.post("/v1/estimate", body, ip), 429, "RATE_LIMIT_EXCEEDED");
    const p = await r.project();
    const res = await r.post("/v1/estimate", body, { ...ip, ...key(p.testKey) });
    expectOk(res);
    expect(rateHeaders(res).limit).toBe(100);
    for (let i = 0; i < 10; i++) expectOk(await r.admin("GET", "/projects"));
  });
});

// over a socket: the anonymous bucket is the connection's address
describe("without ADMIN_TOKEN, and without TRUST_PROXY", () => {
  let r: TestRelay;
  beforeAll(
    async () => {
      r = await startTestRelay({
        ADMIN_TOKEN: "",
        ANONYMOUS_POLICY: JSON.stringify({ requestsPerSecond: 0.5, burst: 3 }),
      });
    },
    { timeout: 30_000 },
  );
  afterAll(() => r.stop());

  test("the admin API does not exist: NOT_FOUND", async () => {
    for (const headers of [{}, { authorization: `Bearer ${TEST_ADMIN_TOKEN}` }, { authorization: "Bearer " }] as Record<
      string,
      string
    >[]) {
      expectError(await r.tcp.get("/v1/admin/projects", headers), 404, "NOT_FOUND");
    }
    const post = await r.tcp.post("/v1/admin/projects", { name: "x" }, { authorization: `Bearer ${TEST_ADMIN_TOKEN}` });
    expectError(post, 404, "NOT_FOUND");
    // the relay itself works (the admin paths took no token of the anonymous bucket)
    const res = await r.tcp.post("/v1/sponsor", {
      transaction: xdrOf(await r.payment(await r.funded())),
      network: "testnet",
    });
    expectOk(res);
    expect(rateHeaders(res)).toMatchObject({ limit: 3, remaining: 2 });
  });

  test("X-Forwarded-For is ignored: one bucket for the connection's address", async () => {
    const body = { transaction: xdrOf(await r.payment(await r.funded())) };
    const a = await r.tcp.post("/v1/estimate", body, { "x-forwarded-for": "203.0.113.1" });
    expectOk(a);
    expect(rateHeaders(a).remaining).toBe(1);
    expectOk(await r.tcp.post("/v1/estimate", body, { "x-forwarded-for": "203.0.113.2" }));
    expectError(
      await r.tcp.post("/v1/estimate", body, { "x-forwarded-for": "203.0.113.3" }),
      429,
      "RATE_LIMIT_EXCEEDED",
    );
  });
});
