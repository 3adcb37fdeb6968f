/**
 * POST /v1/sponsor in func+auth mode ({operation, network}): a client's invokeHostFunction
 * operation, authorised by its signed address credentials, is run from a relay channel account.
 * Native SAC transfers on the embedded testnet and mainnet: who pays what, tampered and relay-account
 * credentials, validation, credits and policies, and one submission per operation.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  Account,
  Address,
  Asset,
  Keypair,
  MuxedAccount,
  Operation,
  TransactionBuilder,
  authorizeEntry,
  nativeToScVal,
  rpc,
  scValToNative,
  xdr,
  type Transaction,
} from "@stellar/stellar-sdk";
import { invokeResult } from "../support/localnet.ts";
import { startTestRelay, type TestRelay } from "../support/relay.ts";
import { planBid } from "../../src/features/tx/fee-strategy.ts";
import { localFunder } from "../../src/boot/boot.ts";
import { TEST_CONTRACT_ID } from "../../src/localnet/soroban/contracts.ts";

type Res = { status: number; headers: Headers; body: any };
type NetName = "testnet" | "mainnet";

let r: TestRelay;
let mainRpc: rpc.Server;
beforeAll(async () => {
  r = await startTestRelay();
  mainRpc = new rpc.Server(`${r.url}/localnet/mainnet/rpc`, { allowHttp: true });
});
afterAll(() => r.stop());

const HASH = /^[0-9a-f]{64}$/;
const net = (n: NetName = "testnet") => r.networks.get(n).localnet!;
const server = (n: NetName = "testnet") => (n === "testnet" ? r.rpc : mainRpc);
const balance = (pk: string, n: NetName = "testnet") => net(n).account(pk)!.balance;
const seqOf = (pk: string, n: NetName = "testnet") => net(n).account(pk)!.seqNum;
const sacId = (n: NetName = "testnet") => Asset.native().contractId(net(n).passphrase);

function expectError(res: Res, status: number, code: string) {
  if (res.status !== status)
    throw new Error(`expected ${status} ${code}, got ${res.status} ${JSON.stringify(res.body)}`);
  expect(res.body.error.code).toBe(code);
}
function expectOperationInvalid(res: Res, reason: string) {
  expectError(res, 400, "VALIDATION_ERROR");
  expect(res.body.error.details).toEqual({ field: "operation", reason });
}

async function fund(n: NetName = "testnet"): Promise<Keypair> {
  if (n === "testnet") return r.funded();
  const kp = Keypair.random();
  const res = await fetch(`${r.url}/localnet/mainnet/friendbot?addr=${kp.publicKey()}`);
  if (!res.ok) throw new Error(`mainnet friendbot ${res.status}: ${await res.text()}`);
  return kp;
}

const addr = (pk: string) => nativeToScVal(Address.fromString(pk));
const transfer = (
  from: string,
  to: string,
  amount: bigint,
  n: NetName = "testnet",
  opts: { auth?: xdr.SorobanAuthorizationEntry[]; source?: string } = {},
) =>
  Operation.invokeContractFunction({
    contract: sacId(n),
    function: "transfer",
    args: [addr(from), addr(to), nativeToScVal(amount, { type: "i128" })],
    auth: opts.auth ?? [],
    source: opts.source,
  });

/** A recording simulation of `op` with `source` as the transaction source: its auth entries and latest ledger. */
async function recordAuth(source: Keypair, op: xdr.Operation, n: NetName = "testnet", upgraded = false) {
  const acc = await server(n).getAccount(source.publicKey());
  const tx = new TransactionBuilder(acc, { fee: "100", networkPassphrase: net(n).passphrase })
    .addOperation(op)
    .setTimeout(60)
    .build();
  const sim = await server(n).simulateTransaction(tx, undefined, undefined, upgraded);
  if (!rpc.Api.isSimulationSuccess(sim))
    throw new Error(`simulation failed: ${"error" in sim ? sim.error : JSON.stringify(sim)}`);
  return { auth: sim.result!.auth, latestLedger: sim.latestLedger };
}

