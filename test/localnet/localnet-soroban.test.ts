/**
 * localnet's Soroban support, driven only through the official SDK clients (rpc.Server and the
 * transaction builders): the native Stellar Asset Contract, the built-in test contract, auth
 * (source-account, address and CAP-71 AddressV2 credentials), resource enforcement, resource fees
 * and refunds (also for fee-bumps), WASM uploads, and getLedgerEntries.
 *
 * Fees are checked against the reference formula (stellar-protocol.md section 5) computed here,
 * independently of localnet's own fee code.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  Address,
  Asset,
  Contract,
  Keypair,
  Operation,
  SorobanDataBuilder,
  TransactionBuilder,
  authorizeEntry,
  nativeToScVal,
  rpc,
  scValToNative,
  xdr,
  type FeeBumpTransaction,
  type Transaction,
} from "@stellar/stellar-sdk";
import { builder, invokeResult, startLocalnet, type TestNet } from "../support/localnet.ts";
import { TEST_CONTRACT_ID } from "../../src/localnet/soroban/contracts.ts";

let t: TestNet;
let sac: Contract;
const testContract = new Contract(TEST_CONTRACT_ID);

beforeAll(async () => {
  t = await startLocalnet({ ledgerCloseMs: 0 }); // a ledger closes when a test submits: no waiting for one
  sac = new Contract(Asset.native().contractId(t.passphrase));
});
afterAll(async () => {
  await t.stop();
});

// ---- helpers ------------------------------------------------------------------------------------

const BASE_FEE = 100n;
/** Current (SLP-4) fee rates of the reference, section 5. */
const RATE = {
  per10kInstr: 7n,
  readEntry: 1_563n,
  writeEntry: 2_500n,
  read1Kb: 447n,
  write1Kb: 875n,
  tx1Kb: 406n,
  history1Kb: 4_059n,
  events1Kb: 5_000n,
};
const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b;
const perKb = (bytes: number | bigint, rate: bigint) => ceilDiv(BigInt(bytes) * rate, 1024n);

/** Non-refundable resource fee of the declared resources, for a transaction envelope of `txSize` bytes. */
function nonRefundable(data: xdr.SorobanTransactionData, txSize: number): bigint {
  const r = data.resources;
  const classic = [...r.footprint.readOnly, ...r.footprint.readWrite].filter(
    (k) => k.type !== "contractData" && k.type !== "contractCode",
  ).length;
  return (
    ceilDiv(BigInt(r.instructions) * RATE.per10kInstr, 10_000n) +
    BigInt(classic) * RATE.readEntry +
    BigInt(r.footprint.readWrite.length) * RATE.writeEntry +
    perKb(r.diskReadBytes, RATE.read1Kb) +
    perKb(r.writeBytes, RATE.write1Kb) +
    perKb(txSize + 300, RATE.history1Kb) +
    perKb(txSize, RATE.tx1Kb)
  );
}

/**
 * Rent (refundable) of a new temporary entry of `size` bytes kept for the minimum temporary TTL (720
 * ledgers), plus the write of its TTL entry. The rent rate per 1 KB is the reference's formula at
 * localnet's modelled Soroban state size of 3 GB: -17,000 + ceil(27,000 × 3/4) = 3,250.
 */
const newTemporaryEntryRent = (size: number) =>
  ceilDiv(BigInt(size) * 3_250n * 720n, 1024n * 2_430n) + RATE.writeEntry + perKb(48, RATE.write1Kb);

/** Events fee (refundable) for the contract events and return value of an invocation. */
const eventsFee = (events: xdr.ContractEvent[], ret: xdr.ScVal) =>
  perKb(events.reduce((s, e) => s + e.toXdr().length, 0) + ret.toXdr().length, RATE.events1Kb);

const sorobanData = (tx: Transaction) => tx.toEnvelope().value.tx.ext.value as xdr.SorobanTransactionData;
const txSize = (tx: Transaction) => tx.toEnvelope().toXdr().length;

const balance = async (kp: Keypair) => BigInt((await t.rpc.getAccountEntry(kp.publicKey())).balance);
const seq = async (kp: Keypair) => BigInt((await t.rpc.getAccount(kp.publicKey())).sequenceNumber());

