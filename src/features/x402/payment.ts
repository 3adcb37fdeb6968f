/**
 * An x402 `exact` payment on Stellar read from its envelope, without the network: one
 * invokeHostFunction calling `transfer(from, to, amount)` on the required asset, with address
 * credentials (classic, CAP-71 V2 or with delegates) that name no relay account. What it finds wrong
 * is a refusal in the scheme's reason codes; what it finds right is the operation the relay submits.
 */
import { StrKey, scValToNative, xdr } from "@stellar/stellar-sdk";
import {
  BASE64,
  Op,
  X,
  fromB64,
  muxedToAddress,
  type EnvelopeW,
  type ScAddressW,
  type ScValW,
  type SorobanAuthW,
} from "../../stellar/xdr.ts";
import { credentialAccounts } from "../tx/invoke.ts";
import type { X402Reason } from "./reasons.ts";
import type { PaymentRequirements } from "./x402.model.ts";

export interface Refusal {
  reason: X402Reason;
  message: string;
  payer?: string;
}

/** An authorization entry's address credentials, whatever their arm. */
export interface Credential {
  address: string;
  expiration: number;
  signed: boolean;
  /** Every account the entry's credentials name (its address and its delegates'). */
  accounts: string[];
  subInvocations: number;
}

export interface Payment {
  payer: string;
  /** The operation without a source (base64 XDR), as the relay's func+auth path takes it. */
  operation: string;
  credentials: Credential[];
}

const refuse = (reason: X402Reason, message: string, payer?: string): Refusal => ({
  reason,
  message,
  ...(payer ? { payer } : {}),
});

const native = (v: ScValW): unknown => scValToNative(xdr.ScVal.fromXdrObject(v));

/** An ScAddress as G... / C... / M... (null: a kind no payment uses). */
export function addressOf(a: ScAddressW): string | null {
  if (a.type === 0) return StrKey.encodeEd25519PublicKey(Buffer.from(a.accountId.ed25519));
  if (a.type === 1) return StrKey.encodeContract(Buffer.from(a.contractId));
  if (a.type === 2) return StrKey.encodeEd25519PublicKey(Buffer.from(a.muxedAccount.ed25519));
  return null;
}

/** An entry's address credentials (null: source-account credentials). */
export function credentialOf(entry: SorobanAuthW): Credential | null {
  const c = entry.credentials;
  const creds =
    c.type === 1
      ? c.address
      : c.type === 2
        ? c.addressV2
        : c.type === 3
          ? c.addressWithDelegates.addressCredentials
          : null;
  if (!creds) return null;
  return {
    address: addressOf(creds.address) ?? "",
    expiration: creds.signatureExpirationLedger,
    signed: creds.signature.type !== 1, // scvVoid: not signed yet
    accounts: credentialAccounts(c),
    subInvocations: entry.rootInvocation.subInvocations.length,
  };
}

/** Reads the payment of `transaction` against the requirements; `isRelayAccount` names the relay's own accounts. */
export function readPayment(
  transaction: unknown,
  req: PaymentRequirements,
  isRelayAccount: (address: string) => boolean,
): Payment | Refusal {
  if (typeof transaction !== "string" || !BASE64.test(transaction))
    return refuse(
      "invalid_exact_stellar_payload_malformed",
      "payload.transaction must be a base64 TransactionEnvelope",
    );
  let env: EnvelopeW;
  try {
    env = X.envelope.decode(fromB64(transaction));
  } catch {
    return refuse("invalid_exact_stellar_payload_malformed", "payload.transaction is not a TransactionEnvelope");
  }
  if (env.type !== 2)
    return refuse("invalid_exact_stellar_payload_malformed", "payload.transaction must be a v1 transaction envelope");
  const tx = env.v1.tx;
  if (isRelayAccount(muxedToAddress(tx.sourceAccount)))
    return refuse(
      "invalid_exact_stellar_payload_unsafe_tx_or_op_source",
      "the transaction's source is a relay account",
    );
  const op = tx.operations[0];
  if (tx.operations.length !== 1 || !op || op.body.type !== Op.invokeHostFunction)
    return refuse("invalid_exact_stellar_payload_wrong_operation", "the transaction must have one invokeHostFunction");
  if (op.sourceAccount) {
    const source = muxedToAddress(op.sourceAccount);
    return isRelayAccount(source)
      ? refuse("invalid_exact_stellar_payload_unsafe_tx_or_op_source", "the operation's source is a relay account")
      : refuse("invalid_exact_stellar_payload_wrong_operation", "the operation must not have a source account");
  }
  const { hostFunction, auth } = op.body.invokeHostFunctionOp;
  if (hostFunction.type !== 0)
    return refuse("invalid_exact_stellar_payload_wrong_operation", "the host function must invoke a contract");
  const call = hostFunction.invokeContract;
  if (addressOf(call.contractAddress) !== req.asset)
    return refuse("invalid_exact_stellar_payload_wrong_asset", `the invoked contract is not ${req.asset}`);
  const [fromV, toV, amountV] = call.args;
  if (call.functionName.toString() !== "transfer" || call.args.length !== 3 || !fromV || !toV || !amountV)
    return refuse("invalid_exact_stellar_payload_wrong_function_name", "the call must be transfer(from, to, amount)");
  if (fromV.type !== 18 || toV.type !== 18 || amountV.type !== 10)
    return refuse("invalid_exact_stellar_payload_wrong_function_name", "transfer takes (address, address, i128)");
  const payer = addressOf(fromV.address) ?? "";
  if (isRelayAccount(payer))
    return refuse("invalid_exact_stellar_payload_facilitator_is_payer", "a relay account is the transfer's from");
  if (addressOf(toV.address) !== req.payTo)
    return refuse("invalid_exact_stellar_payload_wrong_recipient", `the transfer's to is not ${req.payTo}`, payer);
  if (String(native(amountV)) !== req.amount)
    return refuse("invalid_exact_stellar_payload_wrong_amount", `the transfer's amount is not ${req.amount}`, payer);
  if (auth.length === 0)
    return refuse("invalid_exact_stellar_payload_no_auth_entries", "the transfer has no authorization entries", payer);
  const credentials: Credential[] = [];
  for (const [i, entry] of auth.entries()) {
    const cred = credentialOf(entry);
    if (!cred)
      return refuse(
        "invalid_exact_stellar_payload_unsupported_credential_type",
        `authorization entry ${i} has source-account credentials (they would be the relay's)`,
        payer,
      );
    if (cred.accounts.some(isRelayAccount))
      return refuse(
        "invalid_exact_stellar_payload_facilitator_in_auth",
        `authorization entry ${i} names a relay account`,
        payer,
      );
    if (cred.subInvocations > 0)
      return refuse(
        "invalid_exact_stellar_payload_has_subinvocations",
        `authorization entry ${i} has sub-invocations`,
        payer,
      );
    credentials.push(cred);
  }
  if (!credentials.some((c) => c.address === payer && c.signed))
    return refuse("invalid_exact_stellar_payload_missing_payer_signature", "the payer's entry is not signed", payer);
  if (credentials.some((c) => !c.signed))
    return refuse("invalid_exact_stellar_payload_unexpected_pending_signatures", "an entry is not signed", payer);
  return { payer, operation: Buffer.from(X.operation.encode(op)).toString("base64"), credentials };
}