/**
 * What a func+auth client does: simulate the transfer with another account (`to`) as the source, so
 * that `from` gets address credentials; sign them; rebuild the op with the signed entry.
 */
async function signedTransfer(from: Keypair, to: Keypair, amount: bigint, n: NetName = "testnet") {
  const { auth, latestLedger } = await recordAuth(to, transfer(from.publicKey(), to.publicKey(), amount, n), n);
  expect(auth.length).toBe(1);
  expect(auth[0]!.credentials.type).toBe("sorobanCredentialsAddress");
  const signed = await authorizeEntry(auth[0]!, from, latestLedger + 100, net(n).passphrase);
  const op = transfer(from.publicKey(), to.publicKey(), amount, n, { auth: [signed] });
  return { op, b64: op.toXDR("base64"), signed };
}

/** A copy of a signed address-credential entry with one bit of its ed25519 signature flipped. */
function corruptSignature(entry: xdr.SorobanAuthorizationEntry): xdr.SorobanAuthorizationEntry {
  const sig = scValToNative((entry.credentials.value as xdr.SorobanAddressCredentials).signature) as {
    signature: Buffer;
  }[];
  expect(sig.length).toBe(1);
  const raw = Buffer.from(entry.toXdr());
  const at = raw.indexOf(sig[0]!.signature);
  expect(at).toBeGreaterThan(0);
  raw[at + 10] ^= 0x01;
  return xdr.SorobanAuthorizationEntry.fromXdr(raw);
}

const sponsorOp = (operation: string, n: NetName = "testnet", headers: Record<string, string> = {}) =>
  r.post("/v1/sponsor", { operation, network: n }, headers);

/** The relay's accounts on a network (admin API): the funder and its channels. */
async function relayAccounts(n: NetName = "testnet"): Promise<{ funder: string; channels: string[] }> {
  const res = await r.admin("GET", `/channels?network=${n}`);
  expect(res.status).toBe(200);
  return {
    funder: res.body.funder.publicKey,
    channels: res.body.channels.map((c: { publicKey: string }) => c.publicKey),
  };
}

/** Balance and sequence number of every relay account (to show that nothing was submitted or paid). */
async function relayState(n: NetName = "testnet") {
  const { funder, channels } = await relayAccounts(n);
  return Object.fromEntries([funder, ...channels].map((pk) => [pk, { balance: balance(pk, n), seq: seqOf(pk, n) }]));
}

/** The transaction the relay submitted, as the network recorded it. */
async function submitted(hash: string, n: NetName = "testnet") {
  const got = await server(n).getTransaction(hash);
  expect(got.status).toBe(rpc.Api.GetTransactionStatus.SUCCESS);
  if (got.status !== rpc.Api.GetTransactionStatus.SUCCESS) throw new Error("unreachable");
  expect(got.feeBump).toBe(false); // the relay's own transaction, not a fee-bump
  const tx = TransactionBuilder.fromXDR(got.envelopeXdr.toXdr("base64"), net(n).passphrase) as Transaction;
  return { got, tx };
}

function expectSuccessBody(res: Res, type = "txSuccess") {
  if (res.status !== 200) throw new Error(`expected 200, got ${res.status} ${JSON.stringify(res.body)}`);
  expect(Object.keys(res.body).sort()).toEqual(["feePaid", "hash", "innerHash", "ledger", "resultXdr", "status"]);
  expect(res.body.hash).toMatch(HASH);
  expect(res.body.feePaid).toMatch(/^[1-9][0-9]*$/);
  expect(Number.isInteger(res.body.ledger)).toBe(true);
  const result = xdr.TransactionResult.fromXdr(res.body.resultXdr, "base64");
  expect(result.result.type as string).toBe(type);
  expect(result.feeCharged.toString()).toBe(res.body.feePaid);
  return result;
}

// ---- success ------------------------------------------------------------------------------------

