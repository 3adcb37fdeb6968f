/** Soroban-specific validity of a transaction (stellar-core checkSorobanResources / fee checks). */
import { Tx, type TxCode } from "../../stellar/xdr.ts";
import type { InnerTx } from "../frame.ts";
import { computeResourceFee, exceededLimit } from "./fees.ts";
import { declaredResources, keyId } from "./footprint.ts";

/** Why a Soroban transaction is invalid, or null when it is valid. `standalone`: not inside a fee-bump. */
export function sorobanValidity(inner: InnerTx, standalone: boolean): TxCode | null {
  const data = inner.soroban;
  if (!data) return Tx.malformed;
  if (inner.tx.memo.type !== 0 || inner.sourceIsMuxed || inner.ops.some((o) => o.sourceAccount?.type === 256))
    return Tx.sorobanInvalid;
  const fp = data.resources.footprint;
  const keys = [...fp.readOnly, ...fp.readWrite].map(keyId);
  if (new Set(keys).size !== keys.length) return Tx.sorobanInvalid;
  const declared = declaredResources(data, inner.envelopeSize);
  if (exceededLimit(declared, keys.length) !== null) return Tx.sorobanInvalid;
  const { nonRefundable, refundable } = computeResourceFee(declared);
  if (data.resourceFee < nonRefundable + refundable) return Tx.sorobanInvalid;
  if (standalone && data.resourceFee > inner.fee) return Tx.malformed;
  return null;
}
