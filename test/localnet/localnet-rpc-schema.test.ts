/**
 * Every Stellar RPC method localnet serves, called with raw JSON-RPC POSTs and checked against the
 * official OpenRPC result schemas (stellar-protocol.md section 3), plus the JSON-RPC error paths and
 * the SDK's own parsing of the same responses.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  Asset,
  Contract,
  Keypair,
  Operation,
  TransactionBuilder,
  rpc,
  xdr,
  type Transaction,
} from "@stellar/stellar-sdk";
import { startLocalnet, builder, type TestNet } from "../support/localnet.ts";
import { validateRpcResult } from "../support/openrpc.ts";
import { TEST_CONTRACT_ID } from "../../src/localnet/soroban/contracts.ts";

interface RpcResponse {
  jsonrpc: string;
  id: unknown;
  result?: Record<string, any>;
  error?: { code: number; message: string };
}

const S = rpc.Api.GetTransactionStatus;

let t: TestNet;
let a: Keypair;
let b: Keypair;
/** Hashes of applied transactions, by what they did. */
const hashes = { success: "", failed: "", feeBumpOuter: "", feeBumpInner: "" };

async function post(body: unknown): Promise<RpcResponse> {
  const res = await fetch(`${t.url}/rpc`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as RpcResponse;
}

let nextId = 1;
async function call(method: string, params?: unknown): Promise<RpcResponse> {
  const id = nextId++;
  const r = await post({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) });
  expect(r.jsonrpc).toBe("2.0");
  expect(r.id).toBe(id);
  return r;
}

/** Calls `method` and returns its result after asserting it is schema-valid. */
async function valid(method: string, params?: unknown): Promise<Record<string, any>> {
  const r = await call(method, params);
  expect(r.error).toBeUndefined();
  expect(r.result).toBeDefined();
  expect(validateRpcResult(method, r.result)).toEqual([]);
  return r.result!;
}

async function rpcError(method: string, params?: unknown): Promise<{ code: number; message: string }> {
  const r = await call(method, params);
  expect(r.result).toBeUndefined();
  expect(r.error).toBeDefined();
  return r.error!;
}

const b64 = (tx: { toEnvelope(): xdr.TransactionEnvelope }) => tx.toEnvelope().toXdr("base64");

async function payment(from: Keypair, to: string, amount: string): Promise<Transaction> {
  const tx = (await builder(t, from))
    .addOperation(Operation.payment({ destination: to, asset: Asset.native(), amount }))
    .build();
  tx.sign(from);
  return tx;
}

beforeAll(async () => {
  t = await startLocalnet({ ledgerCloseMs: 0 });
  a = await t.funded();
  b = await t.funded();

  const ok = await t.submit(await payment(a, b.publicKey(), "5"));
  expect(ok.status).toBe(S.SUCCESS);
  hashes.success = ok.send.hash;

  // valid at submission, fails at apply: op_underfunded
  const bad = await t.submit(await payment(b, a.publicKey(), "50000"));
  expect(bad.status).toBe(S.FAILED);
  hashes.failed = bad.send.hash;

  const inner = await payment(a, b.publicKey(), "1");
  const fb = TransactionBuilder.buildFeeBumpTransaction(b, "200", inner, t.passphrase);
  fb.sign(b);
  const bumped = await t.submit(fb);
  expect(bumped.status).toBe(S.SUCCESS);
  hashes.feeBumpOuter = bumped.send.hash;
  hashes.feeBumpInner = Buffer.from(inner.hash()).toString("hex");
  expect(hashes.feeBumpInner).not.toBe(hashes.feeBumpOuter);
});

afterAll(async () => {
  await t?.stop();
});