describe("func+auth: a transfer authorised by the sender's address credentials", () => {
  test("runs from a channel account: the sender pays no fee and keeps its sequence number; the channel pays feePaid", async () => {
    const [from, to] = [await fund(), await fund()];
    const amount = 25_000_000n;
    const { b64 } = await signedTransfer(from, to, amount);
    const { channels, funder } = await relayAccounts();
    expect(funder).toBe(localFunder(r.passphrase).publicKey());
    const before = await relayState();
    const [from0, to0, fromSeq0] = [balance(from.publicKey()), balance(to.publicKey()), seqOf(from.publicKey())];

    const res = await sponsorOp(b64);
    const result = expectSuccessBody(res);
    expect(invokeResult(result)).toBe("invokeHostFunctionSuccess");

    expect(balance(from.publicKey())).toBe(from0 - amount);
    expect(balance(to.publicKey())).toBe(to0 + amount);
    expect(seqOf(from.publicKey())).toBe(fromSeq0);

    // the confirmed transaction: a channel is its source, its one operation is the client's, byte for byte
    const { got, tx } = await submitted(res.body.hash);
    expect(got.ledger).toBe(res.body.ledger);
    expect(channels).toContain(tx.source);
    expect(tx.source).not.toBe(funder);
    expect(tx.operations.length).toBe(1);
    expect((tx.toEnvelope().value as xdr.TransactionV1Envelope).tx.operations[0]!.toXdr("base64")).toBe(b64);
    expect(tx.signatures.length).toBe(1);
    expect(Keypair.fromPublicKey(tx.source).verify(tx.hash(), Buffer.from(tx.signatures[0]!.signature.value))).toBe(
      true,
    );
    // the SAC's transfer event names the sender and recipient
    const ev = got.events.contractEventsXdr[0]!;
    expect(ev.length).toBe(1);
    const body = ev[0]!.body.value as xdr.ContractEventV0;
    expect(body.topics.map((t) => scValToNative(t))).toEqual(["transfer", from.publicKey(), to.publicKey(), "native"]);
    expect(scValToNative(body.data)).toBe(amount);
    // localnet's record agrees: the channel is source and fee account
    const rec = net().records.get(res.body.hash)!;
    expect(rec.sourceAccount).toBe(tx.source);
    expect(rec.feeAccount).toBe(tx.source);
    expect(rec.feeCharged.toString()).toBe(res.body.feePaid);

    // the channel lost exactly feePaid and used one sequence number; no other relay account moved
    const after = await relayState();
    expect(before[tx.source]!.balance - after[tx.source]!.balance).toBe(BigInt(res.body.feePaid));
    expect(after[tx.source]!.seq).toBe(before[tx.source]!.seq + 1n);
    expect(BigInt(tx.sequence)).toBe(after[tx.source]!.seq);
    for (const pk of Object.keys(before)) if (pk !== tx.source) expect(after[pk]).toEqual(before[pk]!);
    // the fee paid: more than the inclusion fee, at most the transaction's fee
    const declared = ((tx.toEnvelope().value as xdr.TransactionV1Envelope).tx.ext.value as xdr.SorobanTransactionData)
      .resourceFee;
    expect(declared).toBeGreaterThan(0n);
    expect(BigInt(res.body.feePaid)).toBeGreaterThan(100n);
    expect(BigInt(res.body.feePaid)).toBeLessThanOrEqual(100n + declared);
  });

  test("the transaction's fee is the inclusion bid plus the declared resource fee (not the resource fee twice)", async () => {
    const [from, to] = [await fund(), await fund()];
    const res = await sponsorOp((await signedTransfer(from, to, 1_000_000n)).b64);
    expectSuccessBody(res);
    const { tx } = await submitted(res.body.hash);
    const declared = ((tx.toEnvelope().value as xdr.TransactionV1Envelope).tx.ext.value as xdr.SorobanTransactionData)
      .resourceFee;
    // the inclusion bid (fee less the declared resource fee) is the fee strategy's: on this quiet
    // network fast bids 10x the Soroban lane's recent rate (the fee statistic), so at least 1,000
    const gw = r.networks.get("testnet").gateway!;
    const expected = planBid("fast", await gw.market("p70", true), 100n, 100_000n).rate;
    expect(expected).toBeGreaterThanOrEqual(1_000n);
    expect({ inclusionBid: BigInt(tx.fee) - declared, declared }).toEqual({ inclusionBid: expected, declared });
  });
});

