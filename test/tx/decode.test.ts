/**
 * decodeTransaction (src/features/tx/decode.ts) alone: what the relay refuses itself (VALIDATION_ERROR with
 * details.reason) before anything reaches the network, and what it reads from a transaction it
 * accepts: the inner transaction of a fee-bump, its hash on the given network, its operations,
 * invoked contracts and Soroban resource fee. No relay, no network.
 */
import { describe, expect, test } from "bun:test";
import {
  Account,
  Asset,
  Contract,
  Keypair,
  Networks,
  Operation,
  SorobanDataBuilder,
  TransactionBuilder,
  nativeToScVal,
  xdr,
  type Transaction,
} from "@stellar/stellar-sdk";
import { RelayError } from "../../src/kernel/errors.ts";
import { decodeTransaction, MAX_OPS_PER_TX, sdkInner } from "../../src/features/tx/decode.ts";
import { hex } from "../support/localnet.ts";

const PASSPHRASE = Networks.TESTNET;
const user = Keypair.random();
const other = Keypair.random();
const destination = Keypair.random().publicKey();
const CONTRACT = new Contract(Asset.native().contractId(PASSPHRASE));
const SIGNED = { signatures: true, sorobanData: true };
const UNSIGNED = { signatures: false, sorobanData: false };

const payment = () => Operation.payment({ destination, asset: Asset.native(), amount: "1" });
const call = () => CONTRACT.call("transfer", nativeToScVal(1, { type: "i128" }));

/** A transaction from `user` with `ops`, signed unless `sign` is false. */
function tx(ops: xdr.Operation[], opts: { sign?: boolean; edit?: (b: TransactionBuilder) => void } = {}): Transaction {
  const b = new TransactionBuilder(new Account(user.publicKey(), "41"), { fee: "100", networkPassphrase: PASSPHRASE });
  for (const op of ops) b.addOperation(op);
  opts.edit?.(b);
  const t = b.setTimeout(60).build();
  if (opts.sign !== false) t.sign(user);
  return t;
}
const b64 = (t: { toEnvelope(): xdr.TransactionEnvelope }) => t.toEnvelope().toXDR("base64");

/** The VALIDATION_ERROR decodeTransaction throws for `transaction`. */
function refusal(transaction: string, require = SIGNED): RelayError {
  try {
    decodeTransaction(transaction, PASSPHRASE, require);
  } catch (e) {
    expect(e).toBeInstanceOf(RelayError);
    const err = e as RelayError;
    expect(err.code).toBe("VALIDATION_ERROR");
    expect(err.details?.field).toBe("transaction");
    // the reason is a code (src/kernel/reasons.ts); the message is the sentence
    expect(err.details?.reason).toMatch(/^[a-z][a-z0-9]*(_[a-z0-9]+)*$/);
    expect(err.message).toMatch(/^transaction: [a-zA-Z]+ /);
    return err;
  }
  throw new Error("decoded, not refused");
}