const accountKey = (kp: Keypair) => xdr.LedgerKey.account(new xdr.LedgerKeyAccount({ accountId: kp.xdrAccountId() }));
const addr = (kp: Keypair) => nativeToScVal(Address.fromString(kp.publicKey()));
const i128 = (n: bigint) => nativeToScVal(n, { type: "i128" });
const transfer = (from: Keypair, to: Keypair, amount: bigint, auth?: xdr.SorobanAuthorizationEntry[]) =>
  Operation.invokeContractFunction({
    contract: sac.contractId(),
    function: "transfer",
    args: [addr(from), addr(to), i128(amount)],
    auth,
  });

async function build(source: Keypair, op: xdr.Operation): Promise<Transaction> {
  return (await builder(t, source)).addOperation(op).build();
}

async function simulate(
  source: Keypair,
  op: xdr.Operation,
  authMode?: rpc.Api.SimulationAuthMode,
  useUpgradedAuth?: boolean,
) {
  return t.rpc.simulateTransaction(await build(source, op), undefined, authMode, useUpgradedAuth);
}

function simSuccess(sim: rpc.Api.SimulateTransactionResponse): rpc.Api.SimulateTransactionSuccessResponse {
  if (!rpc.Api.isSimulationSuccess(sim))
    throw new Error(`simulation failed: ${"error" in sim ? sim.error : JSON.stringify(sim)}`);
  return sim;
}

/** Return value of a simulated read-only call. */
async function call(source: Keypair, contract: Contract, fn: string, ...args: xdr.ScVal[]): Promise<xdr.ScVal> {
  return simSuccess(await simulate(source, contract.call(fn, ...args))).result!.retval;
}

/** Submits and asserts the transaction reached a final state; returns the response. */
async function submitFinal(tx: Transaction | FeeBumpTransaction) {
  const r = await t.submit(tx);
  if (r.status !== "SUCCESS" && r.status !== "FAILED")
    throw new Error(`send ${r.send.status}: ${JSON.stringify(r.send.errorResult?.toJson())}`);
  return r;
}

/** Signs the (single) address-credential auth entry of a recording simulation for `signer`. */
async function signedAuth(
  sim: rpc.Api.SimulateTransactionSuccessResponse,
  signer: Keypair,
): Promise<xdr.SorobanAuthorizationEntry> {
  const auth = sim.result!.auth;
  expect(auth.length).toBe(1);
  return authorizeEntry(auth[0], signer, sim.latestLedger + 100, t.passphrase);
}

// ---- tests --------------------------------------------------------------------------------------

