/**
 * Envelopes as bytes: what the relay sends is base64 XDR and a hash, so the fee-bump it signs is
 * written around the client's inner envelope bytes (copied, not decoded and encoded again), hashed
 * and signed natively. Layouts (Stellar-transaction.x):
 * - TransactionEnvelope: `int32 type | body`; a V1 body is `Transaction | DecoratedSignature<20>`;
 *   a V0 body's transaction is a V1 transaction without the muxed-account type word (and the
 *   optional time bounds encode exactly as Preconditions NONE / TIME);
 * - FeeBumpTransaction: `MuxedAccount feeSource | int64 fee | int32 2 | TransactionV1Envelope | int32 ext`;
 * - a hash is sha256(networkId | int32 envelopeType | transaction).
 */
import { createPrivateKey, sign, type KeyObject } from "node:crypto";
import type { FeeBumpTransaction, Keypair, Transaction } from "@stellar/stellar-sdk";
import { envelopeXdr, networkId, sha256, txHash, type DecoratedSignatureW, type EnvelopeW } from "./xdr.ts";

/** A signed envelope as the network takes it. */
export interface Signed {
  xdr: string;
  hash: Buffer;
}

/** The inner transaction of a client's envelope, as a fee-bump carries it. */
export interface InnerBytes {
  /** `int32 2 | TransactionV1Envelope`: the fee-bump's innerTx union, verbatim. */
  envelope: Uint8Array;
  /** The V1 Transaction (what its hash covers). */
  tx: Uint8Array;
}

const TYPE_TX_V0 = 0;
const TYPE_TX = 2;
const TYPE_TX_FEE_BUMP = 5;
const KEY_TYPE_MUXED_ED25519 = 0x100;

/** An SDK transaction the relay built and signed, as bytes to send (encoded and hashed once). */
export const signedOf = (tx: Transaction | FeeBumpTransaction): Signed => ({
  xdr: envelopeXdr(tx),
  hash: txHash(tx),
});

const pad4 = (n: number) => (n + 3) & ~3;
/** Bytes of a DecoratedSignature<20> array. */
const signaturesLength = (sigs: DecoratedSignatureW[]) => sigs.reduce((n, s) => n + 8 + pad4(s.signature.length), 4);

const word = (n: number) => {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setInt32(0, n);
  return b;
};

/** The inner V1 transaction of a decoded envelope `raw` (a V0 one converted as the network does). */
export function innerBytes(raw: Uint8Array, wire: EnvelopeW): InnerBytes {
  if (wire.type === TYPE_TX) {
    return { envelope: raw, tx: raw.subarray(4, raw.length - signaturesLength(wire.v1.signatures)) };
  }
  if (wire.type === TYPE_TX_V0) {
    const v0tx = raw.subarray(4, raw.length - signaturesLength(wire.v0.signatures));
    const tx = Buffer.concat([word(0), v0tx]);
    return { envelope: Buffer.concat([word(TYPE_TX), tx, raw.subarray(4 + v0tx.length)]), tx };
  }
  // a client's fee-bump: the inner union sits between the fee and the ext word
  const fb = wire.feeBump;
  const start = 4 + (fb.tx.feeSource.type === KEY_TYPE_MUXED_ED25519 ? 44 : 36) + 8;
  const end = raw.length - signaturesLength(fb.signatures) - 4;
  const envelope = raw.subarray(start, end);
  return { envelope, tx: envelope.subarray(4, envelope.length - signaturesLength(fb.tx.innerTx.v1.signatures)) };
}

const ids = new Map<string, Uint8Array>();
const idOf = (passphrase: string) => {
  let id = ids.get(passphrase);
  if (!id) ids.set(passphrase, (id = networkId(passphrase)));
  return id;
};

/** The hash of a V1 transaction's bytes. */
export const innerHashOf = (tx: Uint8Array, passphrase: string): Buffer =>
  Buffer.from(sha256(idOf(passphrase), word(TYPE_TX), tx));

const PKCS8_ED25519_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");
const keys = new WeakMap<Keypair, SigningKey>();

/** How a keypair signs a hash, its signature hint and raw public key. */
export interface SigningKey {
  sign(hash: Buffer): Buffer;
  hint: Buffer;
  raw: Buffer;
}

/**
 * A keypair's signing key (made once per keypair): the platform's native ed25519 over its seed, or,
 * for a key whose seed the relay does not hold (a PKCS#11 token's, token-keypair.ts), its own `sign`.
 */
export function signingKey(kp: Keypair): SigningKey {
  let k = keys.get(kp);
  if (!k) {
    const hint = Buffer.from(kp.signatureHint());
    const raw = Buffer.from(kp.rawPublicKey());
    if (hasSeed(kp)) {
      const der = Buffer.concat([PKCS8_ED25519_PREFIX, kp.rawSecretKey()]);
      const key: KeyObject = createPrivateKey({ key: der, format: "der", type: "pkcs8" });
      k = { sign: (hash) => sign(null, hash, key), hint, raw };
    } else k = { sign: (hash) => Buffer.from(kp.sign(hash)), hint, raw };
    keys.set(kp, k);
  }
  return k;
}

/** Whether the relay holds the keypair's seed (a token's key has none). */
function hasSeed(kp: Keypair): boolean {
  try {
    return kp.rawSecretKey().length === 32;
  } catch {
    return false;
  }
}

/** A fee-bump of `inner` paying `fee` in total, fee source and signer `sponsor`. */
export function feeBumpBytes(inner: InnerBytes, sponsor: Keypair, fee: bigint, passphrase: string): Signed {
  const k = signingKey(sponsor);
  const n = inner.envelope.length;
  // envelope type | feeSource (type + key) | fee | inner | ext | 1 signature (hint, length, 64 bytes)
  const out = Buffer.allocUnsafe(4 + 36 + 8 + n + 4 + 4 + 4 + 4 + 64);
  out.writeInt32BE(TYPE_TX_FEE_BUMP, 0);
  out.writeInt32BE(0, 4);
  k.raw.copy(out, 8);
  out.writeBigInt64BE(fee, 40);
  out.set(inner.envelope, 48);
  out.writeInt32BE(0, 48 + n);
  const txEnd = 52 + n;
  const hash = Buffer.from(sha256(idOf(passphrase), out.subarray(0, txEnd)));
  out.writeUInt32BE(1, txEnd);
  k.hint.copy(out, txEnd + 4);
  out.writeUInt32BE(64, txEnd + 8);
  k.sign(hash).copy(out, txEnd + 12);
  return { xdr: out.toString("base64"), hash };
}
