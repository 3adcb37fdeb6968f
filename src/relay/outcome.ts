/** What the relay answers for a transaction the network judged: success, or SUBMISSION_FAILED with its codes. */
import { X, fromB64 } from "../stellar/xdr.ts";
import { resultCodes } from "../stellar/result-codes.ts";
import { RelayError } from "../errors.ts";

/** result_codes of the client's transaction: the inner code when the network wrapped it in tx_fee_bump_inner_failed. */
export function clientResultCodes(resultXdr: string): { transaction: string; operations?: string[]; network: string } {
  const codes = resultCodes(X.result.decode(fromB64(resultXdr)));
  const transaction = codes.inner_transaction ?? codes.transaction;
  return { transaction, ...(codes.operations ? { operations: codes.operations } : {}), network: codes.transaction };
}

/** SUBMISSION_FAILED for a result (rejected before inclusion, or applied and failed: `applied` adds ledger and fee). */
export function submissionFailed(
  hash: string,
  resultXdr: string,
  applied?: { ledger: number; feePaid: bigint },
): RelayError {
  const { network, ...result_codes } = clientResultCodes(resultXdr);
  const message =
    network === result_codes.transaction
      ? `the network rejected the transaction: ${network}`
      : `the network rejected the transaction: ${network} (${result_codes.transaction})`;
  return new RelayError("SUBMISSION_FAILED", message, {
    result_codes,
    hash,
    ...(applied ? { ledger: applied.ledger, feePaid: applied.feePaid.toString(), resultXdr } : {}),
  });
}
