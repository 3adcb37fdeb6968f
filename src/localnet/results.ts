/** Builders for TransactionResult / OperationResult wire values and their Horizon code names. */
import { Tx, OP_RESULT_FIELD, TX_CODE_NAMES, type OperationResultW, type TransactionResultW, type TxCode } from "./xdr.ts";

/** An inner (or plain) transaction outcome before it is wrapped. */
export interface TxOutcome {
  code: TxCode;
  opResults?: OperationResultW[];
}

/** OperationResult for opINNER with the given op-specific code (and extra arm fields). */
export function opInner(opType: number, code: number, extra: Record<string, unknown> = {}): OperationResultW {
  return { code: 0, tr: { type: opType, [OP_RESULT_FIELD[opType]]: { code, ...extra } } } as unknown as OperationResultW;
}

/** True for opINNER with the operation's success code. */
export function opSucceeded(r: OperationResultW): boolean {
  if (r.code !== 0) return false;
  const tr = r.tr as unknown as Record<string, { code: number }> & { type: number };
  return tr[OP_RESULT_FIELD[tr.type]].code === 0;
}

/** OperationResult codes outside opINNER. */
export const OpOuter = { badAuth: -1, noAccount: -2, notSupported: -3, tooManySubentries: -4, exceededWorkLimit: -5, tooManySponsoring: -6 } as const;
export const opOuter = (code: number): OperationResultW => ({ code } as OperationResultW);

function innerResultBody(o: TxOutcome) {
  return o.code === Tx.success || o.code === Tx.failed ? { code: o.code, results: o.opResults ?? [] } : { code: o.code };
}

/** TransactionResult for a plain transaction. */
export function plainResult(feeCharged: bigint, o: TxOutcome): TransactionResultW {
  return { feeCharged, result: innerResultBody(o), ext: { v: 0 } } as TransactionResultW;
}

/** TransactionResult for a fee-bump whose inner transaction had outcome `o` (inner feeCharged is 0 since p25). */
export function feeBumpResult(feeCharged: bigint, innerHash: Uint8Array, o: TxOutcome): TransactionResultW {
  const code = o.code === Tx.success ? Tx.feeBumpInnerSuccess : Tx.feeBumpInnerFailed;
  return {
    feeCharged,
    result: { code, innerResultPair: { transactionHash: innerHash, result: { feeCharged: 0n, result: innerResultBody(o), ext: { v: 0 } } } },
    ext: { v: 0 },
  } as TransactionResultW;
}

/** An outer-level fee-bump error (no inner pair). */
export function outerError(feeCharged: bigint, code: TxCode): TransactionResultW {
  return { feeCharged, result: { code }, ext: { v: 0 } } as TransactionResultW;
}

const OP_CODE_NAMES: Record<number, Record<number, string>> = {
  0: { 0: "op_success", [-1]: "op_malformed", [-2]: "op_underfunded", [-3]: "op_low_reserve", [-4]: "op_already_exists" },
  1: { 0: "op_success", [-1]: "op_malformed", [-2]: "op_underfunded", [-3]: "op_src_no_trust", [-4]: "op_src_not_authorized", [-5]: "op_no_destination", [-6]: "op_no_trust", [-7]: "op_not_authorized", [-8]: "op_line_full", [-9]: "op_no_issuer" },
  5: { 0: "op_success", [-1]: "op_low_reserve", [-2]: "op_too_many_signers", [-3]: "op_bad_flags", [-4]: "op_invalid_inflation", [-5]: "op_cant_change", [-6]: "op_unknown_flag", [-7]: "op_threshold_out_of_range", [-8]: "op_bad_signer", [-9]: "op_invalid_home_domain", [-10]: "op_auth_revocable_required" },
  8: { 0: "op_success", [-1]: "op_malformed", [-2]: "op_no_account", [-3]: "op_immutable_set", [-4]: "op_has_sub_entries", [-5]: "op_seq_num_too_far", [-6]: "op_dest_full", [-7]: "op_is_sponsor" },
  10: { 0: "op_success", [-1]: "op_not_supported_yet", [-2]: "op_data_name_not_found", [-3]: "op_low_reserve", [-4]: "op_data_invalid_name" },
  11: { 0: "op_success", [-1]: "op_bad_seq" },
  24: { 0: "op_success", [-1]: "op_malformed", [-2]: "op_trapped", [-3]: "op_resource_limit_exceeded", [-4]: "op_entry_archived", [-5]: "op_insufficient_refundable_fee" },
};
const OP_OUTER_NAMES: Record<number, string> = { [-1]: "op_bad_auth", [-2]: "op_no_source_account", [-3]: "op_not_supported", [-4]: "op_too_many_subentries", [-5]: "op_exceeded_work_limit", [-6]: "op_too_many_sponsoring" };

/** Horizon's name of an operation result ("op_success", "op_underfunded", ...). */
export function opCodeName(r: OperationResultW): string {
  if (r.code !== 0) return OP_OUTER_NAMES[r.code] ?? `op_${r.code}`;
  const tr = r.tr as unknown as Record<string, { code: number }> & { type: number };
  const code = tr[OP_RESULT_FIELD[tr.type]].code;
  return OP_CODE_NAMES[tr.type]?.[code] ?? (code === 0 ? "op_success" : `op_failed_${code}`);
}

/** Horizon `result_codes` for a TransactionResult. */
export function resultCodes(r: TransactionResultW): { transaction: string; inner_transaction?: string; operations?: string[] } {
  const res = r.result;
  const out: { transaction: string; inner_transaction?: string; operations?: string[] } = { transaction: TX_CODE_NAMES[res.code] };
  let ops: OperationResultW[] | undefined;
  if (res.code === 1 || res.code === -13) {
    const inner = res.innerResultPair.result.result;
    out.inner_transaction = TX_CODE_NAMES[inner.code];
    if (inner.code === 0 || inner.code === -1) ops = inner.results;
  } else if (res.code === 0 || res.code === -1) ops = res.results;
  if (ops && ops.length) out.operations = ops.map(opCodeName);
  return out;
}
