/** XDR encodings of localnet state: account ledger entries, ledger headers and close meta. */
import { xdr } from "@stellar/stellar-sdk";
import {
  X,
  text,
  publicKeyW,
  addressToRaw,
  sha256,
  rawToAddress,
  xdrText,
  type LedgerEntryDataW,
  type LedgerHeaderW,
  type LedgerKeyW,
} from "../stellar/xdr.ts";
import type { Account, LedgerHeaderState, TrustLine } from "./state.ts";
import { assetName, assetOf, type AssetW } from "./assets.ts";

export function accountEntryData(a: Account): LedgerEntryDataW {
  return {
    type: 0,
    account: {
      accountId: publicKeyW(a.id),
      balance: a.balance,
      seqNum: a.seqNum,
      numSubEntries: a.numSubEntries,
      inflationDest: null,
      flags: a.flags,
      homeDomain: text(a.homeDomain),
      thresholds: new Uint8Array(a.thresholds),
      signers: a.signers.map((s) => ({ key: { type: 0, ed25519: addressToRaw(s.key) }, weight: s.weight })),
      ext: {
        v: 1,
        v1: {
          liabilities: { buying: 0n, selling: 0n },
          ext: {
            v: 2,
            v2: {
              numSponsored: a.numSponsored,
              numSponsoring: a.numSponsoring,
              signerSponsoringIDs: a.signers.map((s) => (s.sponsor ? publicKeyW(s.sponsor) : null)),
              ext: { v: 3, v3: { ext: { v: 0 }, seqLedger: a.seqLedger, seqTime: a.seqTime } },
            },
          },
        },
      },
    },
  } as LedgerEntryDataW;
}

/** A LedgerEntry's extension: v1 names the account that pays its reserve (CAP-33). */
export const entryExt = (sponsor: string | null) =>
  sponsor ? { v: 1, v1: { sponsoringId: publicKeyW(sponsor), ext: { v: 0 } } } : { v: 0 };

/** Full LedgerEntry XDR of an account. */
export const accountLedgerEntry = (a: Account): Uint8Array =>
  X.ledgerEntry.encode({
    lastModifiedLedgerSeq: a.lastModified,
    data: accountEntryData(a),
    ext: entryExt(a.sponsor),
  } as never);

/** A trustline's LedgerEntryData (its owner's last change stands for its own). */
export function trustLineEntryData(owner: Account, t: TrustLine): LedgerEntryDataW {
  return {
    type: 1,
    trustLine: {
      accountId: publicKeyW(owner.id),
      asset: assetOf(t.asset),
      balance: t.balance,
      limit: t.limit,
      flags: t.flags,
      ext: { v: 0 },
    },
  } as LedgerEntryDataW;
}

/** A data entry's LedgerEntryData. */
export function dataEntryData(owner: Account, name: string): LedgerEntryDataW {
  return {
    type: 3,
    data: { accountId: publicKeyW(owner.id), dataName: text(name), dataValue: owner.data.get(name)!, ext: { v: 0 } },
  } as LedgerEntryDataW;
}

export function headerWire(h: LedgerHeaderState, txSetHash: Uint8Array): LedgerHeaderW {
  const zero = new Uint8Array(32);
  return {
    ledgerVersion: h.protocolVersion,
    previousLedgerHash: h.previousHash,
    scpValue: { txSetHash, closeTime: h.closeTime, upgrades: [], ext: { v: 0 } },
    txSetResultHash: zero,
    bucketListHash: zero,
    ledgerSeq: h.sequence,
    totalCoins: h.totalCoins,
    feePool: h.feePool,
    inflationSeq: 0,
    idPool: 0n,
    baseFee: h.baseFee,
    baseReserve: h.baseReserve,
    maxTxSetSize: h.maxTxSetSize,
    skipList: [zero, zero, zero, zero],
    ext: { v: 0 },
  } as LedgerHeaderW;
}

/**
 * LedgerCloseMeta v2 for a closed ledger. Localnet fills the header and transaction set hash;
 * per-transaction processing meta is served by getTransaction(s) instead and left empty here.
 */
export function ledgerCloseMeta(header: LedgerHeaderW, hash: Uint8Array): Uint8Array {
  return X.ledgerCloseMeta.encode({
    v: 2,
    v2: {
      ext: { v: 0 },
      ledgerHeader: { hash, header, ext: { v: 0 } },
      txSet: { v: 1, v1TxSet: { previousLedgerHash: header.previousLedgerHash, phases: [] } },
      txProcessing: [],
      upgradesProcessing: [],
      scpInfo: [],
      totalByteSizeOfLiveSorobanState: 0n,
      evictedKeys: [],
    },
  } as never);
}

export const headerHash = (h: LedgerHeaderW): Uint8Array => sha256(X.ledgerHeader.encode(h));

/** Hash of an InvokeHostFunction success (the operation result's `success`). */
export const invokeSuccessHash = (returnValue: unknown, events: unknown[]): Uint8Array =>
  sha256(xdr.InvokeHostFunctionSuccessPreImage.schema.encode({ returnValue, events } as never));

/** The entry of an account-held ledger key (an account, a trustline, a data entry), or null. */
export function accountKeyEntry(
  state: { account(id: string): Account | undefined },
  key: LedgerKeyW,
): { data: LedgerEntryDataW; lastModified: number } | null {
  if (key.type === 0) {
    const a = state.account(rawToAddress(key.account.accountId.ed25519));
    return a ? { data: accountEntryData(a), lastModified: a.lastModified } : null;
  }
  if (key.type === 1) {
    const a = state.account(rawToAddress(key.trustLine.accountId.ed25519));
    const name = assetName(key.trustLine.asset as AssetW);
    const t = name && a?.trustlines.get(name);
    return a && t ? { data: trustLineEntryData(a, t), lastModified: a.lastModified } : null;
  }
  if (key.type === 3) {
    const a = state.account(rawToAddress(key.data.accountId.ed25519));
    const name = xdrText(key.data.dataName);
    return a?.data.has(name) ? { data: dataEntryData(a, name), lastModified: a.lastModified } : null;
  }
  return null;
}