// ---- tampered authorization ---------------------------------------------------------------------

describe("tampered authorization fails and moves nothing", () => {
  test("(a) the amount changed after signing; (b) a corrupted signature; then the untampered op still succeeds", async () => {
    const [from, to] = [await fund(), await fund()];
    const amount = 10_000_000n;
    const { signed, b64 } = await signedTransfer(from, to, amount);
    const [from0, to0] = [balance(from.publicKey()), balance(to.publicKey())];
    const before = await relayState();

    // (a) the same signed entry on an operation asking for twice the amount
    const more = transfer(from.publicKey(), to.publicKey(), amount * 2n, "testnet", { auth: [signed] });
    const a = await sponsorOp(more.toXDR("base64"));
    expectError(a, 422, "SIMULATION_FAILED");
    expect(a.body.error.message).toMatch(/Auth/);
    expect(Array.isArray(a.body.error.details.events)).toBe(true);

    // (b) the right operation with one bit of the ed25519 signature flipped
    const bad = corruptSignature(signed);
    const corrupted = transfer(from.publicKey(), to.publicKey(), amount, "testnet", { auth: [bad] });
    expect(corrupted.toXDR("base64")).not.toBe(b64);
    const b = await sponsorOp(corrupted.toXDR("base64"));
    expectError(b, 422, "SIMULATION_FAILED");

    // (c) signed by a key that is not the sender's
    const { auth, latestLedger } = await recordAuth(to, transfer(from.publicKey(), to.publicKey(), amount));
    const wrong = await authorizeEntry(auth[0]!, Keypair.random(), latestLedger + 100, r.passphrase);
    expectError(
      await sponsorOp(transfer(from.publicKey(), to.publicKey(), amount, "testnet", { auth: [wrong] }).toXDR("base64")),
      422,
      "SIMULATION_FAILED",
    );

    // nothing moved: no balance, and no relay account paid or used a sequence number
    expect(balance(from.publicKey())).toBe(from0);
    expect(balance(to.publicKey())).toBe(to0);
    expect(await relayState()).toEqual(before);

    // the failures neither spent the nonce nor were recorded as this operation's outcome
    expectSuccessBody(await sponsorOp(b64));
    expect(balance(from.publicKey())).toBe(from0 - amount);
  });
});

// ---- relay accounts -----------------------------------------------------------------------------

