/** Applying a Soroban operation in a ledger: enforce the declared footprint, resources and fees. */
import {
  X,
  Op,
  type OperationW,
  type ScValW,
  type ContractEventW,
  type DiagnosticEventW,
  type OperationResultW,
} from "../../stellar/xdr.ts";
import { Overlay } from "../state.ts";
import { opInner } from "../results.ts";
import { invokeSuccessHash } from "../entries.ts";
import type { InnerTx } from "../frame.ts";
import { Host, HostError } from "./host.ts";
import { invokeHostFunction } from "./invoke.ts";
import { computeResourceFee, computeRentFee, CURRENT_SOROBAN_SETTINGS } from "./fees.ts";
import { declaredResources, keyId } from "./footprint.ts";

export interface SorobanContext {
  ledgerSeq: number;
  closeTime: bigint;
  networkId: Uint8Array;
  baseReserve: number;
  passphrase: string;
}

export interface SorobanApplyResult {
  success: boolean;
  result: OperationResultW;
  consumedRefundable: bigint;
  events: ContractEventW[];
  diagnostic: DiagnosticEventW[];
  returnValue: ScValW | null;
}

/** The refundable part of a declared resource fee: declared fee less the non-refundable fee. */
export function maxRefundable(inner: InnerTx): bigint {
  const d = inner.soroban!;
  return d.resourceFee - computeResourceFee(declaredResources(d, inner.envelopeSize)).nonRefundable;
}

/** Events fee (events plus return value) and rent of new entries. */
export function refundableConsumed(
  events: ContractEventW[],
  returnValue: ScValW | null,
  created: { size: number; persistent: boolean; liveUntil: number }[],
  ledgerSeq: number,
): bigint {
  const size =
    events.reduce((s, e) => s + X.contractEvent.encode(e).length, 0) +
    (returnValue ? X.scVal.encode(returnValue).length : 0);
  const rent = computeRentFee(
    created.map((c) => ({
      isPersistent: c.persistent,
      isCodeEntry: false,
      oldSizeBytes: 0,
      newSizeBytes: c.size,
      oldLiveUntilLedger: 0,
      newLiveUntilLedger: c.liveUntil,
    })),
    ledgerSeq,
  );
  return (
    computeResourceFee({
      instructions: 0,
      diskReadEntries: 0,
      writeEntries: 0,
      diskReadBytes: 0,
      writeBytes: 0,
      txSizeBytes: 0,
      contractEventsSizeBytes: size,
    }).refundable + rent
  );
}

export function applySorobanOp(
  o: Overlay,
  inner: InnerTx,
  op: OperationW,
  source: string,
  ctx: SorobanContext,
): SorobanApplyResult {
  const type = op.body.type;
  const none = { consumedRefundable: 0n, events: [], diagnostic: [], returnValue: null };
  if (type !== Op.invokeHostFunction) return { success: true, result: opInner(type, 0), ...none };
  const data = inner.soroban!;
  const fp = data.resources.footprint;
  const nested = new Overlay(o);
  const host = new Host({
    state: nested,
    ledgerSeq: ctx.ledgerSeq,
    networkId: ctx.networkId,
    baseReserve: ctx.baseReserve,
    source,
    mode: "enforce",
    footprint: { readOnly: new Set(fp.readOnly.map(keyId)), readWrite: new Set(fp.readWrite.map(keyId)) },
    auth: op.body.invokeHostFunctionOp.auth,
    useUpgradedAuth: true,
    maxEntryTtl: CURRENT_SOROBAN_SETTINGS.maxEntryTtl,
  });
  // a failed invocation's events are all rolled back: none of them is in a successful call
  const fail = (code: number) => ({
    success: false,
    result: opInner(type, code),
    ...none,
    diagnostic: host.diagnostics.map((d) => ({ ...d, inSuccessfulContractCall: false })),
  });
  let ret: ScValW;
  try {
    ret = invokeHostFunction(host, op.body.invokeHostFunctionOp.hostFunction, ctx.passphrase);
  } catch (e) {
    if (!(e instanceof HostError)) throw e;
    return fail(-2); // INVOKE_HOST_FUNCTION_TRAPPED
  }
  const r = data.resources;
  if (host.instructions > r.instructions || host.diskReadBytes > r.diskReadBytes || host.writeBytes > r.writeBytes)
    return fail(-3); // RESOURCE_LIMIT_EXCEEDED
  const consumed = refundableConsumed(host.events, ret, host.createdEntries, ctx.ledgerSeq);
  if (consumed > maxRefundable(inner)) return fail(-5); // INSUFFICIENT_REFUNDABLE_FEE
  nested.commitTo(o, ctx.ledgerSeq);
  return {
    success: true,
    result: opInner(type, 0, { success: invokeSuccessHash(ret, host.events) }),
    consumedRefundable: consumed,
    events: host.events,
    diagnostic: host.diagnostics,
    returnValue: ret,
  };
}
