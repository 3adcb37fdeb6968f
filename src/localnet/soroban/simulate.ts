/**
 * simulateTransaction: runs the operation on a scratch copy of the ledger, records the footprint,
 * resources and authorization, and prices it with the network's resource fee formula and the
 * simulator's default adjustments.
 */
import {
  X,
  Op,
  toB64,
  muxedToAddress,
  type ScValW,
  type SorobanAuthW,
  type SorobanDataW,
  type LedgerKeyW,
  type TxW,
} from "../../stellar/xdr.ts";
import { Overlay, type StateReader } from "../state.ts";
import type { InnerTx } from "../frame.ts";
import { Host, HostError } from "./host.ts";
import { invokeHostFunction } from "./invoke.ts";
import { refundableConsumed } from "./apply.ts";
import {
  computeResourceFee,
  adjustInstructions,
  adjustTxSize,
  adjustRefundableFee,
  CURRENT_SOROBAN_SETTINGS,
} from "./fees.ts";
import { declaredResources } from "./footprint.ts";

export interface SimulateOptions {
  authMode?: "enforce" | "record" | "record_allow_nonroot";
  useUpgradedAuth?: boolean;
  instructionLeeway?: number;
}

export interface SimulationContext {
  state: StateReader;
  ledgerSeq: number; // the next ledger
  latestLedger: number;
  networkId: Uint8Array;
  passphrase: string;
  baseReserve: number;
}

/** The RPC result object of simulateTransaction (without latestLedger). */
export type SimulationResult =
  | { error: string; events?: string[] }
  | { transactionData: string; minResourceFee: string; events: string[]; results?: { auth: string[]; xdr: string }[] };

function priced(data: SorobanDataW, txSize: number, refundableExtra: bigint): bigint {
  const { nonRefundable, refundable } = computeResourceFee(declaredResources(data, txSize));
  return nonRefundable + adjustRefundableFee(refundable + refundableExtra);
}

/** Size of the transaction's envelope with `data` and `auth` in place and one signature. */
function envelopeSize(tx: TxW, data: SorobanDataW, auth: SorobanAuthW[] | null): number {
  const ops =
    auth === null
      ? tx.operations
      : tx.operations.map((o) =>
          o.body.type === Op.invokeHostFunction
            ? { ...o, body: { ...o.body, invokeHostFunctionOp: { ...o.body.invokeHostFunctionOp, auth } } }
            : o,
        );
  const withData = { ...tx, operations: ops, ext: { v: 1, sorobanData: data } } as TxW;
  return 4 + X.tx.encode(withData).length + 4 + 72;
}

export function simulate(inner: InnerTx, ctx: SimulationContext, opts: SimulateOptions): SimulationResult {
  if (inner.ops.length !== 1) return { error: "Transaction contains more than one operation" };
  if (inner.tx.memo.type !== 0)
    return { error: "Transaction contains a memo. Soroban transactions do not support memos." };
  const op = inner.ops[0];
  const type = op.body.type;
  if (type === Op.extendFootprintTtl || type === Op.restoreFootprint) {
    if (!inner.soroban)
      return {
        error:
          "To perform a SimulateTransaction for ExtendFootprintTtl or RestoreFootprint operations, SorobanTransactionData must be provided",
      };
    const data = { ...inner.soroban, resourceFee: 0n };
    const fee = priced(data, adjustTxSize(envelopeSize(inner.tx, data, null)), 0n);
    return {
      transactionData: toB64(X.sorobanData.encode({ ...data, resourceFee: fee })),
      minResourceFee: fee.toString(),
      events: [],
    };
  }
  if (type !== Op.invokeHostFunction)
    return {
      error: `Unsupported operation type: only invokeHostFunction, extendFootprintTtl and restoreFootprint can be simulated`,
    };
  const invoke = op.body.invokeHostFunctionOp;
  const source = op.sourceAccount ? muxedToAddress(op.sourceAccount) : inner.source;
  const enforce = opts.authMode === "enforce" || (opts.authMode === undefined && invoke.auth.length > 0);
  const host = new Host({
    state: new Overlay(ctx.state),
    ledgerSeq: ctx.ledgerSeq,
    networkId: ctx.networkId,
    baseReserve: ctx.baseReserve,
    source,
    mode: enforce ? "enforce" : "record",
    auth: invoke.auth,
    useUpgradedAuth: opts.useUpgradedAuth ?? false,
    maxEntryTtl: CURRENT_SOROBAN_SETTINGS.maxEntryTtl,
  });
  let ret: ScValW;
  try {
    ret = invokeHostFunction(host, invoke.hostFunction, ctx.passphrase);
  } catch (e) {
    if (!(e instanceof HostError)) throw e;
    const events = host.diagnostics.map((d) =>
      toB64(X.diagnosticEvent.encode({ ...d, inSuccessfulContractCall: false })),
    );
    return { error: `host invocation failed\n\nCaused by:\n    ${e.message}`, events };
  }
  const keys = (m: Map<string, LedgerKeyW>) => [...m.values()];
  const readOnly = keys(host.readOnly),
    readWrite = keys(host.readWrite);
  const instructions = adjustInstructions(host.instructions + (opts.instructionLeeway ?? 0));
  const data: SorobanDataW = {
    ext: { v: 0 },
    resources: {
      footprint: { readOnly, readWrite },
      instructions,
      diskReadBytes: host.diskReadBytes,
      writeBytes: host.writeBytes,
    },
    resourceFee: 0n,
  } as SorobanDataW;
  const auth = enforce ? invoke.auth : host.recordedAuth;
  const txSize = adjustTxSize(envelopeSize(inner.tx, data, auth));
  const fee = priced(data, txSize, refundableConsumed(host.events, ret, host.createdEntries, ctx.ledgerSeq));
  return {
    transactionData: toB64(X.sorobanData.encode({ ...data, resourceFee: fee })),
    minResourceFee: fee.toString(),
    events: host.diagnostics.map((d) => toB64(X.diagnosticEvent.encode(d))),
    results: [{ auth: auth.map((a) => toB64(X.sorobanAuth.encode(a))), xdr: toB64(X.scVal.encode(ret)) }],
  };
}