describe("credentials that would spend the relay's accounts are refused", () => {
  test("source-account credentials, and address credentials of a channel or the funder: 400 relay_account_credentials, nothing submitted", async () => {
    const [user, other] = [await fund(), await fund()];
    const { funder, channels } = await relayAccounts();
    expect(channels.length).toBeGreaterThan(0);
    const before = await relayState();
    const [user0, other0] = [balance(user.publicKey()), balance(other.publicKey())];

    // source-account credentials (the simulation's source is the sender): they would be the channel's
    const { auth: sourceAuth } = await recordAuth(user, transfer(user.publicKey(), other.publicKey(), 1_000_000n));
    expect(sourceAuth[0]!.credentials.type).toBe("sorobanCredentialsSourceAccount");
    const res = await sponsorOp(
      transfer(user.publicKey(), other.publicKey(), 1_000_000n, "testnet", { auth: sourceAuth }).toXDR("base64"),
    );
    expectOperationInvalid(res, "relay_account_credentials");
    expect(res.body.error.message).toMatch(/source-account credentials/);

    // address credentials of relay accounts: a channel's (classic and AddressV2) and the funder's, signed or not
    for (const [victim, upgraded] of [
      [channels[0]!, false],
      [channels[channels.length - 1]!, true],
      [funder, false],
      [funder, true],
    ] as const) {
      const op = transfer(victim, other.publicKey(), 1_000_000n);
      const { auth, latestLedger } = await recordAuth(other, op, "testnet", upgraded);
      expect(auth.length).toBe(1);
      expect(auth[0]!.credentials.type).toBe(upgraded ? "sorobanCredentialsAddressV2" : "sorobanCredentialsAddress");
      for (const entry of [
        auth[0]!,
        await authorizeEntry(auth[0]!, Keypair.random(), latestLedger + 100, r.passphrase),
      ]) {
        const bad = await sponsorOp(
          transfer(victim, other.publicKey(), 1_000_000n, "testnet", { auth: [entry] }).toXDR("base64"),
        );
        expectOperationInvalid(bad, "relay_account_credentials");
        expect(bad.body.error.message).toContain(victim);
      }
    }

    // a channel named by a muxed address (M...) of its account
    const { auth: chAuth } = await recordAuth(other, transfer(channels[0]!, other.publicKey(), 1_000_000n));
    const cred = chAuth[0]!.credentials.value as xdr.SorobanAddressCredentials;
    const muxed = new MuxedAccount(new Account(channels[0]!, "0"), "42").accountId();
    const muxedEntry = new xdr.SorobanAuthorizationEntry({
      credentials: xdr.SorobanCredentials.sorobanCredentialsAddress(
        new xdr.SorobanAddressCredentials({
          address: Address.fromString(muxed).toScAddress(),
          nonce: cred.nonce,
          signatureExpirationLedger: cred.signatureExpirationLedger,
          signature: xdr.ScVal.scvVoid(),
        }),
      ),
      rootInvocation: chAuth[0]!.rootInvocation,
    });
    expectOperationInvalid(
      await sponsorOp(
        transfer(channels[0]!, other.publicKey(), 1_000_000n, "testnet", { auth: [muxedEntry] }).toXDR("base64"),
      ),
      "relay_account_credentials",
    );

    // a relay account in second place, after the user's own valid entry, is refused too
    const mine = (await signedTransfer(user, other, 1_000_000n)).signed;
    const { auth: channelAuth } = await recordAuth(other, transfer(channels[0]!, other.publicKey(), 1n));
    const twoEntries = transfer(user.publicKey(), other.publicKey(), 1_000_000n, "testnet", {
      auth: [mine, channelAuth[0]!],
    });
    const res2 = await sponsorOp(twoEntries.toXDR("base64"));
    expectOperationInvalid(res2, "relay_account_credentials");
    expect(res2.body.error.message).toMatch(/entry 1/);

    expect(await relayState()).toEqual(before);
    expect(balance(user.publicKey())).toBe(user0);
    expect(balance(other.publicKey())).toBe(other0);
  });

  test("a transfer *to* a relay account, authorised by the user, is not refused", async () => {
    const user = await fund();
    const { channels } = await relayAccounts();
    const channel = channels[0]!;
    const helper = await fund();
    const { auth, latestLedger } = await recordAuth(helper, transfer(user.publicKey(), channel, 1_000n));
    const signed = await authorizeEntry(auth[0]!, user, latestLedger + 100, r.passphrase);
    const user0 = balance(user.publicKey());
    expectSuccessBody(
      await sponsorOp(transfer(user.publicKey(), channel, 1_000n, "testnet", { auth: [signed] }).toXDR("base64")),
    );
    expect(balance(user.publicKey())).toBe(user0 - 1_000n);
  });
});

// ---- validation ---------------------------------------------------------------------------------