describe("native Stellar Asset Contract", () => {
  test("decimals, name, symbol and balance simulate to the real values", async () => {
    const a = await t.funded();
    const decimals = await call(a, sac, "decimals");
    expect(decimals.type).toBe("scvU32");
    expect(scValToNative(decimals)).toBe(7);
    for (const fn of ["name", "symbol"]) {
      const v = await call(a, sac, fn);
      expect(v.type).toBe("scvString");
      expect(scValToNative(v)).toBe("native");
    }
    const bal = await call(a, sac, "balance", addr(a));
    expect(bal.type).toBe("scvI128");
    const expected = await balance(a);
    expect(expected).toBe(10_000_0000000n); // friendbot's 10,000 XLM
    expect(scValToNative(bal)).toBe(expected);
    // Horizon agrees
    const h = await t.horizon.loadAccount(a.publicKey());
    expect(h.balances.find((b) => b.asset_type === "native")!.balance).toBe("10000.0000000");

    // a read needs no auth and only reads: the instance and the account, nothing read-write
    const sim = simSuccess(await simulate(a, sac.call("balance", addr(a))));
    expect(sim.result!.auth).toEqual([]);
    const data = sim.transactionData.build();
    expect(data.resources.footprint.readWrite).toEqual([]);
    const ro = data.resources.footprint.readOnly.map((k) => k.toXdr("base64")).sort();
    expect(ro).toEqual([sac.getFootprint().toXdr("base64"), accountKey(a).toXdr("base64")].sort());
    expect(data.resourceFee).toBe(BigInt(sim.minResourceFee));
  });

  test("transfer from the transaction source: prepare, sign, send, poll; exact balances and fee", async () => {
    const a = await t.funded();
    const b = await t.funded();
    const amount = 12_345_678n;
    const [a0, b0, seqA] = [await balance(a), await balance(b), await seq(a)];

    const prepared = await t.rpc.prepareTransaction(await build(a, transfer(a, b, amount)));
    // recording mode gave one source-account credential for `from`
    const op = prepared.operations[0];
    if (op.type !== "invokeHostFunction") throw new Error(`unexpected ${op.type}`);
    expect(op.auth?.map((e) => e.credentials.type)).toEqual(["sorobanCredentialsSourceAccount"]);
    const data = sorobanData(prepared);
    expect(BigInt(prepared.fee)).toBe(BASE_FEE + data.resourceFee);
    prepared.sign(a);

    const r = await submitFinal(prepared);
    expect(r.send.status).toBe("PENDING");
    expect(r.status).toBe(rpc.Api.GetTransactionStatus.SUCCESS);
    if (r.status !== rpc.Api.GetTransactionStatus.SUCCESS) return;
    expect(r.resultXdr.result.type).toBe("txSuccess");
    expect(invokeResult(r.resultXdr)).toBe("invokeHostFunctionSuccess");
    expect(r.returnValue?.type).toBe("scvVoid");

    // the transfer event: [transfer, from, to, "native"], data = amount
    const events = r.events.contractEventsXdr[0];
    expect(events.length).toBe(1);
    const ev = events[0];
    expect(ev.contractId && Address.contract(ev.contractId.value).toString()).toBe(sac.contractId());
    const body = ev.body.value as xdr.ContractEventV0;
    expect(body.topics.map((x) => scValToNative(x))).toEqual(["transfer", a.publicKey(), b.publicKey(), "native"]);
    expect(scValToNative(body.data)).toBe(amount);
    // and getEvents serves it: the contract transfer beside the classic ones at the native asset's contract
    const served = await t.rpc.getEvents({
      startLedger: r.ledger,
      endLedger: r.ledger + 1,
      filters: [{ contractIds: [sac.contractId()], topics: [["*", "*", "*", "*"]] }],
    });
    const mine = served.events.filter((e) => e.txHash === r.txHash);
    expect(mine.map((e) => e.topic.map((x) => scValToNative(x)))).toEqual([
      ["transfer", a.publicKey(), b.publicKey(), "native"],
    ]);
    expect(scValToNative(mine[0].value)).toBe(amount);

    // fee: inclusion at the market rate (100) + non-refundable + events fee; the rest is refunded
    const fee = r.resultXdr.feeCharged;
    const nonRef = nonRefundable(data, txSize(prepared));
    expect(fee).toBe(BASE_FEE + nonRef + eventsFee(events, r.returnValue!));
    expect(fee).toBeLessThan(BigInt(prepared.fee));
    expect(fee).toBeGreaterThanOrEqual(BASE_FEE + nonRef);

    expect(await balance(a)).toBe(a0 - amount - fee);
    expect(await balance(b)).toBe(b0 + amount);
    expect(await seq(a)).toBe(seqA + 1n);
  });

  for (const upgraded of [true, false]) {
    const kind = upgraded ? "AddressV2 (CAP-71)" : "classic address";
    test(`transfer from another account with ${kind} credentials`, async () => {
      const sender = await t.funded();
      const to = await t.funded();
      const submitter = await t.funded();
      const amount = 5_0000000n;
      const [s0, to0, sub0] = [await balance(sender), await balance(to), await balance(submitter)];

      const sim = simSuccess(await simulate(submitter, transfer(sender, to, amount), undefined, upgraded));
      const entry = sim.result!.auth[0];
      expect(entry.credentials.type).toBe(upgraded ? "sorobanCredentialsAddressV2" : "sorobanCredentialsAddress");
      const cred = entry.credentials.value as xdr.SorobanAddressCredentials;
      expect(Address.fromScAddress(cred.address).toString()).toBe(sender.publicKey());
      // the footprint writes the sender's nonce entry (a temporary contract data entry of the sender's
      // address), and the written bytes include it: recording mode consumes the nonce as apply will
      const simData = sim.transactionData.build();
      const nonceKeys = simData.resources.footprint.readWrite.filter((k) => k.type === "contractData");
      expect(nonceKeys.length).toBe(1);
      if (nonceKeys[0].type !== "contractData") throw new Error("unreachable");
      const nonceKey = nonceKeys[0].contractData;
      expect(Address.fromScAddress(nonceKey.contract).toString()).toBe(sender.publicKey());
      expect(nonceKey.key.type).toBe("scvLedgerKeyNonce");
      expect((nonceKey.key as xdr.ScValLedgerKeyNonce).nonceKey.nonce).toBe(cred.nonce);
      expect(nonceKey.durability.name).toBe("temporary");
      // LedgerEntry of the nonce = its key + data type, ext, val (void) and lastModified/ext: 16 bytes more
      const nonceEntrySize = nonceKeys[0].toXdr().length + 16;

      const signed = await signedAuth(sim, sender);
      const signedCred = signed.credentials.value as xdr.SorobanAddressCredentials;
      expect(signedCred.signatureExpirationLedger).toBe(sim.latestLedger + 100);
      expect(signedCred.signature.type).toBe("scvVec");

      const tx = rpc.assembleTransaction(await build(submitter, transfer(sender, to, amount, [signed])), sim).build();
      tx.sign(submitter);
      const r = await submitFinal(tx);
      expect(r.status).toBe(rpc.Api.GetTransactionStatus.SUCCESS);
      if (r.status !== rpc.Api.GetTransactionStatus.SUCCESS) return;
      const fee = r.resultXdr.feeCharged;
      expect(fee).toBeLessThan(BigInt(tx.fee));
      // refundable consumed: the transfer event and void return value, and the new nonce entry's rent
      expect(fee).toBe(
        BASE_FEE +
          nonRefundable(sorobanData(tx), txSize(tx)) +
          eventsFee(r.events.contractEventsXdr[0], r.returnValue!) +
          newTemporaryEntryRent(nonceEntrySize),
      );

      expect(await balance(sender)).toBe(s0 - amount);
      expect(await balance(to)).toBe(to0 + amount);
      expect(await balance(submitter)).toBe(sub0 - fee);

      // the nonce is consumed: replaying the same signed entry in a new transaction fails
      const replay = rpc
        .assembleTransaction(await build(submitter, transfer(sender, to, amount, [signed])), sim)
        .build();
      replay.sign(submitter);
      const r2 = await submitFinal(replay);
      expect(r2.status).toBe(rpc.Api.GetTransactionStatus.FAILED);
      expect(invokeResult(r2.resultXdr)).toBe("invokeHostFunctionTrapped");
      expect(await balance(sender)).toBe(s0 - amount);
    });
  }

  test("tampered authorization: changed amount or wrong signer is rejected and moves nothing", async () => {
    const sender = await t.funded();
    const to = await t.funded();
    const submitter = await t.funded();
    const amount = 1_0000000n;
    const [s0, to0] = [await balance(sender), await balance(to)];

    const sim = simSuccess(await simulate(submitter, transfer(sender, to, amount)));
    const signed = await signedAuth(sim, sender);

    // (a) the transaction asks for more than the sender signed for
    const more = transfer(sender, to, amount * 2n, [signed]);
    const enforced = await simulate(submitter, more, "enforce");
    expect(rpc.Api.isSimulationError(enforced)).toBe(true);
    if (rpc.Api.isSimulationError(enforced)) expect(enforced.error).toMatch(/Error\(Auth, InvalidAction\)/);

    const tx = rpc.assembleTransaction(await build(submitter, more), sim).build();
    tx.sign(submitter);
    const r = await submitFinal(tx);
    expect(r.status).toBe(rpc.Api.GetTransactionStatus.FAILED);
    expect(r.resultXdr.result.type).toBe("txFailed");
    expect(invokeResult(r.resultXdr)).toBe("invokeHostFunctionTrapped");
    // nothing of a failed invocation is in a successful call, and it emits no contract events
    expect(r.diagnosticEventsXdr?.length).toBeGreaterThan(0);
    expect(r.diagnosticEventsXdr!.map((d) => d.inSuccessfulContractCall)).not.toContain(true);
    expect(r.events.contractEventsXdr.flat()).toEqual([]);
    // a failed transaction pays inclusion + non-refundable: the whole refundable part comes back
    expect(r.resultXdr.feeCharged).toBe(BASE_FEE + nonRefundable(sorobanData(tx), txSize(tx)));

    // (b) the right invocation signed by a key that is not the sender's
    const wrong = await signedAuth(sim, Keypair.random());
    const wrongOp = transfer(sender, to, amount, [wrong]);
    expect(rpc.Api.isSimulationError(await simulate(submitter, wrongOp, "enforce"))).toBe(true);
    const tx2 = rpc.assembleTransaction(await build(submitter, wrongOp), sim).build();
    tx2.sign(submitter);
    const r2 = await submitFinal(tx2);
    expect(r2.status).toBe(rpc.Api.GetTransactionStatus.FAILED);
    expect(invokeResult(r2.resultXdr)).toBe("invokeHostFunctionTrapped");

    expect(await balance(sender)).toBe(s0);
    expect(await balance(to)).toBe(to0);
  });

  test("a fee-bumped transfer is paid by the fee source, refund included", async () => {
    const a = await t.funded();
    const b = await t.funded();
    const sponsor = await t.funded();
    const amount = 3_0000000n;
    const [a0, b0, sp0] = [await balance(a), await balance(b), await balance(sponsor)];

    const inner = await t.rpc.prepareTransaction(await build(a, transfer(a, b, amount)));
    inner.sign(a);
    const fb = TransactionBuilder.buildFeeBumpTransaction(sponsor, "100", inner, t.passphrase);
    fb.sign(sponsor);
    const data = sorobanData(inner);
    expect(BigInt(fb.fee)).toBe(2n * BASE_FEE + data.resourceFee);

    const r = await submitFinal(fb);
    expect(r.status).toBe(rpc.Api.GetTransactionStatus.SUCCESS);
    if (r.status !== rpc.Api.GetTransactionStatus.SUCCESS) return;
    expect(r.feeBump).toBe(true);
    expect(r.resultXdr.result.type).toBe("txFeeBumpInnerSuccess");
    const fee = r.resultXdr.feeCharged;
    // two inclusion fees (inner op + the bump) + non-refundable + events fee
    expect(fee).toBe(
      2n * BASE_FEE + nonRefundable(data, txSize(inner)) + eventsFee(r.events.contractEventsXdr[0], r.returnValue!),
    );
    expect(fee).toBeLessThan(BigInt(fb.fee));

    expect(await balance(sponsor)).toBe(sp0 - fee);
    expect(await balance(a)).toBe(a0 - amount);
    expect(await balance(b)).toBe(b0 + amount);
  });
});