describe("a valid transaction", () => {
  test("a signed payment: its hash on the network, one classic operation, no contract, no resource fee", () => {
    const t = tx([payment()]);
    const d = decodeTransaction(b64(t), PASSPHRASE, SIGNED);
    expect(d.innerHash).toBe(hex(t));
    expect(sdkInner(d, PASSPHRASE).hash()).toEqual(t.hash());
    expect(sdkInner(d, PASSPHRASE).signatures).toHaveLength(1);
    expect(d).toMatchObject({
      wasFeeBump: false,
      isSoroban: false,
      operations: 1,
      operationTypes: ["payment"],
      contractIds: [],
      resourceFee: 0n,
    });
  });

  test("operation types by their XDR names, in order", () => {
    const ops = [
      payment(),
      Operation.createAccount({ destination, startingBalance: "2" }),
      Operation.manageData({ name: "k", value: "v" }),
      Operation.bumpSequence({ bumpTo: "100" }),
    ];
    expect(decodeTransaction(b64(tx(ops)), PASSPHRASE, SIGNED).operationTypes).toEqual([
      "payment",
      "createAccount",
      "manageData",
      "bumpSequence",
    ]);
  });

  test("a fee-bump is unwrapped: the inner transaction, its hash and signatures; the client's outer one is dropped", () => {
    const inner = tx([payment()]);
    const fb = TransactionBuilder.buildFeeBumpTransaction(other, "500", inner, PASSPHRASE);
    fb.sign(other);
    const d = decodeTransaction(b64(fb), PASSPHRASE, SIGNED);
    expect(d.wasFeeBump).toBe(true);
    expect(d.innerHash).toBe(hex(inner));
    expect(d.innerHash).not.toBe(hex(fb));
    expect(sdkInner(d, PASSPHRASE).source).toBe(user.publicKey());
    expect(sdkInner(d, PASSPHRASE).signatures.map((s) => s.signature)).toEqual(
      inner.signatures.map((s) => s.signature),
    );
    expect(d.operationTypes).toEqual(["payment"]);
  });

  test("the signatures required are the inner transaction's: a signed fee-bump around an unsigned one is refused", () => {
    const fb = TransactionBuilder.buildFeeBumpTransaction(other, "500", tx([payment()], { sign: false }), PASSPHRASE);
    fb.sign(other);
    expect(refusal(b64(fb)).details?.reason).toBe("no_signatures");
    expect(decodeTransaction(b64(fb), PASSPHRASE, UNSIGNED).wasFeeBump).toBe(true);
  });

  test("a V0 envelope is accepted and hashed as the V1 transaction it is", () => {
    const t = tx([payment()]);
    const { v1 } = t.toEnvelope() as xdr.TransactionEnvelopeTx;
    const raw = v1.tx;
    const v0 = xdr.TransactionEnvelope.envelopeTypeTxV0(
      new xdr.TransactionV0Envelope({
        tx: new xdr.TransactionV0({
          sourceAccountEd25519: user.rawPublicKey(),
          fee: raw.fee,
          seqNum: raw.seqNum,
          timeBounds: (raw.cond as unknown as { timeBounds: xdr.TimeBounds }).timeBounds,
          memo: raw.memo,
          operations: raw.operations,
          ext: xdr.TransactionV0Ext.v0(),
        }),
        signatures: v1.signatures,
      }),
    );
    const d = decodeTransaction(v0.toXDR("base64"), PASSPHRASE, SIGNED);
    expect(d.innerHash).toBe(hex(t));
    expect(d.operationTypes).toEqual(["payment"]);
  });

  test("the passphrase names the network: another one gives the transaction's hash on that network (signatures are the network's to check)", () => {
    const t = tx([payment()]);
    const elsewhere = decodeTransaction(b64(t), Networks.PUBLIC, SIGNED);
    expect(elsewhere.innerHash).not.toBe(hex(t));
    expect(elsewhere.innerHash).toBe(hex(TransactionBuilder.fromXDR(b64(t), Networks.PUBLIC) as Transaction));
    expect(decodeTransaction(b64(t), PASSPHRASE, SIGNED).innerHash).toBe(hex(t));
  });

  test(`${MAX_OPS_PER_TX} operations, the protocol's most, are accepted`, () => {
    const ops = Array.from({ length: MAX_OPS_PER_TX }, payment);
    expect(decodeTransaction(b64(tx(ops)), PASSPHRASE, SIGNED).operations).toBe(MAX_OPS_PER_TX);
  });
});

