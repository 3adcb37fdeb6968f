/**
 * Decoding and structural validation of a client's transaction: what the relay rejects itself
 * (VALIDATION_ERROR with details.reason) before anything reaches the network. A fee-bump envelope
 * is unwrapped: the relay re-wraps its inner transaction and drops the client's outer signature.
 */
import { TransactionBuilder, type Transaction } from "@stellar/stellar-sdk";
import {
  BASE64,
  X,
  Op,
  SOROBAN_OPS,
  fromB64,
  invokedContract,
  muxedToAddress,
  rawToAddress,
  toB64,
  type EnvelopeW,
} from "../../stellar/xdr.ts";
import { innerBytes, innerHashOf, type InnerBytes } from "../../stellar/envelope.ts";
import { validationError } from "../../kernel/errors.ts";
import type { Reason } from "../../kernel/reasons.ts";
import { MAX_OPS_PER_TX } from "../../stellar/protocol.ts";
import type { ValidUntil } from "../../network/ledger-watcher.ts";

export { MAX_OPS_PER_TX };

export interface DecodedTx {
  /** The transaction the relay sponsors (the inner one of a client fee-bump), as bytes. */
  inner: InnerBytes;
  /** The inner transaction's fee (its inclusion bid plus the Soroban resource fee). */
  innerFee: bigint;
  innerHash: string;
  wasFeeBump: boolean;
  isSoroban: boolean;
  operations: number;
  /** Operation types by their XDR names (`payment`, `invokeHostFunction`...), in order. */
  operationTypes: string[];
  /** Contracts invoked by invokeHostFunction operations; null for a host function that invokes none (upload, create). */
  contractIds: (string | null)[];
  /** The declared Soroban resource fee (0 for classic). */
  resourceFee: bigint;
  /** Its preconditions' upper bounds (0: none): past them no ledger can include it. */
  validUntil: ValidUntil;
  /**
   * Its place in its source account's order (G-address and sequence number); null when a minSeqNum
   * precondition lets it skip numbers (the network then takes it out of order); `bytes`, the size it came
   * in (base64), which a held transaction counts against its payer's limit; `transaction`, that base64
   * (a held transaction's row keeps it, to be sent after a crash).
   */
  order: { account: string; seq: bigint; bytes: number; transaction: string } | null;
  /** The inner transaction's source account (G..., a muxed one's account): its end user. */
  source: string;
}

const OP_NAMES: Record<number, string> = Object.fromEntries(Object.entries(Op).map(([name, n]) => [n, name]));

const invalid = (reason: Reason, message: string) =>
  validationError(`transaction: ${message}`, { field: "transaction", reason });

/**
 * Decodes `b64`. Sponsoring requires signatures and Soroban data; estimates and simulations do not
 * (clients estimate before signing, and simulate to obtain the Soroban data).
 */
export function decodeTransaction(
  b64: string,
  passphrase: string,
  require: { signatures: boolean; sorobanData: boolean },
): DecodedTx {
  if (!b64 || !BASE64.test(b64)) throw invalid("not_base64", "not base64");
  let wire: EnvelopeW;
  const raw = fromB64(b64);
  try {
    wire = X.envelope.decode(raw);
  } catch (e) {
    throw /trailing/i.test(String(e))
      ? invalid("trailing_bytes", "trailing bytes after the TransactionEnvelope")
      : invalid("not_an_envelope", "not a TransactionEnvelope");
  }
  const innerTx = wire.type === 5 ? wire.feeBump.tx.innerTx.v1 : wire.type === 2 ? wire.v1 : wire.v0;
  const ops = innerTx.tx.operations;
  if (ops.length === 0) throw invalid("no_operations", "the transaction has no operations");
  if (ops.length > MAX_OPS_PER_TX)
    throw invalid(
      "too_many_operations",
      `the transaction has ${ops.length} operations; the protocol allows ${MAX_OPS_PER_TX}`,
    );
  if (require.signatures && innerTx.signatures.length === 0)
    throw invalid("no_signatures", "the transaction has no signatures");
  const soroban = ops.filter((o) => SOROBAN_OPS.has(o.body.type)).length;
  if (soroban && ops.length !== 1)
    throw invalid("soroban_single_operation", "a Soroban transaction must have exactly one operation");
  const data = wire.type === 5 ? wire.feeBump.tx.innerTx.v1.tx.ext : wire.type === 2 ? wire.v1.tx.ext : null;
  if (require.sorobanData && soroban && data?.v !== 1)
    throw invalid(
      "missing_soroban_data",
      "a Soroban transaction must carry sorobanData (simulate and assemble it first)",
    );
  const inner = innerBytes(raw, wire);
  // the source's address, encoded once (the account's order and the policy's end user both name it)
  const source =
    wire.type === 0
      ? rawToAddress(wire.v0.tx.sourceAccountEd25519)
      : muxedToAddress((wire.type === 5 ? wire.feeBump.tx.innerTx.v1 : wire.v1).tx.sourceAccount);
  return {
    inner,
    innerFee: BigInt(innerTx.tx.fee),
    innerHash: innerHashOf(inner.tx, passphrase).toString("hex"),
    wasFeeBump: wire.type === 5,
    isSoroban: soroban > 0,
    operations: ops.length,
    operationTypes: ops.map((o) => OP_NAMES[o.body.type] ?? `operation${o.body.type}`),
    contractIds: ops.flatMap((o) =>
      o.body.type === Op.invokeHostFunction ? [invokedContract(o.body.invokeHostFunctionOp.hostFunction)] : [],
    ),
    resourceFee: data && data.v === 1 ? data.sorobanData.resourceFee : 0n,
    validUntil: upperBounds(wire),
    order: orderOf(wire, b64, source),
    source,
  };
}

/** The inner transaction's source account and sequence number, unless a minSeqNum lets it skip numbers. */
function orderOf(wire: EnvelopeW, transaction: string, account: string): DecodedTx["order"] {
  const bytes = transaction.length;
  if (wire.type === 0) return { account, seq: wire.v0.tx.seqNum, bytes, transaction };
  const tx = (wire.type === 5 ? wire.feeBump.tx.innerTx.v1 : wire.v1).tx;
  if (tx.cond.type === 2 && tx.cond.v2.minSeqNum !== null && tx.cond.v2.minSeqNum !== undefined) return null;
  return { account, seq: tx.seqNum, bytes, transaction };
}

/** The inner transaction's maxTime and maxLedger (0: none). */
function upperBounds(wire: EnvelopeW): ValidUntil {
  if (wire.type === 0) return { maxTime: wire.v0.tx.timeBounds?.maxTime ?? 0n, maxLedger: 0 };
  const c = (wire.type === 5 ? wire.feeBump.tx.innerTx.v1 : wire.v1).tx.cond;
  const time = c.type === 1 ? c.timeBounds : c.type === 2 ? c.v2.timeBounds : null;
  return {
    maxTime: time?.maxTime ?? 0n,
    maxLedger: c.type === 2 ? (c.v2.ledgerBounds?.maxLedger ?? 0) : 0,
  };
}

/** The inner transaction as an SDK object (to simulate it). */
export const sdkInner = (d: DecodedTx, passphrase: string): Transaction =>
  TransactionBuilder.fromXDR(toB64(d.inner.envelope), passphrase) as Transaction;