describe("test contract", () => {
  test("echo returns its argument unchanged", async () => {
    const a = await t.funded();
    const value = nativeToScVal({ n: 42, s: "hi", list: [1, 2, 3], neg: -7n, who: Address.fromString(a.publicKey()) });
    const ret = await call(a, testContract, "echo", value);
    expect(ret.toXdr("base64")).toBe(value.toXdr("base64"));
  });

  test("panic is a simulation error with diagnostic events", async () => {
    const a = await t.funded();
    const sim = await simulate(a, testContract.call("panic"));
    expect(rpc.Api.isSimulationError(sim)).toBe(true);
    if (!rpc.Api.isSimulationError(sim)) return;
    expect(sim.error).toContain("Error(Contract, #1)");
    expect(sim.events.length).toBeGreaterThan(0);
    const fnCall = sim.events[0].event.body.value as xdr.ContractEventV0;
    expect(fnCall.topics.map((x) => x.type)).toEqual(["scvSymbol", "scvBytes", "scvSymbol"]);
    expect(scValToNative(fnCall.topics[0])).toBe("fn_call");
    expect(scValToNative(fnCall.topics[2])).toBe("panic");
    // prepareTransaction refuses it
    await expect(t.rpc.prepareTransaction(await build(a, testContract.call("panic")))).rejects.toThrow(
      /Error\(Contract, #1\)/,
    );
  });

  test("burn: simulated instructions cover the burn; too few declared fails with resource limit exceeded", async () => {
    const a = await t.funded();
    const burn = testContract.call("burn", nativeToScVal(5_000_000, { type: "u32" }));
    const sim = simSuccess(await simulate(a, burn));
    expect(scValToNative(sim.result!.retval)).toBe(5_000_000n);
    const simulated = sim.transactionData.build().resources.instructions;
    expect(simulated).toBeGreaterThanOrEqual(5_000_000);
    // a bigger burn costs more instructions and a higher fee
    const sim2 = simSuccess(await simulate(a, testContract.call("burn", nativeToScVal(10_000_000n, { type: "u64" }))));
    expect(sim2.transactionData.build().resources.instructions - simulated).toBeGreaterThanOrEqual(5_000_000);
    expect(BigInt(sim2.minResourceFee)).toBeGreaterThan(BigInt(sim.minResourceFee));

    const a0 = await balance(a);
    const prepared = await t.rpc.prepareTransaction(await build(a, burn));
    const full = sorobanData(prepared);
    const lowered = new SorobanDataBuilder(full)
      .setResources(4_000_000, full.resources.diskReadBytes, full.resources.writeBytes)
      .build();
    const tx = (await builder(t, a)).addOperation(burn).setSorobanData(lowered).build();
    tx.sign(a);
    const r = await submitFinal(tx);
    expect(r.status).toBe(rpc.Api.GetTransactionStatus.FAILED);
    expect(r.resultXdr.result.type).toBe("txFailed");
    expect(invokeResult(r.resultXdr)).toBe("invokeHostFunctionResourceLimitExceeded");
    // a failed transaction is refunded its whole refundable part
    const fee = r.resultXdr.feeCharged;
    expect(fee).toBe(BASE_FEE + nonRefundable(lowered, txSize(tx)));
    expect(await balance(a)).toBe(a0 - fee);
  });

  test("a declared resource fee below the non-refundable minimum is rejected with txSOROBAN_INVALID", async () => {
    const a = await t.funded();
    const burn = testContract.call("burn", nativeToScVal(1_000, { type: "u32" }));
    const prepared = await t.rpc.prepareTransaction(await build(a, burn));
    prepared.sign(a);
    const data = sorobanData(prepared);
    const min = nonRefundable(data, txSize(prepared));
    expect(data.resourceFee).toBeGreaterThan(min);

    const withFee = async (fee: bigint) => {
      const d = new SorobanDataBuilder(data).setResourceFee(fee).build();
      const tx = (await builder(t, a)).addOperation(burn).setSorobanData(d).build();
      tx.sign(a);
      expect(txSize(tx)).toBe(txSize(prepared));
      return tx;
    };
    const a0 = await balance(a);
    const low = await t.rpc.sendTransaction(await withFee(min - 1n));
    expect(low.status).toBe("ERROR");
    expect(low.errorResult?.result.type).toBe("txSorobanInvalid");
    // a validation error reports resourceFee + baseFee × ops
    expect(low.errorResult?.feeCharged).toBe(min - 1n + BASE_FEE);
    expect(await balance(a)).toBe(a0);

    // exactly the non-refundable minimum is accepted, but leaves nothing for the return value's events fee
    const exact = await submitFinal(await withFee(min));
    expect(exact.send.status).toBe("PENDING");
    expect(exact.status).toBe(rpc.Api.GetTransactionStatus.FAILED);
    expect(invokeResult(exact.resultXdr)).toBe("invokeHostFunctionInsufficientRefundableFee");
    expect(exact.resultXdr.feeCharged).toBe(BASE_FEE + min);
  });
});

test("uploading WASM is a simulation error saying localnet runs no WASM", async () => {
  const a = await t.funded();
  const wasm = new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);
  const sim = await simulate(a, Operation.uploadContractWasm({ wasm }));
  expect(rpc.Api.isSimulationError(sim)).toBe(true);
  if (rpc.Api.isSimulationError(sim)) expect(sim.error).toMatch(/does not run WASM/);
});

