/**
 * Localnet snapshots: the ledger state and recent history as JSON in a data directory, written
 * atomically after every ledger close so that accounts survive a restart.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import type { Account, ContractData, LedgerHeaderState } from "./state.ts";
import type { LedgerRecord, TxRecord } from "./history.ts";

export interface Snapshot {
  passphrase: string;
  header: LedgerHeaderState;
  accounts: Account[];
  data: ContractData[];
  ledgers: LedgerRecord[];
  records: TxRecord[];
}

/** History kept across restarts (ledgers); older ledgers and their transactions are dropped. */
const KEEP_LEDGERS = 2000;

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

const fileFor = (dir: string, passphrase: string) =>
  join(dir, `localnet-${new Bun.CryptoHasher("sha256").update(passphrase).digest("hex").slice(0, 12)}.json`);

export function loadSnapshot(dir: string, passphrase: string): Snapshot | null {
  const file = fileFor(dir, passphrase);
  if (!existsSync(file)) return null;
  const s = JSON.parse(readFileSync(file, "utf8"), reviver) as Snapshot;
  return s.passphrase === passphrase ? s : null;
}

export function saveSnapshot(
  dir: string,
  net: {
    passphrase: string;
    header: LedgerHeaderState;
    accounts: Map<string, Account>;
    data: Map<string, ContractData>;
    ledgers: LedgerRecord[];
    records: Map<string, TxRecord>;
  },
): void {
  mkdirSync(dir, { recursive: true });
  const ledgers = net.ledgers.slice(-KEEP_LEDGERS);
  const records = ledgers.flatMap((l) => l.txHashes.map((h) => net.records.get(h)!).filter(Boolean));
  const snap: Snapshot = {
    passphrase: net.passphrase,
    header: net.header,
    accounts: [...net.accounts.values()],
    data: [...net.data.values()],
    ledgers,
    records,
  };
  const file = fileFor(dir, net.passphrase);
  writeFileSync(`${file}.tmp`, JSON.stringify(snap, replacer));
  renameSync(`${file}.tmp`, file);
}