describe("schema-valid results", () => {
  test("getHealth", async () => {
    const r = await valid("getHealth");
    expect(r.status).toBe("healthy");
    expect(r.latestLedger).toBe(t.net.latestLedger.sequence);
    expect(r.oldestLedger).toBeLessThanOrEqual(r.latestLedger);
    expect(r.ledgerRetentionWindow).toBeGreaterThan(0);
  });

  test("getHealth with params: null, as the SDK sends it", async () => {
    const r = await post({ jsonrpc: "2.0", id: 7, method: "getHealth", params: null });
    expect(validateRpcResult("getHealth", r.result)).toEqual([]);
  });

  test("getNetwork", async () => {
    const r = await valid("getNetwork");
    expect(r.passphrase).toBe(t.passphrase);
    expect(r.protocolVersion).toBe(27);
  });

  test("getVersionInfo", async () => {
    const r = await valid("getVersionInfo");
    expect(typeof r.version).toBe("string");
    expect(r.protocolVersion).toBe(27);
  });

  test("getLatestLedger", async () => {
    const r = await valid("getLatestLedger");
    expect(r.sequence).toBe(t.net.latestLedger.sequence);
    expect(r.id).toMatch(/^[0-9a-f]{64}$/);
    const header = xdr.LedgerHeader.fromXdr(r.headerXdr, "base64");
    expect(header.ledgerSeq).toBe(r.sequence);
    expect(String(header.scpValue.closeTime)).toBe(r.closeTime);
  });

  test("getLedgerEntries: an account and the native SAC instance", async () => {
    const accountKey = xdr.LedgerKey.account(new xdr.LedgerKeyAccount({ accountId: a.xdrPublicKey() })).toXdr("base64");
    const sacKey = xdr.LedgerKey.contractData(
      new xdr.LedgerKeyContractData({
        contract: new Contract(Asset.native().contractId(t.passphrase)).address().toScAddress(),
        key: xdr.ScVal.scvLedgerKeyContractInstance(),
        durability: xdr.ContractDataDurability.persistent,
      }),
    ).toXdr("base64");
    const missing = xdr.LedgerKey.account(
      new xdr.LedgerKeyAccount({ accountId: Keypair.random().xdrPublicKey() }),
    ).toXdr("base64");
    const r = await valid("getLedgerEntries", { keys: [accountKey, sacKey, missing] });
    expect(r.latestLedger).toBe(t.net.latestLedger.sequence);
    expect(r.entries.map((e: { key: string }) => e.key)).toEqual([accountKey, sacKey]);
    const [acc, sac] = r.entries;
    const accData = xdr.LedgerEntryData.fromXdr(acc.xdr, "base64");
    expect(accData.type).toBe("account");
    expect(acc.lastModifiedLedgerSeq).toBeGreaterThan(0);
    expect(acc.liveUntilLedgerSeq).toBeUndefined();
    expect(xdr.LedgerEntryData.fromXdr(sac.xdr, "base64").type).toBe("contractData");
    expect(sac.liveUntilLedgerSeq).toBeGreaterThan(r.latestLedger);
  });

  test("getLedgerEntries: nothing found gives entries []", async () => {
    const missing = xdr.LedgerKey.account(
      new xdr.LedgerKeyAccount({ accountId: Keypair.random().xdrPublicKey() }),
    ).toXdr("base64");
    const r = await valid("getLedgerEntries", { keys: [missing] });
    expect(r.entries).toEqual([]);
  });

  test("getFeeStats after some transactions", async () => {
    const r = await valid("getFeeStats");
    expect(Number(r.inclusionFee.transactionCount)).toBeGreaterThanOrEqual(3);
    expect(r.inclusionFee.min).toBe("100");
    expect(r.inclusionFee.ledgerCount).toBeGreaterThan(0);
    expect(r.latestLedger).toBe(t.net.latestLedger.sequence);
  });

  test("sendTransaction: PENDING, then ERROR (tx_bad_seq) for a stale sequence", async () => {
    const tx = await payment(a, b.publicKey(), "1");
    const pending = await valid("sendTransaction", { transaction: b64(tx) });
    expect(pending.status).toBe("PENDING");
    expect(pending.hash).toBe(Buffer.from(tx.hash()).toString("hex"));
    expect(pending.errorResultXdr).toBeUndefined();
    expect(pending.latestLedger).toBe(t.net.latestLedger.sequence);
    // localnet follows the schema (number) rather than live RPC (string) on purpose
    expect(typeof pending.latestLedgerCloseTime).toBe("number");

    const dup = await valid("sendTransaction", { transaction: b64(tx) });
    expect(dup.status).toBe("DUPLICATE");
    t.close();
    expect((await valid("getTransaction", { hash: pending.hash })).status).toBe(S.SUCCESS);

    // the same transaction again: its sequence number is consumed
    const err = await valid("sendTransaction", { transaction: b64(tx) });
    expect(err.status).toBe("ERROR");
    const result = xdr.TransactionResult.fromXdr(err.errorResultXdr, "base64");
    expect(result.result.type).toBe("txBadSeq");
    expect(result.feeCharged).toBe(100n);
  });

  test("getTransaction: SUCCESS", async () => {
    const r = await valid("getTransaction", { hash: hashes.success });
    expect(r.status).toBe(S.SUCCESS);
    expect(r.txHash).toBe(hashes.success);
    expect(r.ledger).toBeGreaterThan(0);
    expect(r.applicationOrder).toBeGreaterThanOrEqual(1);
    expect(r.feeBump).toBe(false);
    expect(Number(r.createdAt)).toBeGreaterThan(0);
    expect(xdr.TransactionResult.fromXdr(r.resultXdr, "base64").result.type).toBe("txSuccess");
    expect(xdr.TransactionEnvelope.fromXdr(r.envelopeXdr, "base64").type).toBe("envelopeTypeTx");
    xdr.TransactionMeta.fromXdr(r.resultMetaXdr, "base64");
  });

  test("getTransaction: FAILED", async () => {
    const r = await valid("getTransaction", { hash: hashes.failed });
    expect(r.status).toBe(S.FAILED);
    expect(r.ledger).toBeGreaterThan(0);
    expect(xdr.TransactionResult.fromXdr(r.resultXdr, "base64").result.type).toBe("txFailed");
  });

  test("getTransaction: NOT_FOUND", async () => {
    const hash = "ab".repeat(32);
    const r = await valid("getTransaction", { hash });
    expect(r.status).toBe(S.NOT_FOUND);
    expect(r.txHash).toBe(hash);
    expect(r.latestLedger).toBe(t.net.latestLedger.sequence);
  });

  test("getTransaction: a fee-bump by its outer and by its inner hash", async () => {
    const outer = await valid("getTransaction", { hash: hashes.feeBumpOuter });
    const inner = await valid("getTransaction", { hash: hashes.feeBumpInner });
    for (const r of [outer, inner]) {
      expect(r.status).toBe(S.SUCCESS);
      expect(r.feeBump).toBe(true);
      expect(r.ledger).toBeGreaterThan(0);
      expect(xdr.TransactionResult.fromXdr(r.resultXdr, "base64").result.type).toBe("txFeeBumpInnerSuccess");
    }
    expect(outer.txHash).toBe(hashes.feeBumpOuter);
    expect(inner.txHash).toBe(hashes.feeBumpInner);
    expect(inner.ledger).toBe(outer.ledger);
    expect(inner.envelopeXdr).toBe(outer.envelopeXdr);
  });

  test("getTransactions: two pages cover distinct transactions in order", async () => {
    const startLedger = t.net.oldestLedger.sequence;
    const first = await valid("getTransactions", { startLedger, pagination: { limit: 2 } });
    expect(first.transactions.length).toBe(2);
    expect(typeof first.cursor).toBe("string");
    const second = await valid("getTransactions", { pagination: { cursor: first.cursor, limit: 2 } });
    expect(second.transactions.length).toBe(2);
    const all = [...first.transactions, ...second.transactions] as {
      txHash: string;
      ledger: number;
      applicationOrder: number;
      createdAt: number;
    }[];
    expect(new Set(all.map((x) => x.txHash)).size).toBe(4);
    for (let i = 1; i < all.length; i++) {
      const p = all[i - 1],
        c = all[i];
      expect(c.ledger > p.ledger || (c.ledger === p.ledger && c.applicationOrder > p.applicationOrder)).toBe(true);
    }
    // the pages match one unpaged read
    const whole = await valid("getTransactions", { startLedger, pagination: { limit: 4 } });
    expect(whole.transactions.map((x: { txHash: string }) => x.txHash)).toEqual(all.map((x) => x.txHash));
    expect(all.map((x) => x.txHash)).toContain(hashes.success);
    expect(typeof all[0].createdAt).toBe("number");
  });

  test("getTransactions: the last page is empty", async () => {
    const startLedger = t.net.oldestLedger.sequence;
    const everything = await valid("getTransactions", { startLedger, pagination: { limit: 200 } });
    const rest = await valid("getTransactions", { pagination: { cursor: everything.cursor, limit: 10 } });
    expect(rest.transactions).toEqual([]);
  });

  test("getEvents: the native asset's transfers (CAP-67), as the schema says", async () => {
    const startLedger = t.net.oldestLedger.sequence;
    const r = await valid("getEvents", {
      startLedger,
      filters: [{ type: "contract", contractIds: [Asset.native().contractId(t.passphrase)] }],
      pagination: { limit: 3 },
    });
    expect(r.events.length).toBe(3);
    expect(r.events[0].id).toMatch(/^\d{19}-\d{10}$/);
    expect(r.cursor).toBe(r.events[2].id);
  });

  test("simulateTransaction: the native SAC's decimals", async () => {
    const sac = new Contract(Asset.native().contractId(t.passphrase));
    const tx = (await builder(t, a)).addOperation(sac.call("decimals")).build();
    const r = await valid("simulateTransaction", { transaction: b64(tx) });
    expect(r.error).toBeUndefined();
    expect(r.latestLedger).toBe(t.net.latestLedger.sequence);
    expect(Number(r.minResourceFee)).toBeGreaterThan(0);
    expect(r.results.length).toBe(1);
    const ret = xdr.ScVal.fromXdr(r.results[0].xdr, "base64");
    expect(ret.type).toBe("scvU32");
    expect(ret.value).toBe(7);
    expect(xdr.SorobanTransactionData.fromXdr(r.transactionData, "base64").resourceFee).toBe(BigInt(r.minResourceFee));
  });

  test("simulateTransaction: the test contract's panic is an error result", async () => {
    const tx = (await builder(t, a)).addOperation(new Contract(TEST_CONTRACT_ID).call("panic")).build();
    const r = await valid("simulateTransaction", { transaction: b64(tx) });
    expect(typeof r.error).toBe("string");
    expect(r.error.length).toBeGreaterThan(0);
    expect(r.results).toBeUndefined();
    expect(r.transactionData).toBeUndefined();
    expect(r.latestLedger).toBe(t.net.latestLedger.sequence);
  });
});