test("getLedgerEntries returns the contract instances and account entries", async () => {
  const a = await t.funded();
  const missing = Keypair.random();
  const res = await t.rpc.getLedgerEntries(
    sac.getFootprint(),
    accountKey(a),
    testContract.getFootprint(),
    accountKey(missing),
  );
  expect(res.entries.length).toBe(3);
  const [inst, acc, testInst] = res.entries;

  expect(inst.key.toXdr("base64")).toBe(sac.getFootprint().toXdr("base64"));
  expect(inst.val.type).toBe("contractData");
  const cd = (inst.val as xdr.LedgerEntryDataContractData).contractData;
  expect(Address.fromScAddress(cd.contract).toString()).toBe(sac.contractId());
  expect(cd.key.type).toBe("scvLedgerKeyContractInstance");
  expect(cd.durability.name).toBe("persistent");
  expect(cd.val.type).toBe("scvContractInstance");
  const instance = (cd.val as xdr.ScValContractInstance).instance;
  expect(instance.executable.type).toBe("contractExecutableStellarAsset");
  expect(inst.liveUntilLedgerSeq).toBeGreaterThan(res.latestLedger);

  expect(acc.val.type).toBe("account");
  const entry = (acc.val as xdr.LedgerEntryDataAccount).account;
  expect(entry.balance).toBe(await balance(a));
  expect(BigInt(entry.seqNum)).toBe(await seq(a));
  expect(acc.liveUntilLedgerSeq).toBeUndefined();

  const ti = ((testInst.val as xdr.LedgerEntryDataContractData).contractData.val as xdr.ScValContractInstance).instance;
  expect(ti.executable.type).toBe("contractExecutableWasm");

  // and the SDK's account helper reads the same entry
  expect((await t.rpc.getAccount(a.publicKey())).accountId()).toBe(a.publicKey());
});
