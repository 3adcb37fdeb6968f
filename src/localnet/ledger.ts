/**
 * Localnet: an in-process Stellar network. It keeps the ledger state, takes transactions into the
 * queue with stellar-core's admission rules, closes ledgers on a timer (or on demand) and records
 * what it applied for the RPC and Horizon interfaces.
 */
import { Keypair } from "@stellar/stellar-sdk";
import { X, networkId as netId, toHex, toB64, sha256 } from "../stellar/xdr.ts";
import { newAccount, type Account, type ContractData, type LedgerHeaderState, type LedgerStore } from "./state.ts";
import { toFrame, decodeEnvelope, type Frame } from "./frame.ts";
import { TxQueue } from "./queue.ts";
import { admit, trimQueue, type QueueContext, type SubmitResult } from "./admission.ts";
import { buildTxSet, type LaneCapacity } from "./surge.ts";
import { applyTransactions, eventsToB64, type Applied } from "./apply.ts";
import { FeeWindow, type LedgerRecord, type TxRecord } from "./history.ts";
import { headerWire, headerHash, ledgerCloseMeta } from "./entries.ts";
import { installBuiltins } from "./soroban/contracts.ts";
import { SnapshotFiles } from "./persist.ts";
import { BASE_FEE, BASE_RESERVE } from "../stellar/protocol.ts";

export const PROTOCOL_VERSION = 27;
export const TOTAL_COINS = 1_000_000_000_000_000_000n; // 100 billion XLM in stroops
export const VERSION = "localnet 0.1.0";

export interface LocalnetOptions {
  passphrase: string;
  /** Ledger close period; 0 closes ledgers only on demand (closeLedger()). */
  ledgerCloseMs?: number;
  /** Classic lane capacity in operations per ledger (ledger header maxTxSetSize). */
  maxTxSetSize?: number;
  /** Soroban lane capacity in transactions per ledger. */
  sorobanTxsPerLedger?: number;
  /** Directory whose snapshot survives restarts; none: fresh state each start. */
  dataDir?: string;
  /** Clock in milliseconds (tests may inject one). */
  now?: () => number;
  /** Accounts funded at genesis (stroops), e.g. an embedding relay's fee account. */
  genesisAccounts?: { id: string; balance: bigint }[];
}

export type { SubmitResult, SubmitStatus } from "./admission.ts";

export class Localnet implements LedgerStore {
  readonly passphrase: string;
  readonly networkId: Uint8Array;
  readonly root: Keypair;
  readonly ledgerCloseMs: number;
  readonly accounts = new Map<string, Account>();
  readonly data = new Map<string, ContractData>();
  header: LedgerHeaderState;
  readonly queue: TxQueue;
  readonly records = new Map<string, TxRecord>(); // by outer and inner hash
  readonly ledgers: LedgerRecord[] = [];
  readonly classicFees = new FeeWindow(10);
  readonly sorobanFees = new FeeWindow(50);
  readonly startedAt: number;
  private timer: ReturnType<typeof setInterval> | null = null;
  private readonly listeners = new Set<(l: LedgerRecord) => void>();
  private readonly capacity: LaneCapacity;
  private readonly files: SnapshotFiles | null;
  /** Entries written since the last close was persisted (a journal line holds only these). */
  private readonly dirtyAccounts = new Set<string>();
  private readonly dirtyData = new Set<string>();
  private readonly now: () => number;