describe("JSON-RPC errors", () => {
  test("unknown method: -32601", async () => {
    expect((await rpcError("getSomethingElse", {})).code).toBe(-32601);
  });

  test("sendTransaction with undecodable XDR: -32602", async () => {
    expect((await rpcError("sendTransaction", { transaction: "not-xdr!!" })).code).toBe(-32602);
    expect((await rpcError("sendTransaction", { transaction: "AAAAAgAAAAA=" })).code).toBe(-32602);
    expect((await rpcError("sendTransaction", {})).code).toBe(-32602);
  });

  test("getTransaction with a short hash: -32602", async () => {
    const e = await rpcError("getTransaction", { hash: "abcd" });
    expect(e.code).toBe(-32602);
    expect(e.message).toContain("4");
  });

  test("getLedgerEntries with 201 keys: -32602", async () => {
    const key = xdr.LedgerKey.account(new xdr.LedgerKeyAccount({ accountId: a.xdrPublicKey() })).toXdr("base64");
    expect((await rpcError("getLedgerEntries", { keys: Array(201).fill(key) })).code).toBe(-32602);
    // 200 is still allowed
    expect(
      validateRpcResult("getLedgerEntries", (await call("getLedgerEntries", { keys: Array(200).fill(key) })).result),
    ).toEqual([]);
  });

  test("params as an array: an error, not a result", async () => {
    const e = await rpcError("getTransaction", [hashes.success]);
    expect(e.code).toBe(-32602);
    expect((await rpcError("getHealth", [])).code).toBe(-32602);
  });
});

