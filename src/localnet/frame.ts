/**
 * A submitted transaction, decoded once: hashes, sources, fees and signatures of a V1 (or V0
 * converted to V1) transaction or of a fee-bump and its inner transaction.
 */
import {
  X,
  SOROBAN_OPS,
  sha256,
  toHex,
  muxedKey,
  muxedToAddress,
  type EnvelopeW,
  type TxW,
  type DecoratedSignatureW,
  type OperationW,
  type SorobanDataW,
  type FeeBumpTxW,
} from "../stellar/xdr.ts";

export interface InnerTx {
  tx: TxW;
  hash: Uint8Array;
  hashHex: string;
  source: string;
  /** The source's ed25519 key, raw. */
  sourceKey: Uint8Array;
  sourceIsMuxed: boolean;
  fee: bigint;
  seqNum: bigint;
  ops: OperationW[];
  signatures: DecoratedSignatureW[];
  soroban: SorobanDataW | null;
  isSoroban: boolean;
  resourceFee: bigint;
  /** XDR size of the inner transaction's own V1 envelope (Soroban's tx_size). */
  envelopeSize: number;
}

export interface Frame {
  isFeeBump: boolean;
  hash: Uint8Array;
  hashHex: string;
  inner: InnerTx;
  feeBump: FeeBumpTxW | null;
  /** Who pays: the fee-bump's fee source, or the inner source. */
  feeSource: string;
  /** Signatures on the outer envelope (the fee-bump's; same as inner for a plain transaction). */
  signatures: DecoratedSignatureW[];
  /** The full fee bid (fee-bump: its int64 fee). */
  fullFee: bigint;
  /** Operations counted for fees: inner ops, +1 for a fee-bump. */
  feeOps: number;
  inclusionFee: bigint;
  /** The envelope as submitted to the ledger (V0 converted to V1). */
  envelope: EnvelopeW;
  envelopeXdr: Uint8Array;
}

const ENVELOPE_TYPE_TX = 2;
const ENVELOPE_TYPE_TX_FEE_BUMP = 5;

function int32be(n: number): Uint8Array {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setInt32(0, n);
  return b;
}

function feeBumpHash(networkId: Uint8Array, fb: FeeBumpTxW): Uint8Array {
  return sha256(networkId, int32be(ENVELOPE_TYPE_TX_FEE_BUMP), X.feeBumpTx.encode(fb));
}

/** XDR size of a DecoratedSignature array: count, then hint (4) and var-opaque signature each. */
const signaturesSize = (sigs: DecoratedSignatureW[]): number =>
  sigs.reduce((n, s) => n + 8 + ((s.signature.length + 3) & ~3), 4);
const MUXED_SIZE = { 0: 36, 256: 44 } as const;

function innerOf(
  networkId: Uint8Array,
  tx: TxW,
  signatures: DecoratedSignatureW[],
  body: Uint8Array = X.tx.encode(tx),
): InnerTx {
  const hash = sha256(networkId, int32be(ENVELOPE_TYPE_TX), body);
  const soroban = tx.ext.v === 1 ? tx.ext.sorobanData : null;
  return {
    tx,
    hash,
    hashHex: toHex(hash),
    source: muxedToAddress(tx.sourceAccount),
    sourceKey: muxedKey(tx.sourceAccount),
    sourceIsMuxed: tx.sourceAccount.type !== 0,
    fee: BigInt(tx.fee),
    seqNum: tx.seqNum,
    ops: tx.operations,
    signatures,
    soroban,
    isSoroban: tx.operations.some((o) => SOROBAN_OPS.has(o.body.type)),
    resourceFee: soroban ? soroban.resourceFee : 0n,
    envelopeSize: 4 + body.length + 4 + 72 * signatures.length,
  };
}

/**
 * Converts a decoded envelope to a frame; V0 becomes V1 (same hash, same signatures). With the
 * envelope's own bytes (`raw`), the transaction bodies to hash are sliced out of them instead of
 * being encoded again: an envelope is its union tag, the transaction body, then the signatures.
 */
export function toFrame(networkId: Uint8Array, env: EnvelopeW, raw?: Uint8Array): Frame {
  if (env.type === 0) {
    const v0 = env.v0;
    const tx: TxW = {
      sourceAccount: { type: 0, ed25519: v0.tx.sourceAccountEd25519 },
      fee: v0.tx.fee,
      seqNum: v0.tx.seqNum,
      cond: v0.tx.timeBounds ? { type: 1, timeBounds: v0.tx.timeBounds } : { type: 0 },
      memo: v0.tx.memo,
      operations: v0.tx.operations,
      ext: { v: 0 },
    };
    return toFrame(networkId, { type: 2, v1: { tx, signatures: v0.signatures } });
  }
  if (env.type === 2) {
    const body = raw?.subarray(4, raw.length - signaturesSize(env.v1.signatures));
    const inner = innerOf(networkId, env.v1.tx, env.v1.signatures, body);
    const feeOps = Math.max(1, inner.ops.length);
    return {
      isFeeBump: false,
      hash: inner.hash,
      hashHex: inner.hashHex,
      inner,
      feeBump: null,
      feeSource: inner.source,
      signatures: inner.signatures,
      fullFee: inner.fee,
      feeOps,
      inclusionFee: inner.fee - inner.resourceFee,
      envelope: env,
      envelopeXdr: raw ?? X.envelope.encode(env),
    };
  }
  const fb = env.feeBump.tx;
  // fee-bump body: feeSource, int64 fee, inner tag (4), inner V1 envelope, ext (4)
  const outerEnd = raw ? raw.length - signaturesSize(env.feeBump.signatures) : 0;
  const innerStart = 4 + MUXED_SIZE[fb.feeSource.type] + 8 + 4;
  const innerBody = raw?.subarray(innerStart, outerEnd - 4 - signaturesSize(fb.innerTx.v1.signatures));
  const inner = innerOf(networkId, fb.innerTx.v1.tx, fb.innerTx.v1.signatures, innerBody);
  const hash = raw
    ? sha256(networkId, int32be(ENVELOPE_TYPE_TX_FEE_BUMP), raw.subarray(4, outerEnd))
    : feeBumpHash(networkId, fb);
  return {
    isFeeBump: true,
    hash,
    hashHex: toHex(hash),
    inner,
    feeBump: fb,
    feeSource: muxedToAddress(fb.feeSource),
    signatures: env.feeBump.signatures,
    fullFee: fb.fee,
    feeOps: inner.ops.length + 1,
    inclusionFee: fb.fee - inner.resourceFee,
    envelope: env,
    envelopeXdr: raw ?? X.envelope.encode(env),
  };
}

/** Decodes base64 envelope XDR strictly (no trailing bytes); throws on anything else. */
export function decodeEnvelope(bytes: Uint8Array): EnvelopeW {
  return X.envelope.decode(bytes);
}
