/** POST /v1/simulate, POST /v1/estimate, GET /health and the OpenAPI document, against the embedded localnets. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  Asset,
  Contract,
  Operation,
  TransactionBuilder,
  nativeToScVal,
  rpc,
  xdr,
  type Keypair,
} from "@stellar/stellar-sdk";
import { databaseKind, startTestRelay, type TestRelay } from "../support/relay.ts";
import { TEST_CONTRACT_ID } from "../../src/localnet/soroban/contracts.ts";

let r: TestRelay;
let user: Keypair;
beforeAll(async () => {
  r = await startTestRelay();
  user = await r.funded();
});
afterAll(() => r.stop());

async function call(contract: string, fn: string, ...args: xdr.ScVal[]): Promise<string> {
  const tx = new TransactionBuilder(await r.rpc.getAccount(user.publicKey()), {
    fee: "100",
    networkPassphrase: r.passphrase,
  })
    .addOperation(new Contract(contract).call(fn, ...args))
    .setTimeout(60)
    .build();
  return tx.toEnvelope().toXdr("base64");
}
const sac = () => Asset.native().contractId(r.passphrase);

describe("POST /v1/simulate", () => {
  test("a contract call returns resource fee, transaction data, events and results", async () => {
    const res = await r.post("/v1/simulate", { transaction: await call(sac(), "decimals") });
    expect(res.status).toBe(200);
    expect(BigInt(res.body.resourceFee)).toBeGreaterThan(0n);
    const data = xdr.SorobanTransactionData.fromXdr(res.body.transactionData, "base64");
    expect(data.resourceFee.toString()).toBe(res.body.resourceFee);
    expect(res.body.latestLedger).toBeGreaterThan(0);
    expect(xdr.ScVal.fromXdr(res.body.results[0].retval, "base64").value).toBe(7);
    expect(res.body.minResourceFee).toBe(res.body.resourceFee);
    expect(res.body.results[0].xdr).toBe(res.body.results[0].retval);
    expect(res.body.events).toEqual(res.body.diagnosticEvents.map((e: { xdr: string }) => e.xdr));
    const fnCall = res.body.diagnosticEvents.find(
      (e: { topics: string[] }) => xdr.ScVal.fromXdr(e.topics[0], "base64").value?.toString() === "fn_call",
    );
    expect(fnCall.type).toBe("diagnostic");
    expect(fnCall.inSuccessfulContractCall).toBe(true);
    expect(typeof fnCall.xdr).toBe("string");
  });

  test("a transfer returns the authorization entries to sign", async () => {
    const other = await r.funded();
    const res = await r.post("/v1/simulate", {
      network: "testnet",
      transaction: await call(
        sac(),
        "transfer",
        nativeToScVal(other.publicKey(), { type: "address" }),
        nativeToScVal(user.publicKey(), { type: "address" }),
        nativeToScVal(5n, { type: "i128" }),
      ),
    });
    expect(res.status).toBe(200);
    expect(res.body.results[0].auth.length).toBe(1);
    const transfer = res.body.diagnosticEvents.find((e: { type: string }) => e.type === "contract");
    expect(transfer.contractId).toBe(sac());
  });

  test("spec: a panicking contract is SIMULATION_FAILED with the network's message and events", async () => {
    const res = await r.post("/v1/simulate", { transaction: await call(TEST_CONTRACT_ID, "panic") });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe("SIMULATION_FAILED");
    expect(res.body.error.message).toContain("Error(Contract, #1)");
    expect(res.body.error.details.events.length).toBeGreaterThan(0);
  });

  test("spec: a transaction that is not a single Soroban operation is VALIDATION_ERROR", async () => {
    const classic = new TransactionBuilder(await r.rpc.getAccount(user.publicKey()), {
      fee: "100",
      networkPassphrase: r.passphrase,
    })
      .addOperation(Operation.bumpSequence({ bumpTo: "1" }))
      .setTimeout(60)
      .build();
    const res = await r.post("/v1/simulate", { transaction: classic.toEnvelope().toXdr("base64") });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("VALIDATION_ERROR");
    expect((await r.post("/v1/simulate", { transaction: "AAAA" })).body.error.code).toBe("VALIDATION_ERROR");
  });
});

describe("POST /v1/estimate", () => {
  test("classic: the fee-bump's inclusion fee for ops + 1, no signatures needed", async () => {
    const tx = new TransactionBuilder(await r.rpc.getAccount(user.publicKey()), {
      fee: "100",
      networkPassphrase: r.passphrase,
    })
      .addOperation(Operation.bumpSequence({ bumpTo: "1" }))
      .addOperation(Operation.bumpSequence({ bumpTo: "2" }))
      .setTimeout(60)
      .build();
    const res = await r.post("/v1/estimate", { transaction: tx.toEnvelope().toXdr("base64") });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      estimatedFee: "300",
      maxFee: String(3 * 100_000), // the relay's default MAX_FEE_RATE (100,000) for 2 operations + 1
      breakdown: { baseFee: "300", resourceFee: "0" },
      rates: { likely: "100", max: "100000" },
    });
    // the default strategy, fast, bids 10x what recent ledgers cleared at (at least 10x the base fee)
    const bid = BigInt(res.body.rates.bid);
    expect(bid).toBeGreaterThanOrEqual(1_000n);
    expect(res.body.bidFee).toBe(String(bid * 3n));
    expect(res.body.explanation).toContain("the network charges the market rate, not the bid");
    expect(res.body.explanation).toContain("fast strategy");
  });

  test("Soroban: the simulated resource fee is added", async () => {
    const res = await r.post("/v1/estimate", { transaction: await call(sac(), "decimals") });
    const sim = await r.post("/v1/simulate", { transaction: await call(sac(), "decimals") });
    expect(res.body.breakdown.resourceFee).toBe(sim.body.resourceFee);
    expect(res.body.breakdown.baseFee).toBe("200");
    expect(BigInt(res.body.estimatedFee)).toBe(200n + BigInt(sim.body.resourceFee));
  });
});

// after the estimates: a sponsored Soroban transaction moves the fee statistics they read
describe("POST /v1/simulate with the SDK", () => {
  test("the answer is what rpc.assembleTransaction takes: assembled, signed and sponsored as it is", async () => {
    const other = await r.funded();
    const tx = new TransactionBuilder(await r.rpc.getAccount(user.publicKey()), {
      fee: "100",
      networkPassphrase: r.passphrase,
    })
      .addOperation(
        new Contract(sac()).call(
          "transfer",
          nativeToScVal(user.publicKey(), { type: "address" }),
          nativeToScVal(other.publicKey(), { type: "address" }),
          nativeToScVal(10_000_000n, { type: "i128" }),
        ),
      )
      .setTimeout(60)
      .build();
    const sim = await r.post("/v1/simulate", { transaction: tx.toEnvelope().toXdr("base64") });
    expect(sim.status).toBe(200);
    const assembled = rpc.assembleTransaction(tx, sim.body).build();
    // its fee is the inclusion fee plus the simulated resource fee, its footprint the simulation's
    expect(BigInt(assembled.fee)).toBe(100n + BigInt(sim.body.resourceFee));
    assembled.sign(user);
    const res = await r.post("/v1/sponsor", {
      transaction: assembled.toEnvelope().toXdr("base64"),
      network: "testnet",
    });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("success");
  });
});

describe("GET /health and OpenAPI", () => {
  test("health reports both embedded networks, the database and the checkpoint store", async () => {
    const { status, body } = await r.http.get("/health");
    expect(status).toBe(200);
    expect(body.status).toBe("ok");
    expect(body.networks.testnet.upstream).toBe("localnet");
    expect(body.networks.mainnet.latestLedger).toBeGreaterThan(0);
    expect(body.networks.testnet.lastLedgerAgeMs).toBeLessThan(5000);
    expect(body.storage).toEqual({ database: databaseKind, status: "ok", checkpoints: "memory" });
    expect(JSON.stringify(body)).not.toMatch(/S[A-Z2-7]{55}/); // no secret keys
  });

  test("the OpenAPI document lists the routes", async () => {
    const doc = (await r.http.get("/openapi/json")).body as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(["/v1/sponsor", "/v1/simulate", "/v1/estimate", "/health"]),
    );
    expect((await r.http.get("/openapi")).status).toBe(200);
  });
});

test("under surge, estimate bids what sponsor would: the network's rate capped at MAX_FEE_RATE", async () => {
  const relay = await startTestRelay({ MAX_FEE_RATE: "150" });
  try {
    // the fee statistics say 1,000 per operation; the relay never bids over its cap of 150
    const gw = relay.networks.get("testnet").gateway!;
    gw.feeRate = async () => 1_000n;
    const user = await relay.funded();
    const tx = await relay.payment(user);
    const res = await relay.post("/v1/estimate", { transaction: tx.toEnvelope().toXDR("base64"), network: "testnet" });
    expect(res.status).toBe(200);
    expect(res.body.rates.bid).toBe("150"); // fast would bid 10,000: the cap wins
    expect(res.body.bidFee).toBe(String(150 * 2)); // 150 x (1 operation + 1)
    // the likely charge: what the last ledgers cleared at (the estimate's breakdown adds up to it)
    expect(res.body.breakdown.baseFee).toBe(String(BigInt(res.body.rates.likely) * 2n));
  } finally {
    await relay.stop();
  }
});
