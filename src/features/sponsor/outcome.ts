/** What the relay answers for a transaction the network judged: success, or SUBMISSION_FAILED with its codes. */
import { clientResultCodes } from "../../stellar/result-codes.ts";
import { RelayError } from "../../kernel/errors.ts";

/** What a code most often means for the client that signed the transaction. */
const HINTS: Record<string, string> = {
  tx_bad_seq: "its sequence number is not its source account's next one: build it from the account's current sequence",
  tx_too_late: "its time bounds have passed: build it again with a later maxTime",
  tx_too_early: "its time bounds have not begun yet",
  tx_insufficient_balance: "its source account cannot keep its minimum balance",
  tx_no_source_account:
    "its source account does not exist on this network: create and fund it first (friendbot on testnet, a createAccount payment on mainnet)",
  op_no_source_account:
    "the operation's source account does not exist on this network: create and fund it first (friendbot on testnet, a createAccount payment on mainnet)",
  op_underfunded: "the paying account does not hold enough of the asset",
  op_no_destination: "the destination account does not exist (create it with createAccount)",
  op_low_reserve: "the account would fall below its minimum balance",
};

/**
 * SUBMISSION_FAILED for a result, in plain words: rejected before inclusion (with a hint for the
 * usual causes; `passphrase`: the network's, named when the signatures do not match), or
 * included and failed (`applied` adds ledger and fee: that fee was really paid).
 */
export function submissionFailed(
  hash: string,
  resultXdr: string,
  applied?: { ledger: number; feePaid: bigint },
  passphrase?: string,
): RelayError {
  const { network, ...result_codes } = clientResultCodes(resultXdr);
  const failing = (result_codes.operations ?? []).findIndex((c) => c !== "op_success");
  const code = failing >= 0 ? result_codes.operations![failing]! : result_codes.transaction;
  const what = failing >= 0 ? `${code} on operation ${failing}` : code;
  const hint = HINTS[code] ?? (code === "tx_bad_auth" ? badAuth(passphrase) : undefined);
  const said = applied
    ? `included in ledger ${applied.ledger} and failed: ${what}`
    : `the network rejected the transaction: ${what}${network === code ? "" : ` (${network})`}`;
  return new RelayError("SUBMISSION_FAILED", hint ? `${said}; ${hint}` : said, {
    result_codes,
    hash,
    ...(applied ? { ledger: applied.ledger, feePaid: applied.feePaid.toString(), resultXdr } : {}),
  });
}

const badAuth = (passphrase?: string) =>
  "its signatures do not authorize it: check the signing keys, and that it was signed for this network" +
  (passphrase ? ` (the relay uses the passphrase "${passphrase}")` : "");