describe("validation", () => {
  test("an operation with a source account, a payment, bad base64, not an Operation, trailing bytes", async () => {
    const [from, to] = [await fund(), await fund()];
    const { signed } = await signedTransfer(from, to, 1_000_000n);
    const before = await relayState();

    const withSource = transfer(from.publicKey(), to.publicKey(), 1_000_000n, "testnet", {
      auth: [signed],
      source: to.publicKey(),
    });
    expectOperationInvalid(await sponsorOp(withSource.toXDR("base64")), "operation_source_account");

    const payment = Operation.payment({ destination: to.publicKey(), asset: Asset.native(), amount: "1" });
    expectOperationInvalid(await sponsorOp(payment.toXDR("base64")), "not_invoke_host_function");
    const bump = Operation.bumpSequence({ bumpTo: "0" });
    expectOperationInvalid(await sponsorOp(bump.toXDR("base64")), "not_invoke_host_function");

    for (const garbage of ["%%%", "not base64!", "AAA"]) expectOperationInvalid(await sponsorOp(garbage), "not_base64");
    expectOperationInvalid(await sponsorOp("AAAA"), "not_an_operation");
    // a transaction envelope is not an Operation
    const tx = await r.payment(from);
    expectOperationInvalid(await sponsorOp(tx.toEnvelope().toXDR("base64")), "not_an_operation");
    // trailing bytes after a valid Operation
    const valid = transfer(from.publicKey(), to.publicKey(), 1_000_000n, "testnet", { auth: [signed] }).toXDR();
    const trailing = await sponsorOp(Buffer.concat([valid, Buffer.alloc(4)]).toString("base64"));
    expectOperationInvalid(trailing, "not_an_operation");
    expect(trailing.body.error.message).toMatch(/trailing/);

    // an empty operation is refused by the schema
    expectError(await sponsorOp(""), 400, "VALIDATION_ERROR");
    expect(await relayState()).toEqual(before);
  });

  test("both transaction and operation, or neither: 400", async () => {
    const [from, to] = [await fund(), await fund()];
    const { b64 } = await signedTransfer(from, to, 1_000_000n);
    const tx = await r.payment(from);
    const before = await relayState();
    const from0 = balance(from.publicKey());

    const both = await r.post("/v1/sponsor", {
      transaction: tx.toEnvelope().toXDR("base64"),
      operation: b64,
      network: "testnet",
    });
    expectError(both, 400, "VALIDATION_ERROR");
    expect(both.body.error.details.reason).toBe("transaction_or_operation");
    const neither = await r.post("/v1/sponsor", { network: "testnet" });
    expectError(neither, 400, "VALIDATION_ERROR");
    expect(neither.body.error.details.reason).toBe("transaction_or_operation");

    expect(await relayState()).toEqual(before);
    expect(balance(from.publicKey())).toBe(from0);
    // each alone is sponsored
    expectSuccessBody(await sponsorOp(b64));
    expectSuccessBody(
      await r.post("/v1/sponsor", { transaction: tx.toEnvelope().toXDR("base64"), network: "testnet" }),
      "txFeeBumpInnerSuccess",
    );
  });

  test("a contract call that fails in simulation is 422 SIMULATION_FAILED with its events", async () => {
    // signed while the sender could afford it; a second transfer spends most of its balance first
    const [from, to] = [await fund(), await fund()];
    const big = await signedTransfer(from, to, 9_000_0000000n);
    expectSuccessBody(await sponsorOp((await signedTransfer(from, to, 5_000_0000000n)).b64));
    const from0 = balance(from.publicKey());

    const before = await relayState();
    const panic = Operation.invokeContractFunction({ contract: TEST_CONTRACT_ID, function: "panic", args: [] });
    const res = await sponsorOp(panic.toXDR("base64"));
    expectError(res, 422, "SIMULATION_FAILED");
    expect(res.body.error.message).toContain("Error(Contract, #1)");
    expect(res.body.error.details.events.length).toBeGreaterThan(0);

    const poor = await sponsorOp(big.b64);
    expectError(poor, 422, "SIMULATION_FAILED");
    expect(poor.body.error.message).toContain("Error(Contract, #10)"); // the SAC's balance error
    expect(await relayState()).toEqual(before);
    expect(balance(from.publicKey())).toBe(from0);
  });
});

// ---- credits and policy -------------------------------------------------------------------------

