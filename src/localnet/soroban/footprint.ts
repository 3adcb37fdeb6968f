/** Ledger keys of Soroban state and the resources a footprint declares. */
import { StrKey } from "@stellar/stellar-sdk";
import {
  X,
  toB64,
  addressToRaw,
  type LedgerKeyW,
  type ScAddressW,
  type ScValW,
  type SorobanDataW,
} from "../../stellar/xdr.ts";
import type { TxResources } from "./fees.ts";

export const CONTRACT_DATA = 6;
export const CONTRACT_CODE = 7;
export const PERSISTENT = 1;
export const TEMPORARY = 0;

export const keyId = (k: LedgerKeyW): string => toB64(X.ledgerKey.encode(k));

export const accountKey = (g: string): LedgerKeyW => ({
  type: 0,
  account: { accountId: { type: 0, ed25519: addressToRaw(g) } },
});

export function contractDataKey(contract: ScAddressW, key: ScValW, durability: number): LedgerKeyW {
  return { type: CONTRACT_DATA, contractData: { contract, key, durability } } as LedgerKeyW;
}

/** ScAddress of a G- or C-strkey. */
export function scAddress(s: string): ScAddressW {
  if (s.startsWith("C")) return { type: 1, contractId: StrKey.decodeContract(s) } as ScAddressW;
  return { type: 0, accountId: { type: 0, ed25519: addressToRaw(s) } } as ScAddressW;
}

/** strkey of an ScAddress (accounts and contracts; other kinds are not modelled). */
export function scAddressToString(a: ScAddressW): string {
  if (a.type === 0) return StrKey.encodeEd25519PublicKey(a.accountId.ed25519);
  if (a.type === 1) return StrKey.encodeContract(a.contractId);
  if (a.type === 2) return StrKey.encodeEd25519PublicKey(a.muxedAccount.ed25519);
  throw new Error(`address type ${a.type} is not supported by localnet`);
}

export const isClassicKey = (k: LedgerKeyW): boolean => k.type !== CONTRACT_DATA && k.type !== CONTRACT_CODE;

/** Declared resources of a Soroban transaction (events are not declared: 0). */
export function declaredResources(d: SorobanDataW, txSizeBytes: number): TxResources {
  const fp = d.resources.footprint;
  const classic = fp.readOnly.filter(isClassicKey).length + fp.readWrite.filter(isClassicKey).length;
  return {
    instructions: d.resources.instructions,
    diskReadEntries: classic,
    writeEntries: fp.readWrite.length,
    diskReadBytes: d.resources.diskReadBytes,
    writeBytes: d.resources.writeBytes,
    txSizeBytes,
    contractEventsSizeBytes: 0,
  };
}
