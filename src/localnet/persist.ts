/**
 * Localnet persistence in a data directory, so that accounts and recent history survive a restart.
 * Every ledger close appends one line to a journal: the header, the entries that ledger changed and
 * its transactions (cost proportional to the ledger, not to the whole state). Every
 * COMPACT_LEDGERS ledgers the whole state is written as a snapshot (atomically, by rename) and the
 * journal starts afresh. Loading reads the snapshot and replays the journal; a last line cut short by
 * a crash is ignored (that ledger was not acknowledged to anyone: its listeners run after the append).
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Account, ContractData, LedgerHeaderState, StateChanges } from "./state.ts";
import type { LedgerRecord, TxRecord } from "./history.ts";

export interface Snapshot {
  passphrase: string;
  header: LedgerHeaderState;
  accounts: Account[];
  data: ContractData[];
  ledgers: LedgerRecord[];
  records: TxRecord[];
}

/** What one ledger close changed: a journal line. */
export interface LedgerChanges {
  header: LedgerHeaderState;
  accounts: Account[];
  deleted: string[];
  data: ContractData[];
  ledger: LedgerRecord;
  records: TxRecord[];
}

/** The state as the localnet holds it (what a full snapshot is made of). */
export interface NetState {
  passphrase: string;
  header: LedgerHeaderState;
  state: { accounts: Map<string, Account>; data: Map<string, ContractData>; changes(): StateChanges };
  history: { ledgers: LedgerRecord[]; records: Map<string, TxRecord> };
}

/** History kept across restarts (ledgers); older ledgers and their transactions are dropped. */
const KEEP_LEDGERS = 2000;
/** Journal lines between two full snapshots. */
const COMPACT_LEDGERS = 1000;

const replacer = (_k: string, v: unknown): unknown => {
  if (typeof v === "bigint") return { $n: v.toString() };
  if (v instanceof Uint8Array) return { $b: Buffer.from(v).toString("base64") };
  if (v instanceof Map) return { $m: [...v.entries()] };
  return v;
};
const reviver = (_k: string, v: unknown): unknown => {
  if (v && typeof v === "object") {
    const o = v as Record<string, unknown>;
    if (typeof o.$n === "string") return BigInt(o.$n);
    if (typeof o.$b === "string") return new Uint8Array(Buffer.from(o.$b, "base64"));
    if (Array.isArray(o.$m)) return new Map(o.$m as [unknown, unknown][]);
  }
  return v;
};

export class SnapshotFiles {
  private readonly file: string;
  private readonly journal: string;
  /** Lines in the journal since the last full snapshot. */
  private lines = 0;

  constructor(
    private readonly dir: string,
    private readonly passphrase: string,
  ) {
    const id = new Bun.CryptoHasher("sha256").update(passphrase).digest("hex").slice(0, 12);
    this.file = join(dir, `localnet-${id}.json`);
    this.journal = join(dir, `localnet-${id}.journal`);
  }

  /** The snapshot with the journal replayed onto it, or null when there is none (for this passphrase). */
  load(): Snapshot | null {
    if (!existsSync(this.file)) return null;
    const s = JSON.parse(readFileSync(this.file, "utf8"), reviver) as Snapshot;
    if (s.passphrase !== this.passphrase) return null;
    if (!existsSync(this.journal)) return s;
    const accounts = new Map(s.accounts.map((a) => [a.id, a]));
    const data = new Map(s.data.map((d) => [d.key, d]));
    for (const line of readFileSync(this.journal, "utf8").split("\n")) {
      let c: LedgerChanges;
      try {
        c = JSON.parse(line, reviver) as LedgerChanges;
      } catch {
        continue; // an empty last line, or one a crash cut short
      }
      if (c.header.sequence <= s.header.sequence) continue;
      s.header = c.header;
      for (const a of c.accounts) accounts.set(a.id, a);
      for (const id of c.deleted) accounts.delete(id);
      for (const d of c.data) data.set(d.key, d);
      s.ledgers.push(c.ledger);
      s.records.push(...c.records);
      this.lines++;
    }
    s.accounts = [...accounts.values()];
    s.data = [...data.values()];
    s.ledgers = s.ledgers.slice(-KEEP_LEDGERS);
    const kept = new Set(s.ledgers.flatMap((l) => l.txHashes));
    s.records = s.records.filter((r) => kept.has(r.hash));
    return s;
  }

  /**
   * Records one closed ledger (its header is `net.header`): a journal line of what it changed, or a
   * full snapshot when one is due (or none exists yet).
   */
  append(net: NetState, closed: { ledger: LedgerRecord; records: TxRecord[] }): void {
    if (this.lines >= COMPACT_LEDGERS || !existsSync(this.file)) {
      this.save(net);
      return;
    }
    const line: LedgerChanges = { header: net.header, ...net.state.changes(), ...closed };
    appendFileSync(this.journal, `${JSON.stringify(line, replacer)}\n`);
    this.lines++;
  }

  /** Writes the whole state and starts a new journal. */
  save(net: NetState): void {
    mkdirSync(this.dir, { recursive: true });
    const ledgers = net.history.ledgers.slice(-KEEP_LEDGERS);
    const records = ledgers.flatMap((l) => l.txHashes.map((h) => net.history.records.get(h)!).filter(Boolean));
    const snap: Snapshot = {
      passphrase: net.passphrase,
      header: net.header,
      accounts: [...net.state.accounts.values()],
      data: [...net.state.data.values()],
      ledgers,
      records,
    };
    writeFileSync(`${this.file}.tmp`, JSON.stringify(snap, replacer));
    renameSync(`${this.file}.tmp`, this.file);
    writeFileSync(this.journal, "");
    this.lines = 0;
  }
}