  constructor(opts: LocalnetOptions) {
    this.passphrase = opts.passphrase;
    this.networkId = netId(opts.passphrase);
    this.root = Keypair.master(opts.passphrase);
    this.ledgerCloseMs = opts.ledgerCloseMs ?? 5000;
    this.now = opts.now ?? Date.now;
    this.files = opts.dataDir ? new SnapshotFiles(opts.dataDir, opts.passphrase) : null;
    const maxTxSetSize = opts.maxTxSetSize ?? 1000;
    this.capacity = { classic: maxTxSetSize, soroban: opts.sorobanTxsPerLedger ?? 2000 };
    this.queue = new TxQueue(this.capacity);
    this.startedAt = this.now();
    const snapshot = this.files?.load() ?? null;
    if (snapshot) {
      this.header = { ...snapshot.header, maxTxSetSize };
      for (const a of snapshot.accounts) this.accounts.set(a.id, a);
      for (const d of snapshot.data) this.data.set(d.key, d);
      for (const l of snapshot.ledgers) this.ledgers.push(l);
      for (const r of snapshot.records) this.indexRecord(r);
      for (const l of this.ledgers.slice(-50))
        this.pushFees(l.txHashes.map((h) => this.records.get(h)!).filter(Boolean));
    } else {
      const closeTime = BigInt(Math.floor(this.now() / 1000));
      this.header = {
        sequence: 1,
        closeTime,
        closeTimeMs: this.now(),
        hash: new Uint8Array(32),
        previousHash: new Uint8Array(32),
        baseFee: Number(BASE_FEE),
        baseReserve: Number(BASE_RESERVE),
        protocolVersion: PROTOCOL_VERSION,
        maxTxSetSize,
        totalCoins: TOTAL_COINS,
        feePool: 0n,
      };
      // genesis: the root account holds every lumen
      const funded = opts.genesisAccounts ?? [];
      const rootBalance = funded.reduce((left, a) => left - a.balance, TOTAL_COINS);
      this.accounts.set(this.root.publicKey(), newAccount(this.root.publicKey(), rootBalance, 0n, 1));
      for (const a of funded) this.accounts.set(a.id, newAccount(a.id, a.balance, 1n << 32n, 1));
      installBuiltins(this);
      this.recordLedger([], new Uint8Array(32));
    }
  }

  // ---- state access (LedgerStore) ----
  account(id: string): Account | undefined {
    return this.accounts.get(id);
  }
  contractData(key: string): ContractData | undefined {
    return this.data.get(key);
  }
  putAccount(a: Account): void {
    this.accounts.set(a.id, a);
    this.dirtyAccounts.add(a.id);
  }
  deleteAccount(id: string): void {
    this.accounts.delete(id);
    this.dirtyAccounts.add(id);
  }
  putContractData(d: ContractData): void {
    this.data.set(d.key, d);
    this.dirtyData.add(d.key);
  }

  get latestLedger(): LedgerRecord {
    return this.ledgers[this.ledgers.length - 1];
  }
  get oldestLedger(): LedgerRecord {
    return this.ledgers[0];
  }