describe("the SDK's rpc.Server parses the responses", () => {
  test("getLatestLedger, getFeeStats, getNetwork, getHealth, getVersionInfo, getTransactions", async () => {
    const latest = await t.rpc.getLatestLedger();
    expect(latest.sequence).toBe(t.net.latestLedger.sequence);
    const fees = await t.rpc.getFeeStats();
    expect(fees.inclusionFee.min).toBe("100");
    const network = await t.rpc.getNetwork();
    expect(network.passphrase).toBe(t.passphrase);
    const health = await t.rpc.getHealth();
    expect(health.status).toBe("healthy");
    const version = await t.rpc.getVersionInfo();
    expect(version.protocolVersion).toBe(27);
    const txs = await t.rpc.getTransactions({ startLedger: t.net.oldestLedger.sequence, pagination: { limit: 50 } });
    expect(txs.transactions.length).toBeGreaterThanOrEqual(4);
    const more = await t.rpc.getTransactions({ pagination: { cursor: txs.cursor, limit: 5 } });
    expect(Array.isArray(more.transactions)).toBe(true);
  });

  test("getTransaction (SDK) for SUCCESS, FAILED, NOT_FOUND and an inner hash", async () => {
    expect((await t.rpc.getTransaction(hashes.success)).status).toBe(S.SUCCESS);
    expect((await t.rpc.getTransaction(hashes.failed)).status).toBe(S.FAILED);
    expect((await t.rpc.getTransaction("cd".repeat(32))).status).toBe(S.NOT_FOUND);
    const inner = await t.rpc.getTransaction(hashes.feeBumpInner);
    expect(inner.status).toBe(S.SUCCESS);
    if (inner.status === S.SUCCESS) expect(inner.feeBump).toBe(true);
  });

  test("simulateTransaction (SDK)", async () => {
    const sac = new Contract(Asset.native().contractId(t.passphrase));
    const tx = (await builder(t, a)).addOperation(sac.call("decimals")).build();
    const sim = await t.rpc.simulateTransaction(tx);
    expect("error" in sim).toBe(false);
  });
});

test("malformed JSON is the JSON-RPC parse error", async () => {
  const local = await startLocalnet({ ledgerCloseMs: 0 });
  try {
    const r = await fetch(`${local.url}/rpc`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{not json",
    });
    expect(await r.json()).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "parse error" } });
  } finally {
    await local.stop();
  }
});
