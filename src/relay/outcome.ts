/** What the relay answers for a transaction the network judged: success, or SUBMISSION_FAILED with its codes. */
import { clientResultCodes } from "../stellar/result-codes.ts";
import { RelayError } from "../errors.ts";

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