  start(): void {
    if (this.timer || this.ledgerCloseMs <= 0) return;
    this.timer = setInterval(() => this.closeLedger(), this.ledgerCloseMs);
  }
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Calls `fn` after every ledger close; returns the unsubscribe function. */
  onLedgerClosed(fn: (l: LedgerRecord) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Resolves when a ledger with a sequence of at least `seq` has closed. */
  waitForLedger(seq: number): Promise<LedgerRecord> {
    if (this.latestLedger.sequence >= seq) return Promise.resolve(this.latestLedger);
    return new Promise((resolve) => {
      const off = this.onLedgerClosed((l) => {
        if (l.sequence >= seq) {
          off();
          resolve(l);
        }
      });
    });
  }

  /** Decodes and submits an envelope (sendTransaction). Throws on undecodable XDR. */
  submitXdr(envelope: Uint8Array): SubmitResult {
    return this.submit(toFrame(this.networkId, decodeEnvelope(envelope), envelope));
  }

  /** Admits a transaction into the queue (or says why not). */
  submit(f: Frame): SubmitResult {
    return admit(f, this.queueContext());
  }

  /** The queue, validity against the next ledger, and the slack on maxTime while queued. */
  private queueContext(): QueueContext {
    return {
      queue: this.queue,
      next: {
        state: this,
        ledgerSeq: this.header.sequence + 1,
        closeTime: this.header.closeTime,
        baseFee: this.header.baseFee,
        baseReserve: this.header.baseReserve,
        applying: false,
      },
      // two expected ledger closes plus the time since the last one
      slack: () => {
        const expected = BigInt(Math.ceil(Math.max(this.ledgerCloseMs, 1000) / 1000));
        const since = BigInt(Math.max(0, Math.floor((this.now() - this.header.closeTimeMs) / 1000)));
        return 2n * expected + since;
      },
    };
  }

  /** Closes the next ledger if a transaction waits for one (for ledgers closed on demand); the ledger, or null. */
  closeIfPending(): LedgerRecord | null {
    return this.queue.size > 0 ? this.closeLedger() : null;
  }

  /** Closes the next ledger: selects, applies and records transactions. */
  closeLedger(): LedgerRecord {
    const seq = this.header.sequence + 1;
    const nowMs = this.now();
    const closeTime = BigInt(Math.floor(nowMs / 1000));
    const set = buildTxSet(this.queue.frames(), this.capacity, this.header.baseFee);
    const chosen = set.frames;
    for (const f of chosen) this.queue.remove(f);
    const applied = applyTransactions(
      {
        store: this,
        ledgerSeq: seq,
        closeTime: closeTime > this.header.closeTime ? closeTime : this.header.closeTime,
        baseFee: this.header.baseFee,
        baseReserve: this.header.baseReserve,
        networkId: this.networkId,
        passphrase: this.passphrase,
      },
      chosen,
      set.laneBaseFee,
    );
    this.header = {
      ...this.header,
      sequence: seq,
      previousHash: this.header.hash,
      closeTime: closeTime > this.header.closeTime ? closeTime : this.header.closeTime,
      closeTimeMs: nowMs,
      feePool: this.header.feePool + applied.reduce((s, a) => s + a.feeCharged, 0n),
    };
    const txSetHash = sha256(...applied.map((a) => a.frame.hash));
    const ledger = this.recordLedger(applied, txSetHash);
    this.pushFees(applied.map((a) => this.records.get(a.frame.hashHex)!));
    trimQueue(seq, this.queueContext());
    this.persist(ledger);
    for (const fn of this.listeners) fn(ledger);
    return ledger;
  }

  /** Appends what this ledger changed to the data directory's journal (or writes a full snapshot when due). */
  private persist(ledger: LedgerRecord): void {
    this.files?.append(this, () => {
      const ids = [...this.dirtyAccounts];
      return {
        header: this.header,
        accounts: ids.map((id) => this.accounts.get(id)).filter((a) => a !== undefined),
        deleted: ids.filter((id) => !this.accounts.has(id)),
        data: [...this.dirtyData].map((k) => this.data.get(k)!),
        ledger,
        records: ledger.txHashes.map((h) => this.records.get(h)!),
      };
    });
    this.dirtyAccounts.clear();
    this.dirtyData.clear();
  }

  /** Adds one ledger's transactions to the fee statistics windows. */
  private pushFees(records: TxRecord[]): void {
    this.classicFees.push(records.filter((r) => !r.soroban).map((r) => r.feeSample));
    this.sorobanFees.push(records.filter((r) => r.soroban).map((r) => r.feeSample));
  }

  private recordLedger(applied: Applied[], txSetHash: Uint8Array): LedgerRecord {
    const h = this.header;
    const wire = headerWire(h, txSetHash);
    const hash = headerHash(wire);
    this.header = { ...h, hash };
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
    this.ledgers.push(ledger);
    for (const [i, a] of applied.entries()) this.indexRecord(this.toRecord(a, ledger, i + 1));
    return ledger;
  }

  private toRecord(a: Applied, ledger: LedgerRecord, order: number): TxRecord {
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

  private indexRecord(r: TxRecord): void {
    this.records.set(r.hash, r);
    if (r.innerHash) this.records.set(r.innerHash, r);
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
}