describe("credits and policies", () => {
  const project = async (id: string) => {
    const res = await r.admin("GET", `/projects/${id}`);
    expect(res.status).toBe(200);
    return res.body as { creditBalance: string; creditReserved: string };
  };

  test("mainnet with an sr_live_ key: the transfer is charged exactly feePaid, nothing stays reserved", async () => {
    const credits = 50_000_000n;
    const p = await r.project({ credits });
    const [from, to] = await Promise.all([fund("mainnet"), fund("mainnet")]);
    const amount = 7_000_000n;
    const { b64 } = await signedTransfer(from, to, amount, "mainnet");
    const [from0, to0] = [balance(from.publicKey(), "mainnet"), balance(to.publicKey(), "mainnet")];
    const before = await relayState("mainnet");

    const res = await sponsorOp(b64, "mainnet", { "x-api-key": p.liveKey });
    expectSuccessBody(res);
    const fee = BigInt(res.body.feePaid);
    expect(balance(from.publicKey(), "mainnet")).toBe(from0 - amount);
    expect(balance(to.publicKey(), "mainnet")).toBe(to0 + amount);
    const { tx } = await submitted(res.body.hash, "mainnet");
    expect((await relayAccounts("mainnet")).channels).toContain(tx.source);
    expect(before[tx.source]!.balance - balance(tx.source, "mainnet")).toBe(fee);

    let view = await project(p.id);
    for (let i = 0; i < 100 && view.creditReserved !== "0"; i++) {
      await Bun.sleep(10);
      view = await project(p.id);
    }
    expect(view.creditReserved).toBe("0");
    expect(BigInt(view.creditBalance)).toBe(credits - fee);
    // the journal: a charge of feePaid for this transaction
    const journal = await r.admin("GET", `/projects/${p.id}/credits`);
    const charges = (journal.body.entries as { kind: string; amount: string; txHash: string | null }[]).filter(
      (e) => e.kind === "charge",
    );
    expect(charges.length).toBe(1);
    expect(BigInt(charges[0]!.amount)).toBe(-fee);
    expect(charges[0]!.txHash).toBe(res.body.hash);
  });

  test("mainnet without a key is refused; without credits it is 402 and nothing is submitted", async () => {
    const [from, to] = await Promise.all([fund("mainnet"), fund("mainnet")]);
    const { b64 } = await signedTransfer(from, to, 1_000_000n, "mainnet");
    const before = await relayState("mainnet");
    expectError(await sponsorOp(b64, "mainnet"), 401, "UNAUTHORIZED");
    const p = await r.project();
    expectError(await sponsorOp(b64, "mainnet", { "x-api-key": p.liveKey }), 402, "INSUFFICIENT_CREDITS");
    expect(await relayState("mainnet")).toEqual(before);
    expect((await project(p.id)).creditBalance).toBe("0");
  });

  test("policy: allowedContractIds without the SAC and allowedOperations without invokeHostFunction are 403 POLICY_VIOLATION", async () => {
    const [from, to] = [await fund(), await fund()];
    const { b64 } = await signedTransfer(from, to, 1_000_000n);
    const before = await relayState();
    const from0 = balance(from.publicKey());

    const contracts = await r.project({ policy: { allowedContractIds: [TEST_CONTRACT_ID] } });
    const c = await sponsorOp(b64, "testnet", { "x-api-key": contracts.testKey });
    expectError(c, 403, "POLICY_VIOLATION");
    expect(c.body.error.details).toEqual({
      rule: "allow.contracts",
      value: sacId(),
      operation: 0,
      allowed: [TEST_CONTRACT_ID],
      allowedCount: 1,
    });

    const ops = await r.project({ policy: { allowedOperations: ["payment"] } });
    const o = await sponsorOp(b64, "testnet", { "x-api-key": ops.testKey });
    expectError(o, 403, "POLICY_VIOLATION");
    expect(o.body.error.details.rule).toBe("allowedOperations");
    expect(o.body.error.details.operation).toBe("invokeHostFunction");

    expect(await relayState()).toEqual(before);
    expect(balance(from.publicKey())).toBe(from0);

    // a policy allowing the SAC and invokeHostFunction sponsors it
    const ok = await r.project({
      policy: { allowedContractIds: [sacId()], allowedOperations: ["invokeHostFunction"] },
    });
    expectSuccessBody(await sponsorOp(b64, "testnet", { "x-api-key": ok.testKey }));
    expect(balance(from.publicKey())).toBe(from0 - 1_000_000n);
  });
});

