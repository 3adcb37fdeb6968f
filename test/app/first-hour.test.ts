/**
 * What a newcomer meets in the first hour: the SDK's friendbot helpers through the relay's embedded
 * network, a misspelled field, a value outside a list, and the API key sent as a bearer token.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Keypair, rpc } from "@stellar/stellar-sdk";
import { expectError, xdrOf } from "../support/harness.ts";
import { startTestRelay, type TestRelay } from "../support/relay.ts";
import { spawnRelay, tempDir } from "../support/processes.ts";
import { seedPglite } from "../support/pglite.ts";

let r: TestRelay;
beforeAll(async () => {
  r = await startTestRelay();
});
afterAll(() => r.stop());

test("the SDK's requestAirdrop and fundAddress work through the relay's embedded testnet", async () => {
  const server = new rpc.Server(`${r.url}/localnet/testnet/rpc`, { allowHttp: true });
  const network = await server.getNetwork();
  expect(network.friendbotUrl).toBe(`http://localhost:${new URL(r.url).port}/localnet/testnet/friendbot`);
  const user = Keypair.random();
  const account = await server.requestAirdrop(user.publicKey());
  expect(account.accountId()).toBe(user.publicKey());
  const funded = await server.fundAddress(Keypair.random().publicKey());
  expect(funded.status).toBe("SUCCESS" as never);
});

test("a misspelled field is refused naming it; a value outside a list lists the allowed ones", async () => {
  const user = await r.funded();
  const transaction = xdrOf(await r.payment(user));
  for (const path of ["/v1/sponsor", "/v1/estimate", "/v1/simulate"]) {
    const res = await r.post(path, {
      transaction,
      netwrk: "mainnet",
      ...(path === "/v1/sponsor" ? { network: "testnet" } : {}),
    });
    expectError(res, 400, "VALIDATION_ERROR");
    expect(res.body.error.details).toMatchObject({ field: "netwrk", reason: "unknown_field" });
    expect(res.body.error.message).toContain("netwrk");
  }
  const res = await r.post("/v1/sponsor", { transaction, network: "futurenet" });
  expectError(res, 400, "VALIDATION_ERROR");
  expect(res.body.error.message).toBe('network must be one of: testnet, mainnet (got "futurenet")');
  expect(res.body.error.details.allowed).toEqual(["testnet", "mainnet"]);
});

test("Authorization: Bearer <key> is the API key; a bearer that is no key is 401, never anonymous", async () => {
  const project = await r.project({ credits: 10_000_000n });
  const user = Keypair.random();
  const mainnet = new rpc.Server(`${r.url}/localnet/mainnet/rpc`, { allowHttp: true });
  await mainnet.requestAirdrop(user.publicKey());
  const { TransactionBuilder, Operation, Asset } = await import("@stellar/stellar-sdk");
  const tx = new TransactionBuilder(await mainnet.getAccount(user.publicKey()), {
    fee: "100",
    networkPassphrase: (await mainnet.getNetwork()).passphrase,
  })
    .addOperation(Operation.payment({ destination: user.publicKey(), asset: Asset.native(), amount: "1" }))
    .setTimeout(60)
    .build();
  tx.sign(user);
  // mainnet needs a key: served only because the bearer token is taken as one
  const res = await r.post(
    "/v1/sponsor",
    { transaction: xdrOf(tx), network: "mainnet" },
    { authorization: `Bearer ${project.liveKey}` },
  );
  if (res.status !== 200) throw new Error(JSON.stringify(res.body));
  const seen = await r.http.get(`/v1/transactions/${res.body.innerHash}`, {
    authorization: `Bearer ${project.liveKey}`,
  });
  expect(seen.status).toBe(200);
  const wrong = await r.post(
    "/v1/estimate",
    { transaction: xdrOf(tx), network: "testnet" },
    { authorization: "Bearer not-a-key" },
  );
  expectError(wrong, 401, "UNAUTHORIZED");
  for (const authorization of [
    "Basic dXNlcjpwYXNz",
    `Token ${project.liveKey}`,
    "Bearer",
    `Bearer ${project.liveKey} x`,
  ]) {
    const res = await r.post("/v1/estimate", { transaction: xdrOf(tx), network: "testnet" }, { authorization });
    expectError(res, 401, "UNAUTHORIZED");
  }
});

test("a failure says what happened in plain words: included and failed, or a bad signature with the passphrase", async () => {
  const { Asset, Operation, TransactionBuilder } = await import("@stellar/stellar-sdk");
  const user = await r.funded();
  const build = async (signer: Keypair) => {
    const tx = new TransactionBuilder(await r.rpc.getAccount(user.publicKey()), {
      fee: "100",
      networkPassphrase: r.passphrase,
    })
      .addOperation(
        Operation.payment({ destination: Keypair.random().publicKey(), asset: Asset.native(), amount: "1" }),
      )
      .setTimeout(60)
      .build();
    tx.sign(signer);
    return xdrOf(tx);
  };
  const failed = await r.post("/v1/sponsor", { transaction: await build(user), network: "testnet" });
  expectError(failed, 422, "SUBMISSION_FAILED");
  expect(failed.body.error.message).toStartWith(
    `included in ledger ${failed.body.error.details.ledger} and failed: op_no_destination on operation 0;`,
  );
  const badAuth = await r.post("/v1/sponsor", { transaction: await build(Keypair.random()), network: "testnet" });
  expectError(badAuth, 422, "SUBMISSION_FAILED");
  expect(badAuth.body.error.message).toContain("tx_bad_auth");
  expect(badAuth.body.error.message).toContain(`"${r.passphrase}"`);
});

test("at start: what it is doing, then one line to act on (URL, networks, store without password, Redis, pools, docs)", async () => {
  const db = process.env.TEST_DATABASE_URL;
  const dir = tempDir("relay-summary-");
  const schema = `t_${crypto.randomUUID().replace(/-/g, "").slice(0, 16)}`;
  // a password in the URL (trust auth ignores it) must not be shown
  const withPassword = db?.replace("://postgres@", "://postgres:hunter2-secret@");
  if (!db) await seedPglite(dir.path);
  const relay = await spawnRelay({
    DATA_DIR: dir.path,
    LEDGER_CLOSE_MS: "200",
    ...(withPassword ? { DATABASE_URL: withPassword, DATABASE_SCHEMA: schema } : {}),
  });
  try {
    for (let i = 0; i < 50 && !relay.lines.some((l) => l.includes("relay ready on")); i++) await Bun.sleep(20);
    const ready = relay.lines.map((l) => JSON.parse(l).msg as string).find((m) => m.startsWith("relay ready on"))!;
    expect(ready).toContain(`relay ready on ${relay.url}`);
    expect(ready).toContain(`testnet: embedded localnet (${relay.url}/localnet/testnet/rpc)`);
    expect(ready).toContain(
      withPassword ? `store: Postgres 127.0.0.1:5432/test (schema ${schema})` : "store: PGlite in",
    );
    expect(ready).toContain("in-memory limits (no Redis)");
    expect(ready).toContain("channel pools: testnet 4, mainnet 4");
    expect(ready).toContain(`docs: ${relay.url}/openapi`);
    expect(relay.lines.join("\n")).not.toContain("hunter2");
  } finally {
    await relay.kill("SIGTERM");
    if (db) {
      const sql = (await import("postgres")).default(db, { max: 1, onnotice: () => {} });
      await sql.unsafe(`drop schema if exists "${schema}" cascade`);
      await sql.end();
    }
    dir.done();
  }
}, 60_000);
