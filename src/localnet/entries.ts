/** XDR encodings of localnet state: account ledger entries, ledger headers and close meta. */
import { xdr } from "@stellar/stellar-sdk";
import {
  X,
  text,
  publicKeyW,
  addressToRaw,
  sha256,
  type LedgerEntryDataW,
  type LedgerHeaderW,
} from "../stellar/xdr.ts";
import type { Account, LedgerHeaderState } from "./state.ts";

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
              numSponsored: 0,
              numSponsoring: 0,
              signerSponsoringIDs: a.signers.map(() => null),
              ext: { v: 3, v3: { ext: { v: 0 }, seqLedger: a.seqLedger, seqTime: a.seqTime } },
            },
          },
        },
      },
    },
  } as LedgerEntryDataW;
}

/** Full LedgerEntry XDR of an account. */
export const accountLedgerEntry = (a: Account): Uint8Array =>
  X.ledgerEntry.encode({ lastModifiedLedgerSeq: a.lastModified, data: accountEntryData(a), ext: { v: 0 } });

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