// ---- one submission per operation ---------------------------------------------------------------

describe("the same operation is one submission", () => {
  test("sent twice in a row: the same answer, the transfer and the fee once", async () => {
    const [from, to] = [await fund(), await fund()];
    const amount = 3_000_000n;
    const { b64 } = await signedTransfer(from, to, amount);
    const [from0, to0] = [balance(from.publicKey()), balance(to.publicKey())];
    const before = await relayState();

    const first = await sponsorOp(b64);
    expectSuccessBody(first);
    const second = await sponsorOp(b64);
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);

    expect(balance(from.publicKey())).toBe(from0 - amount);
    expect(balance(to.publicKey())).toBe(to0 + amount);
    const after = await relayState();
    const spent = Object.keys(before).reduce((s, pk) => s + before[pk]!.balance - after[pk]!.balance, 0n);
    expect(spent).toBe(BigInt(first.body.feePaid));
    const seqs = Object.keys(before).reduce((s, pk) => s + after[pk]!.seq - before[pk]!.seq, 0n);
    expect(seqs).toBe(1n);
  });

  test("on mainnet with a key: a resend gets the recorded answer and is charged nothing more", async () => {
    const p = await r.project({ credits: 50_000_000n });
    const [from, to] = await Promise.all([fund("mainnet"), fund("mainnet")]);
    const { b64 } = await signedTransfer(from, to, 2_000_000n, "mainnet");
    const from0 = balance(from.publicKey(), "mainnet");
    const first = await sponsorOp(b64, "mainnet", { "x-api-key": p.liveKey });
    expectSuccessBody(first);
    const again = await sponsorOp(b64, "mainnet", { "x-api-key": p.liveKey });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(balance(from.publicKey(), "mainnet")).toBe(from0 - 2_000_000n);
    const view = (await r.admin("GET", `/projects/${p.id}`)).body;
    expect(BigInt(view.creditBalance)).toBe(50_000_000n - BigInt(first.body.feePaid));
  });

  test("with the same X-Idempotency-Key: the stored answer is replayed", async () => {
    const [from, to] = [await fund(), await fund()];
    const { b64 } = await signedTransfer(from, to, 1_000_000n);
    const from0 = balance(from.publicKey());
    const key = { "x-idempotency-key": crypto.randomUUID() };
    const first = await sponsorOp(b64, "testnet", key);
    expectSuccessBody(first);
    const again = await sponsorOp(b64, "testnet", key);
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    expect(balance(from.publicKey())).toBe(from0 - 1_000_000n);
  });

  test("sent concurrently: every request gets the one outcome", async () => {
    const [from, to] = [await fund(), await fund()];
    const amount = 4_000_000n;
    const { b64 } = await signedTransfer(from, to, amount);
    const [from0, to0] = [balance(from.publicKey()), balance(to.publicKey())];
    const before = await relayState();

    const answers = await Promise.all(Array.from({ length: 5 }, () => sponsorOp(b64)));
    expectSuccessBody(answers[0]!);
    for (const a of answers) {
      expect(a.status).toBe(200);
      expect(a.body).toEqual(answers[0]!.body);
    }
    expect(balance(from.publicKey())).toBe(from0 - amount);
    expect(balance(to.publicKey())).toBe(to0 + amount);
    const after = await relayState();
    const spent = Object.keys(before).reduce((s, pk) => s + before[pk]!.balance - after[pk]!.balance, 0n);
    expect(spent).toBe(BigInt(answers[0]!.body.feePaid));
    const seqs = Object.keys(before).reduce((s, pk) => s + after[pk]!.seq - before[pk]!.seq, 0n);
    expect(seqs).toBe(1n);
  });
});
