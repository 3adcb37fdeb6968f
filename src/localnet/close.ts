/**
 * Closing a ledger, as stellar-core's LedgerManager does: apply a transaction set to the state,
 * advance the header (sequence, close time, fee pool, hash chain) and make what the history keeps
 * of it: the ledger (header and close meta) and each transaction's envelope, result and meta.
 */
import { X, toHex, toB64, sha256 } from "../stellar/xdr.ts";
import type { LedgerHeaderState, LedgerStore } from "./state.ts";
import { applyTransactions, eventsToB64, type Applied } from "./apply.ts";
import type { LedgerRecord, TxRecord } from "./history.ts";
import { headerWire, headerHash, ledgerCloseMeta } from "./entries.ts";
import type { TxSet } from "./surge.ts";

/** The last closed ledger and what applying on top of it needs. */
export interface CloseContext {
  header: LedgerHeaderState;
  store: LedgerStore;
  networkId: Uint8Array;
  passphrase: string;
  /** The clock at the close (milliseconds). */
  nowMs: number;
}

/** A closed ledger: its header (with its hash), its history record and its transactions'. */
export interface Closed {
  header: LedgerHeaderState;
  ledger: LedgerRecord;
  records: TxRecord[];
}

/** Applies `set` on top of the last closed ledger and closes the next one. */
export function closeLedger(set: TxSet, c: CloseContext): Closed {
  const last = c.header;
  const seq = last.sequence + 1;
  const now = BigInt(Math.floor(c.nowMs / 1000));
  const closeTime = now > last.closeTime ? now : last.closeTime; // close times never go backwards
  const applied = applyTransactions(
    {
      store: c.store,
      ledgerSeq: seq,
      closeTime,
      baseFee: last.baseFee,
      baseReserve: last.baseReserve,
      networkId: c.networkId,
      passphrase: c.passphrase,
    },
    set.frames,
    set.laneBaseFee,
  );
  const header: LedgerHeaderState = {
    ...last,
    sequence: seq,
    previousHash: last.hash,
    closeTime,
    closeTimeMs: c.nowMs,
    feePool: last.feePool + applied.reduce((s, a) => s + a.feeCharged, 0n),
  };
  return sealLedger(header, applied, sha256(...applied.map((a) => a.frame.hash)));
}

/** Hashes a header whose transactions were applied, and makes the ledger's and their history records. */
export function sealLedger(h: LedgerHeaderState, applied: Applied[], txSetHash: Uint8Array): Closed {
  const wire = headerWire(h, txSetHash);
  const hash = headerHash(wire);
  const ledger: LedgerRecord = {
    sequence: h.sequence,
    hash: toHex(hash),
    previousHash: toHex(h.previousHash),
    closeTime: h.closeTime,
    headerXdr: toB64(X.ledgerHeader.encode(wire)),
    metadataXdr: toB64(ledgerCloseMeta(wire, hash)),
    txHashes: applied.map((a) => a.frame.hashHex),
    protocolVersion: h.protocolVersion,
    baseFee: h.baseFee,
    baseReserve: h.baseReserve,
    maxTxSetSize: h.maxTxSetSize,
    successfulTxs: applied.filter((a) => a.successful).length,
    failedTxs: applied.filter((a) => !a.successful).length,
    operationCount: applied.reduce((s, a) => s + a.frame.inner.ops.length, 0),
  };
  const records = applied.map((a, i) => txRecord(a, ledger, i + 1));
  return { header: { ...h, hash }, ledger, records };
}

function txRecord(a: Applied, ledger: LedgerRecord, order: number): TxRecord {
  const f = a.frame;
  const sigs = (s: { signature: Uint8Array }[]) => s.map((x) => toB64(x.signature));
  return {
    hash: f.hashHex,
    innerHash: f.isFeeBump ? f.inner.hashHex : null,
    ledger: ledger.sequence,
    applicationOrder: order,
    feeBump: f.isFeeBump,
    successful: a.successful,
    createdAt: ledger.closeTime,
    envelopeXdr: toB64(f.envelopeXdr),
    resultXdr: toB64(a.resultXdr),
    resultMetaXdr: toB64(a.metaXdr),
    diagnosticEventsXdr: a.diagnosticEvents.map((d) => toB64(X.diagnosticEvent.encode(d))),
    contractEventsXdr: a.contractEvents.map(eventsToB64),
    result: a.result,
    feeCharged: a.feeCharged,
    feeSample: a.feeSample,
    soroban: f.inner.isSoroban,
    sourceAccount: f.inner.source,
    feeAccount: f.feeSource,
    seqNum: f.inner.seqNum,
    maxFee: f.fullFee,
    innerMaxFee: f.inner.fee,
    operationCount: f.inner.ops.length,
    memoType: ["none", "text", "id", "hash", "return"][f.inner.tx.memo.type],
    signatures: sigs(f.signatures),
    innerSignatures: sigs(f.inner.signatures),
  };
}
