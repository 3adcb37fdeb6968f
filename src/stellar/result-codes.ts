/** Horizon's string names of transaction and operation result codes (stellar-horizon internal/codes). */
import { OP_RESULT_FIELD, X, fromB64, type OperationResultW, type TransactionResultW } from "./xdr.ts";

/** Transaction result codes by number. */
export const TX_CODE_NAMES: Record<number, string> = {
  1: "tx_fee_bump_inner_success",
  0: "tx_success",
  [-1]: "tx_failed",
  [-2]: "tx_too_early",
  [-3]: "tx_too_late",
  [-4]: "tx_missing_operation",
  [-5]: "tx_bad_seq",
  [-6]: "tx_bad_auth",
  [-7]: "tx_insufficient_balance",
  [-8]: "tx_no_source_account",
  [-9]: "tx_insufficient_fee",
  [-10]: "tx_bad_auth_extra",
  [-11]: "tx_internal_error",
  [-12]: "tx_not_supported",
  [-13]: "tx_fee_bump_inner_failed",
  [-14]: "tx_bad_sponsorship",
  [-15]: "tx_bad_minseq_age_or_gap",
  [-16]: "tx_malformed",
  [-17]: "tx_soroban_invalid",
  [-18]: "tx_frozen_key_accessed",
};

/** The codes a payment and both path payments share (a payment is a path payment in one asset). */
const PAYMENT_CODES: Record<number, string> = {
  0: "op_success",
  [-1]: "op_malformed",
  [-2]: "op_underfunded",
  [-3]: "op_src_no_trust",
  [-4]: "op_src_not_authorized",
  [-5]: "op_no_destination",
  [-6]: "op_no_trust",
  [-7]: "op_not_authorized",
  [-8]: "op_line_full",
  [-9]: "op_no_issuer",
};
/** A path payment's own codes: crossing offers. */
const CROSSING_CODES: Record<number, string> = { [-10]: "op_too_few_offers", [-11]: "op_cross_self" };

const OP_CODE_NAMES: Record<number, Record<number, string>> = {
  0: {
    0: "op_success",
    [-1]: "op_malformed",
    [-2]: "op_underfunded",
    [-3]: "op_low_reserve",
    [-4]: "op_already_exists",
  },
  1: PAYMENT_CODES,
  2: { ...PAYMENT_CODES, ...CROSSING_CODES, [-12]: "op_over_source_max" },
  13: { ...PAYMENT_CODES, ...CROSSING_CODES, [-12]: "op_under_dest_min" },
  6: {
    0: "op_success",
    [-1]: "op_malformed",
    [-2]: "op_no_issuer",
    [-3]: "op_invalid_limit",
    [-4]: "op_low_reserve",
    [-5]: "op_self_not_allowed",
    [-6]: "op_trust_line_missing",
    [-7]: "op_cannot_delete",
    [-8]: "op_not_aut_maintain_liabilities",
  },
  7: {
    0: "op_success",
    [-1]: "op_malformed",
    [-2]: "op_no_trustline",
    [-3]: "op_not_required",
    [-4]: "op_cant_revoke",
    [-5]: "op_self_not_allowed",
    [-6]: "op_low_reserve",
  },
  16: { 0: "op_success", [-1]: "op_malformed", [-2]: "op_already_sponsored", [-3]: "op_recursive" },
  17: { 0: "op_success", [-1]: "op_not_sponsored" },
  18: {
    0: "op_success",
    [-1]: "op_does_not_exist",
    [-2]: "op_not_sponsor",
    [-3]: "op_low_reserve",
    [-4]: "op_only_transferable",
    [-5]: "op_malformed",
  },
  21: {
    0: "op_success",
    [-1]: "op_malformed",
    [-2]: "op_no_trustline",
    [-3]: "op_cant_revoke",
    [-4]: "op_invalid_state",
    [-5]: "op_low_reserve",
  },
  5: {
    0: "op_success",
    [-1]: "op_low_reserve",
    [-2]: "op_too_many_signers",
    [-3]: "op_bad_flags",
    [-4]: "op_invalid_inflation",
    [-5]: "op_cant_change",
    [-6]: "op_unknown_flag",
    [-7]: "op_threshold_out_of_range",
    [-8]: "op_bad_signer",
    [-9]: "op_invalid_home_domain",
    [-10]: "op_auth_revocable_required",
  },
  8: {
    0: "op_success",
    [-1]: "op_malformed",
    [-2]: "op_no_account",
    [-3]: "op_immutable_set",
    [-4]: "op_has_sub_entries",
    [-5]: "op_seq_num_too_far",
    [-6]: "op_dest_full",
    [-7]: "op_is_sponsor",
  },
  10: {
    0: "op_success",
    [-1]: "op_not_supported_yet",
    [-2]: "op_data_name_not_found",
    [-3]: "op_low_reserve",
    [-4]: "op_data_invalid_name",
  },
  11: { 0: "op_success", [-1]: "op_bad_seq" },
  24: {
    0: "op_success",
    [-1]: "op_malformed",
    [-2]: "op_trapped",
    [-3]: "op_resource_limit_exceeded",
    [-4]: "op_entry_archived",
    [-5]: "op_insufficient_refundable_fee",
  },
};
const OP_OUTER_NAMES: Record<number, string> = {
  [-1]: "op_bad_auth",
  [-2]: "op_no_source_account",
  [-3]: "op_not_supported",
  [-4]: "op_too_many_subentries",
  [-5]: "op_exceeded_work_limit",
  [-6]: "op_too_many_sponsoring",
};

/** Horizon's name of an operation result ("op_success", "op_underfunded", ...). */
export function opCodeName(r: OperationResultW): string {
  if (r.code !== 0) return OP_OUTER_NAMES[r.code] ?? `op_${r.code}`;
  const tr = r.tr as unknown as Record<string, { code: number }> & { type: number };
  const code = tr[OP_RESULT_FIELD[tr.type]].code;
  return OP_CODE_NAMES[tr.type]?.[code] ?? (code === 0 ? "op_success" : `op_failed_${code}`);
}

/** Horizon `result_codes` for a TransactionResult. */
export function resultCodes(r: TransactionResultW): {
  transaction: string;
  inner_transaction?: string;
  operations?: string[];
} {
  const res = r.result;
  const out: { transaction: string; inner_transaction?: string; operations?: string[] } = {
    transaction: TX_CODE_NAMES[res.code],
  };
  let ops: OperationResultW[] | undefined;
  if (res.code === 1 || res.code === -13) {
    const inner = res.innerResultPair.result.result;
    out.inner_transaction = TX_CODE_NAMES[inner.code];
    if (inner.code === 0 || inner.code === -1) ops = inner.results;
  } else if (res.code === 0 || res.code === -1) ops = res.results;
  if (ops?.length) out.operations = ops.map(opCodeName);
  return out;
}

/** result_codes of the client's transaction: the inner code when the network wrapped it in tx_fee_bump_inner_failed. */
export function clientResultCodes(resultXdr: string): { transaction: string; operations?: string[]; network: string } {
  const codes = resultCodes(X.result.decode(fromB64(resultXdr)));
  const transaction = codes.inner_transaction ?? codes.transaction;
  return { transaction, ...(codes.operations ? { operations: codes.operations } : {}), network: codes.transaction };
}
