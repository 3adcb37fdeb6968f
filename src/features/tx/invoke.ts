/**
 * The func+auth sponsor mode: a client sends one invokeHostFunction Operation (its host function
 * and signed authorization entries) and no transaction; the relay runs it from a channel account.
 * Decoding refuses what would let a caller spend the relay's funds: source-account credentials
 * (they would be the channel's) and address credentials naming any relay account.
 */
import { StrKey, xdr } from "@stellar/stellar-sdk";
import { BASE64, Op, X, fromB64, invokedContract, toB64, type SorobanAuthW } from "../../stellar/xdr.ts";
import { validationError } from "../../kernel/errors.ts";
import type { Reason } from "../../kernel/reasons.ts";

export interface DecodedOperation {
  operation: xdr.Operation;
  /** SHA-256 of the operation's XDR: a resubmitted operation is the same sponsored request. */
  hash: string;
  contractIds: (string | null)[];
}

const invalid = (reason: Reason, message: string) =>
  validationError(`operation: ${message}`, { field: "operation", reason });

/** Every account (G...) an authorization entry's credentials name, delegates included (nested too). */
export function credentialAccounts(node: unknown, out: string[] = []): string[] {
  if (!node || typeof node !== "object" || node instanceof Uint8Array) return out;
  const o = node as Record<string, unknown>;
  if (o.type === 0 && o.accountId && typeof o.accountId === "object")
    out.push(StrKey.encodeEd25519PublicKey(Buffer.from((o.accountId as { ed25519: Uint8Array }).ed25519)));
  if (o.type === 2 && o.muxedAccount && typeof o.muxedAccount === "object")
    out.push(StrKey.encodeEd25519PublicKey(Buffer.from((o.muxedAccount as { ed25519: Uint8Array }).ed25519)));
  for (const v of Object.values(o)) if (typeof v === "object") credentialAccounts(v, out);
  return out;
}

export function decodeOperation(b64: string, isRelayAccount: (address: string) => boolean): DecodedOperation {
  if (!b64 || !BASE64.test(b64)) throw invalid("not_base64", "not base64");
  const bytes = fromB64(b64);
  let wire;
  try {
    wire = X.operation.decode(bytes);
  } catch (e) {
    throw invalid(
      "not_an_operation",
      /trailing/i.test(String(e)) ? "trailing bytes after the Operation" : "not an Operation",
    );
  }
  if (wire.body.type !== Op.invokeHostFunction)
    throw invalid(
      "not_invoke_host_function",
      "only an invokeHostFunction operation can be sponsored without a transaction",
    );
  if (wire.sourceAccount)
    throw invalid(
      "operation_source_account",
      "the operation must not name a source account (the relay's channel account is the source)",
    );
  const { hostFunction, auth } = wire.body.invokeHostFunctionOp;
  for (const [i, entry] of auth.entries()) {
    if (entry.credentials.type === 0) {
      throw invalid(
        "relay_account_credentials",
        `authorization entry ${i} has source-account credentials, which would be the relay's channel account; sign it with address credentials`,
      );
    }
    const relay = credentialAccounts(entry.credentials).find(isRelayAccount);
    if (relay) throw invalid("relay_account_credentials", `authorization entry ${i} names the relay account ${relay}`);
  }
  return {
    operation: xdr.Operation.fromXDR(Buffer.from(bytes)),
    hash: new Bun.CryptoHasher("sha256").update(bytes).digest("hex"),
    contractIds: [invokedContract(hostFunction)],
  };
}

/** The operation (base64 XDR) without its authorization entries: simulated so, the network records those it needs. */
export function withoutAuth(operation: xdr.Operation): xdr.Operation {
  const wire = X.operation.decode(operation.toXDR());
  if (wire.body.type !== Op.invokeHostFunction) return operation;
  const bare = {
    ...wire,
    body: { ...wire.body, invokeHostFunctionOp: { ...wire.body.invokeHostFunctionOp, auth: [] } },
  };
  return xdr.Operation.fromXDR(Buffer.from(X.operation.encode(bare as typeof wire)));
}

/**
 * The end user of a func+auth call: the address of the first of the client's entries that is signed and
 * that the invocation uses, that is whose address and root invocation are those of an entry the network
 * recorded as needed (`needed`: base64 SorobanAuthorizationEntry, from a simulation without the client's
 * entries). Null when no entry is both: an unsigned or unused entry never names the user.
 */
export function usedSigner(operation: xdr.Operation, needed: string[]): string | null {
  const key = (e: SorobanAuthW) => {
    const address = credentialAddress(e.credentials);
    return address ? `${address} ${toB64(X.sorobanAuth.encode({ ...e, credentials: NO_CREDENTIALS }))}` : null;
  };
  const wanted = new Set(needed.map((b64) => key(X.sorobanAuth.decode(fromB64(b64)))));
  const wire = X.operation.decode(operation.toXDR());
  if (wire.body.type !== Op.invokeHostFunction) return null;
  for (const entry of wire.body.invokeHostFunctionOp.auth) {
    const k = key(entry);
    if (k && signed(entry.credentials) && wanted.has(k)) return credentialAddress(entry.credentials);
  }
  return null;
}

/** Source-account credentials: an entry with these is its root invocation alone (compared above). */
const NO_CREDENTIALS = { type: 0 } as SorobanAuthW["credentials"];

/** Address credentials carrying a signature (an unsigned entry's is void). */
function signed(c: object): boolean {
  const v = c as Record<string, unknown>;
  const creds = (v.address ?? v.addressV2 ?? v.addressWithDelegates) as
    | { signature?: { type?: number }; addressCredentials?: { signature?: { type?: number } } }
    | undefined;
  const signature = creds?.signature ?? creds?.addressCredentials?.signature;
  return signature !== undefined && signature.type !== SCV_VOID;
}
const SCV_VOID = 1;

/** The address whose credentials sign an entry (classic, CAP-71's V2 or with delegates), as G... or C.... */
function credentialAddress(c: object): string | null {
  const { type } = c as { type: number };
  const v = c as Record<string, unknown>;
  const creds = (type === 1 ? v.address : type === 2 ? v.addressV2 : type === 3 ? v.addressWithDelegates : null) as {
    address?: ScAddressW;
    addressCredentials?: { address: ScAddressW };
  } | null;
  const a = creds?.address ?? creds?.addressCredentials?.address;
  if (!a) return null;
  if (a.type === 0) return StrKey.encodeEd25519PublicKey(Buffer.from(a.accountId.ed25519));
  if (a.type === 1) return StrKey.encodeContract(Buffer.from(a.contractId));
  if (a.type === 2) return StrKey.encodeEd25519PublicKey(Buffer.from(a.muxedAccount.ed25519));
  return null; // a claimable balance or a liquidity pool: no end user
}

type ScAddressW =
  | { type: 0; accountId: { ed25519: Uint8Array } }
  | { type: 1; contractId: Uint8Array }
  | { type: 2; muxedAccount: { ed25519: Uint8Array } };
