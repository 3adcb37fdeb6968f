/**
 * Classic assets as localnet keys and names them: a credit asset is "CODE:ISSUER" (SEP-11), the
 * native one "native"; their codes' validity (stellar-core's isAssetValid), and the contract id of an
 * asset's Stellar Asset Contract, where CAP-67 events of classic operations are emitted.
 */
import { X, rawToAddress, publicKeyW, sha256 } from "../stellar/xdr.ts";

/** An Asset (or TrustLineAsset / ChangeTrustAsset) wire value: native, alphanum4, alphanum12 (pool shares apart). */
export type AssetW =
  | { type: 0 }
  | { type: 1; alphaNum4: { assetCode: Uint8Array; issuer: { type: 0; ed25519: Uint8Array } } }
  | { type: 2; alphaNum12: { assetCode: Uint8Array; issuer: { type: 0; ed25519: Uint8Array } } }
  | { type: 3 };

const credit = (a: AssetW) => (a.type === 1 ? a.alphaNum4 : a.type === 2 ? a.alphaNum12 : null);

/** A code's text without its trailing zero bytes. */
const codeText = (bytes: Uint8Array): string => new TextDecoder().decode(bytes).replace(/\0+$/, "");

/** "CODE:ISSUER" of a credit asset; "native"; null for a pool share. */
export function assetName(a: AssetW): string | null {
  if (a.type === 0) return "native";
  const c = credit(a);
  return c ? `${codeText(c.assetCode)}:${rawToAddress(c.issuer.ed25519)}` : null;
}

/** The issuer of a credit asset (null: native or a pool share). */
export const issuerOf = (a: AssetW): string | null => {
  const c = credit(a);
  return c ? rawToAddress(c.issuer.ed25519) : null;
};

/**
 * Whether a credit asset's code is well formed: alphanum4 1 to 4 characters, alphanum12 5 to 12,
 * each [A-Za-z0-9], zero bytes only after the last one (stellar-core's isAssetValid).
 */
export function validCode(a: AssetW): boolean {
  const c = credit(a);
  if (!c) return a.type === 0;
  const bytes = [...c.assetCode];
  const len = bytes.indexOf(0) === -1 ? bytes.length : bytes.indexOf(0);
  if (bytes.slice(len).some((b) => b !== 0)) return false;
  const ok = bytes.slice(0, len).every((b) => (b >= 48 && b <= 57) || (b >= 65 && b <= 90) || (b >= 97 && b <= 122));
  return ok && (a.type === 1 ? len >= 1 && len <= 4 : len >= 5 && len <= 12);
}

/** The wire Asset of "CODE:ISSUER" (or "native"). */
export function assetOf(name: string): AssetW {
  if (name === "native") return { type: 0 };
  const [code, issuer] = name.split(":");
  const bytes = new Uint8Array(code.length <= 4 ? 4 : 12);
  bytes.set(new TextEncoder().encode(code));
  const body = { assetCode: bytes, issuer: publicKeyW(issuer) } as const;
  return code.length <= 4 ? { type: 1, alphaNum4: body } : { type: 2, alphaNum12: body };
}

/** Asset contract ids by network id (the same array for a network's whole life) and asset name. */
const contractIds = new WeakMap<Uint8Array, Map<string, Uint8Array>>();

/** The contract id of an asset's Stellar Asset Contract on a network (its id is sha256 of a preimage). */
export function assetContractId(name: string, networkId: Uint8Array): Uint8Array {
  let ids = contractIds.get(networkId);
  if (!ids) contractIds.set(networkId, (ids = new Map()));
  let id = ids.get(name);
  if (!id) {
    const preimage = { type: 8, contractId: { networkId, contractIdPreimage: { type: 1, fromAsset: assetOf(name) } } };
    id = sha256(X.hashIdPreimage.encode(preimage as never));
    ids.set(name, id);
  }
  return id;
}