describe("Soroban transactions", () => {
  test("a contract call: the invoked contract; the declared resource fee once it carries sorobanData", () => {
    const data = new SorobanDataBuilder().setResourceFee(12_345).build();
    const prepared = tx([call()], { edit: (b) => b.setSorobanData(data) });
    const d = decodeTransaction(b64(prepared), PASSPHRASE, SIGNED);
    expect(d).toMatchObject({
      isSoroban: true,
      operations: 1,
      operationTypes: ["invokeHostFunction"],
      contractIds: [CONTRACT.contractId()],
      resourceFee: 12_345n,
    });
  });

  test("without sorobanData: refused for sponsoring, decoded for estimates and simulations", () => {
    const unprepared = tx([call()], { sign: false });
    expect(refusal(b64(unprepared), { signatures: false, sorobanData: true }).details?.reason).toBe(
      "missing_soroban_data",
    );
    const d = decodeTransaction(b64(unprepared), PASSPHRASE, UNSIGNED);
    expect(d).toMatchObject({ isSoroban: true, contractIds: [CONTRACT.contractId()], resourceFee: 0n });
  });

  test("a host function that invokes no contract (a WASM upload) has a null contract id", () => {
    const upload = Operation.uploadContractWasm({ wasm: Buffer.from([0, 97, 115, 109]) });
    const d = decodeTransaction(b64(tx([upload], { sign: false })), PASSPHRASE, UNSIGNED);
    expect(d.contractIds).toEqual([null]);
    expect(d.operationTypes).toEqual(["invokeHostFunction"]);
  });

  test("a Soroban operation with another operation is refused", () => {
    for (const ops of [
      [call(), payment()],
      [payment(), call()],
      [call(), call()],
    ])
      expect(refusal(b64(tx(ops)), SIGNED).details?.reason).toBe("soroban_single_operation");
  });
});

describe("refused", () => {
  test("not base64", () => {
    for (const s of ["", "%%%", "abc", "AAAA=", "AA AA", `${b64(tx([payment()]))}\n`])
      expect(refusal(s).details?.reason).toBe("not_base64");
  });

  test("base64 that is not a TransactionEnvelope", () => {
    for (const s of [
      "AAAA",
      Buffer.from("not an envelope at all!").toString("base64"),
      b64(tx([payment()])).slice(0, 40),
    ])
      expect(refusal(s).details?.reason).toBe("not_an_envelope");
  });

  test("trailing bytes after the envelope", () => {
    const raw = tx([payment()]).toEnvelope().toXDR();
    const trailing = Buffer.concat([raw, Buffer.alloc(4)]).toString("base64");
    expect(refusal(trailing).details?.reason).toBe("trailing_bytes");
  });

  test("unsigned, when signatures are required", () => {
    const unsigned = b64(tx([payment()], { sign: false }));
    expect(refusal(unsigned).details?.reason).toBe("no_signatures");
    expect(decodeTransaction(unsigned, PASSPHRASE, UNSIGNED).operations).toBe(1);
  });

  test("no operations", () => {
    const env = tx([payment()]).toEnvelope() as xdr.TransactionEnvelopeTx;
    (env.v1.tx as { operations: xdr.Operation[] }).operations = [];
    expect(refusal(env.toXDR("base64"), UNSIGNED).details?.reason).toBe("no_operations");
  });

  test(`more than ${MAX_OPS_PER_TX} operations: the XDR itself allows no more, so it is not a TransactionEnvelope`, () => {
    // the SDK will not encode 101 operations: the bytes of n payments, with one more appended and the count patched
    const oneMore = (n: number) => {
      const raw = Buffer.from(
        tx(Array.from({ length: n }, payment), { sign: false })
          .toEnvelope()
          .toXDR(),
      );
      const COUNT = 76; // envelope type, source account, fee, sequence number, time bounds, memo: then the count
      expect(raw.readUInt32BE(COUNT)).toBe(n);
      const opsEnd = raw.length - 8; // the transaction's ext and the (empty) signature list follow the operations
      const one = (opsEnd - COUNT - 4) / n;
      const more = Buffer.concat([raw.subarray(0, COUNT + 4 + one), raw.subarray(COUNT + 4)]);
      more.writeUInt32BE(n + 1, COUNT);
      return more.toString("base64");
    };
    expect(decodeTransaction(oneMore(MAX_OPS_PER_TX - 1), PASSPHRASE, UNSIGNED).operations).toBe(MAX_OPS_PER_TX);
    expect(refusal(oneMore(MAX_OPS_PER_TX), UNSIGNED).details?.reason).toBe("not_an_envelope");
  });
});
