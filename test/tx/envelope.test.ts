/**
 * The fee-bump the relay writes as bytes (src/stellar/envelope.ts) against the SDK's own
 * `buildFeeBumpTransaction` + `sign`: for random client transactions (V1, V0, a client's fee-bump
 * with a plain or a muxed fee source, classic or Soroban with a resource fee, one or more
 * signatures) the envelope, its hash, the inner hash and the signature are the SDK's, byte for byte.
 */
import { expect, test } from "bun:test";
import fc from "fast-check";
import {
  Account,
  Asset,
  Keypair,
  Memo,
  MuxedAccount,
  Networks,
  Operation,
  SorobanDataBuilder,
  TransactionBuilder,
  type FeeBumpTransaction,
  type Transaction,
} from "@stellar/stellar-sdk";
import { decodeTransaction } from "../../src/features/tx/decode.ts";
import { buildFeeBump, innerRate } from "../../src/features/tx/fee-bump.ts";
import { X, fromB64, toB64 } from "../../src/stellar/xdr.ts";

const PASSPHRASE = Networks.TESTNET;
const SIGNED = { signatures: true, sorobanData: false };
const sponsor = Keypair.random();
const signers = [Keypair.random(), Keypair.random(), Keypair.random()];

type Shape = "v1" | "v0" | "feeBump" | "feeBumpMuxed";

/** A client's signed transaction of `shape`, as base64, and its inner SDK transaction. */
function clientEnvelope(
  shape: Shape,
  o: { ops: number; fee: number; signers: number; resourceFee: number; memo: string; seq: bigint },
): { b64: string; inner: Transaction } {
  const source = signers[0]!;
  const b = new TransactionBuilder(new Account(source.publicKey(), o.seq.toString()), {
    fee: String(o.fee),
    networkPassphrase: PASSPHRASE,
    memo: o.memo ? Memo.text(o.memo) : undefined,
  });
  for (let i = 0; i < o.ops; i++)
    b.addOperation(Operation.payment({ destination: sponsor.publicKey(), asset: Asset.native(), amount: "1" }));
  if (o.resourceFee > 0) b.setSorobanData(new SorobanDataBuilder().setResourceFee(o.resourceFee).build());
  let inner = b.setTimeout(600).build();
  if (shape === "v0") {
    const w = X.envelope.decode(fromB64(inner.toEnvelope().toXDR("base64")));
    if (w.type !== 2 || w.v1.tx.sourceAccount.type !== 0 || w.v1.tx.cond.type !== 1)
      throw new Error("not a V1 payment");
    const { fee, seqNum, memo, operations } = w.v1.tx;
    const v0 = {
      sourceAccountEd25519: w.v1.tx.sourceAccount.ed25519,
      fee,
      seqNum,
      memo,
      operations,
      ext: { v: 0 as const },
    };
    const env = X.envelope.encode({
      type: 0,
      v0: { tx: { ...v0, timeBounds: w.v1.tx.cond.timeBounds }, signatures: [] },
    });
    inner = TransactionBuilder.fromXDR(toB64(env), PASSPHRASE) as Transaction;
  }
  for (const s of signers.slice(0, o.signers)) inner.sign(s);
  if (shape === "v1" || shape === "v0") return { b64: inner.toEnvelope().toXDR("base64"), inner };
  const payer =
    shape === "feeBumpMuxed" ? new MuxedAccount(new Account(signers[1]!.publicKey(), "0"), "7") : signers[1]!;
  const fb = TransactionBuilder.buildFeeBumpTransaction(
    shape === "feeBumpMuxed" ? (payer as MuxedAccount).accountId() : (payer as Keypair),
    String(o.fee + 10),
    inner,
    PASSPHRASE,
  );
  fb.sign(signers[1]!);
  return { b64: fb.toEnvelope().toXDR("base64"), inner };
}

test("a fee-bump written as bytes is the SDK's, envelope, hash and signature", () => {
  fc.assert(
    fc.property(
      fc.constantFrom<Shape>("v1", "v0", "feeBump", "feeBumpMuxed"),
      fc.record({
        ops: fc.integer({ min: 1, max: 5 }),
        fee: fc.integer({ min: 100, max: 100_000 }),
        signers: fc.integer({ min: 1, max: 3 }),
        resourceFee: fc.constantFrom(0, 0, 12_345),
        memo: fc.string({ maxLength: 28 }).filter((m) => Buffer.byteLength(m) <= 28),
        seq: fc.bigInt({ min: 1n, max: 2n ** 62n }),
        extra: fc.integer({ min: 0, max: 1000 }),
      }),
      (shape, o) => {
        const sorobanFee = shape === "v0" ? 0 : o.resourceFee; // a V0 transaction has no Soroban data
        const ops = sorobanFee ? 1 : o.ops;
        const { b64, inner } = clientEnvelope(shape, { ...o, ops, resourceFee: sorobanFee });
        const d = decodeTransaction(b64, PASSPHRASE, SIGNED);
        expect(d.innerHash).toBe(Buffer.from(inner.hash()).toString("hex"));
        const rate = innerRate(d) + BigInt(o.extra) + 100n;
        const ours = buildFeeBump(d, sponsor, rate, PASSPHRASE);
        const sdk = TransactionBuilder.buildFeeBumpTransaction(sponsor, rate.toString(), inner, PASSPHRASE);
        sdk.sign(sponsor);
        expect(ours.xdr).toBe(sdk.toEnvelope().toXDR("base64"));
        expect(ours.hash.toString("hex")).toBe(Buffer.from(sdk.hash()).toString("hex"));
        const parsed = TransactionBuilder.fromXDR(ours.xdr, PASSPHRASE) as FeeBumpTransaction;
        expect(parsed.fee).toBe((rate * BigInt(ops + 1) + BigInt(sorobanFee)).toString());
        expect(sponsor.verify(parsed.hash(), parsed.signatures[0]!.signature)).toBe(true);
      },
    ),
    { numRuns: 200 },
  );
});

test("a rate below the inner transaction's own is refused (a bug upstream, not a request error)", () => {
  const { b64 } = clientEnvelope("v1", { ops: 2, fee: 500, signers: 1, resourceFee: 0, memo: "", seq: 5n });
  const d = decodeTransaction(b64, PASSPHRASE, SIGNED);
  expect(innerRate(d)).toBe(500n);
  expect(() => buildFeeBump(d, sponsor, 499n, PASSPHRASE)).toThrow("below");
  expect(buildFeeBump(d, sponsor, 500n, PASSPHRASE).xdr).toBeString();
});
