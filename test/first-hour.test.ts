/**
 * What a newcomer meets in the first hour: the SDK's friendbot helpers through the relay's embedded
 * network, a misspelled field, a value outside a list, and the API key sent as a bearer token.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Keypair, rpc } from "@stellar/stellar-sdk";
import { expectError, xdrOf } from "./support/harness.ts";
import { startTestRelay, type TestRelay } from "./support/relay.ts";

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
  expect(res.body.error.message).toBe("network must be one of: testnet, mainnet");
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
