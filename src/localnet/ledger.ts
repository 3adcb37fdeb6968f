/**
 * Localnet: an in-process Stellar network. It holds the ledger state, the transaction queue and
 * the history, and runs them as stellar-core's herder does: submissions go through the queue's
 * admission (admission.ts), ledgers close on a timer (or on demand) with a transaction set chosen by
 * surge pricing (surge.ts), applied and recorded as the ledger manager does (close.ts), then
 * persisted (persist.ts) and the queue trimmed.
 */
import { Keypair } from "@stellar/stellar-sdk";
import { networkId as netId } from "../stellar/xdr.ts";
import { RootState, type Account, type ContractData, type LedgerHeaderState } from "./state.ts";
import { toFrame, decodeEnvelope, type Frame } from "./frame.ts";
import { TxQueue } from "./queue.ts";
import { admit, trimQueue, type QueueContext, type SubmitResult } from "./admission.ts";
import { buildTxSet, type LaneCapacity } from "./surge.ts";
import { closeLedger, type Closed } from "./close.ts";
import { genesis } from "./genesis.ts";
import { History, type FeeWindow, type LedgerRecord, type TxRecord } from "./history.ts";
import { SnapshotFiles } from "./persist.ts";

export { PROTOCOL_VERSION, TOTAL_COINS } from "./genesis.ts";
export type { SubmitResult, SubmitStatus } from "./admission.ts";
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

export class Localnet {
  readonly passphrase: string;
  readonly networkId: Uint8Array;
  readonly root: Keypair;
  readonly ledgerCloseMs: number;
  /** The last closed ledger's header. */
  header: LedgerHeaderState;
  readonly state = new RootState();
  readonly queue: TxQueue;
  readonly history = new History();
  readonly startedAt: number;
  private timer: ReturnType<typeof setInterval> | null = null;
  private readonly listeners = new Set<(l: LedgerRecord) => void>();
  private readonly capacity: LaneCapacity;
  private readonly files: SnapshotFiles | null;
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
      this.state.load(snapshot.accounts, snapshot.data);
      this.history.restore(snapshot.ledgers, snapshot.records);
    } else {
      const first = genesis(this.state, {
        passphrase: this.passphrase,
        root: this.root.publicKey(),
        funded: opts.genesisAccounts ?? [],
        maxTxSetSize,
        nowMs: this.now(),
      });
      this.header = first.header;
      this.history.add(first.ledger, first.records);
    }
  }

  // ---- reads ----
  account(id: string): Account | undefined {
    return this.state.account(id);
  }
  contractData(key: string): ContractData | undefined {
    return this.state.contractData(key);
  }
  /** Applied transactions by outer and inner hash. */
  get records(): Map<string, TxRecord> {
    return this.history.records;
  }
  get ledgers(): LedgerRecord[] {
    return this.history.ledgers;
  }
  get classicFees(): FeeWindow {
    return this.history.classicFees;
  }
  get sorobanFees(): FeeWindow {
    return this.history.sorobanFees;
  }
  get latestLedger(): LedgerRecord {
    return this.history.latest;
  }
  get oldestLedger(): LedgerRecord {
    return this.history.oldest;
  }
  /** Applied transactions in ledger order, starting at a ledger (getTransactions). */
  transactionsFrom(startLedger: number, skip: number, limit: number): TxRecord[] {
    return this.history.transactionsFrom(startLedger, skip, limit);
  }

  // ---- the clock ----
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

  // ---- submission ----
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
        state: this.state,
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

  // ---- ledger close ----
  /** Closes the next ledger if a transaction waits for one (for ledgers closed on demand); the ledger, or null. */
  closeIfPending(): LedgerRecord | null {
    return this.queue.size > 0 ? this.closeLedger() : null;
  }

  /** Closes the next ledger: selects, applies and records transactions, persists, trims the queue. */
  closeLedger(): LedgerRecord {
    const nowMs = this.now();
    const set = buildTxSet(this.queue.frames(), this.capacity, this.header.baseFee);
    for (const f of set.frames) this.queue.remove(f);
    const closed = closeLedger(set, {
      header: this.header,
      store: this.state,
      networkId: this.networkId,
      passphrase: this.passphrase,
      nowMs,
    });
    this.header = closed.header;
    this.history.add(closed.ledger, closed.records);
    this.history.sampleFees(closed.records);
    trimQueue(closed.header.sequence, this.queueContext());
    this.persist(closed);
    for (const fn of this.listeners) fn(closed.ledger);
    return closed.ledger;
  }

  /** Appends what this ledger changed to the data directory's journal (or writes a full snapshot when due). */
  private persist({ ledger, records }: Closed): void {
    this.files?.append(this, { ledger, records });
    this.state.clearChanges();
  }
}
