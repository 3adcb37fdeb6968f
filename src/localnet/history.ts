/** Closed ledgers and applied transactions as the RPC and Horizon serve them, plus fee statistics. */
import type { TransactionResultW } from "../stellar/xdr.ts";

export interface TxRecord {
  hash: string; // outer hash
  innerHash: string | null;
  ledger: number;
  applicationOrder: number;
  feeBump: boolean;
  successful: boolean;
  createdAt: bigint; // ledger close time (seconds)
  envelopeXdr: string;
  resultXdr: string;
  resultMetaXdr: string;
  diagnosticEventsXdr: string[];
  contractEventsXdr: string[][];
  result: TransactionResultW;
  feeCharged: bigint;
  /** The fee statistics' sample of this transaction (see Applied.feeSample). */
  feeSample: bigint;
  soroban: boolean;
  sourceAccount: string;
  feeAccount: string;
  seqNum: bigint;
  maxFee: bigint;
  innerMaxFee: bigint;
  operationCount: number;
  memoType: string;
  signatures: string[];
  innerSignatures: string[];
}

export interface LedgerRecord {
  sequence: number;
  hash: string;
  previousHash: string;
  closeTime: bigint;
  headerXdr: string; // LedgerHeader
  metadataXdr: string; // LedgerCloseMeta
  txHashes: string[];
  protocolVersion: number;
  baseFee: number;
  baseReserve: number;
  maxTxSetSize: number;
  successfulTxs: number;
  failedTxs: number;
  operationCount: number;
}

export type FeeDistribution = Record<
  | "max"
  | "min"
  | "mode"
  | "p10"
  | "p20"
  | "p30"
  | "p40"
  | "p50"
  | "p60"
  | "p70"
  | "p80"
  | "p90"
  | "p95"
  | "p99"
  | "transactionCount",
  string
> & { ledgerCount: number };

/** Distribution of per-operation inclusion fees, as stellar-rpc's fee window computes it. */
export function feeDistribution(fees: bigint[], ledgerCount: number): FeeDistribution {
  const sorted = [...fees].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const n = sorted.length;
  const pct = (p: number) => (n === 0 ? 0n : sorted[Math.max(0, Math.ceil((p * n) / 100) - 1)]);
  let mode = 0n,
    best = 0;
  for (let i = 0; i < n; ) {
    let j = i;
    while (j < n && sorted[j] === sorted[i]) j++;
    if (j - i > best) {
      best = j - i;
      mode = sorted[i];
    }
    i = j;
  }
  const s = (v: bigint) => v.toString();
  return {
    max: s(n ? sorted[n - 1] : 0n),
    min: s(n ? sorted[0] : 0n),
    mode: s(mode),
    p10: s(pct(10)),
    p20: s(pct(20)),
    p30: s(pct(30)),
    p40: s(pct(40)),
    p50: s(pct(50)),
    p60: s(pct(60)),
    p70: s(pct(70)),
    p80: s(pct(80)),
    p90: s(pct(90)),
    p95: s(pct(95)),
    p99: s(pct(99)),
    transactionCount: String(n),
    ledgerCount,
  };
}

/** Per-ledger fee samples over a sliding window of ledgers. */
export class FeeWindow {
  private readonly ledgers: bigint[][] = [];
  constructor(private readonly size: number) {}
  push(fees: bigint[]): void {
    this.ledgers.push(fees);
    if (this.ledgers.length > this.size) this.ledgers.shift();
  }
  distribution(): FeeDistribution {
    return feeDistribution(this.ledgers.flat(), this.ledgers.length);
  }
}

/** Fee statistics windows in ledgers, as stellar-rpc keeps them. */
const CLASSIC_FEE_LEDGERS = 10;
const SOROBAN_FEE_LEDGERS = 50;

/** The closed ledgers and their transactions (by outer and inner hash), and the fee statistics. */
export class History {
  readonly ledgers: LedgerRecord[] = [];
  readonly records = new Map<string, TxRecord>();
  readonly classicFees = new FeeWindow(CLASSIC_FEE_LEDGERS);
  readonly sorobanFees = new FeeWindow(SOROBAN_FEE_LEDGERS);

  get latest(): LedgerRecord {
    return this.ledgers[this.ledgers.length - 1];
  }
  get oldest(): LedgerRecord {
    return this.ledgers[0];
  }

  /** Adds a closed ledger and its transactions. */
  add(ledger: LedgerRecord, txs: TxRecord[]): void {
    this.ledgers.push(ledger);
    for (const r of txs) this.index(r);
  }

  /** Adds one ledger's transactions to the fee statistics windows. */
  sampleFees(txs: TxRecord[]): void {
    this.classicFees.push(txs.filter((r) => !r.soroban).map((r) => r.feeSample));
    this.sorobanFees.push(txs.filter((r) => r.soroban).map((r) => r.feeSample));
  }

  /** Takes back the history of a snapshot, and the fee statistics of its last ledgers. */
  restore(ledgers: LedgerRecord[], records: TxRecord[]): void {
    for (const l of ledgers) this.ledgers.push(l);
    for (const r of records) this.index(r);
    for (const l of this.ledgers.slice(-SOROBAN_FEE_LEDGERS))
      this.sampleFees(l.txHashes.map((h) => this.records.get(h)!).filter(Boolean));
  }

  /** Applied transactions in ledger order, starting at a ledger (getTransactions). */
  transactionsFrom(startLedger: number, skip: number, limit: number): TxRecord[] {
    const out: TxRecord[] = [];
    for (const l of this.ledgers) {
      if (l.sequence < startLedger) continue;
      for (const h of l.txHashes) {
        if (skip > 0) {
          skip--;
          continue;
        }
        out.push(this.records.get(h)!);
        if (out.length >= limit) return out;
      }
    }
    return out;
  }

  private index(r: TxRecord): void {
    this.records.set(r.hash, r);
    if (r.innerHash) this.records.set(r.innerHash, r);
  }
}
