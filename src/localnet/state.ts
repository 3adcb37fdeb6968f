/**
 * Ledger state of localnet: accounts, contract data and the last closed ledger header; the
 * committed state (RootState, which knows what changed since the last close) and a copy-on-write
 * overlay on top of it used to apply one transaction atomically.
 */

/** TrustLineFlags. */
export const TrustFlags = { authorized: 1, maintainLiabilities: 2, clawbackEnabled: 4 } as const;

/** A trustline (a subentry of its account): a credit asset's balance and limit. */
export interface TrustLine {
  /** "CODE:ISSUER". */
  asset: string;
  balance: bigint;
  limit: bigint;
  flags: number;
  /** The account that pays its reserve (CAP-33), or null: its owner. */
  sponsor: string | null;
}

/** A classic account, as far as localnet models it. */
export interface Account {
  id: string; // G-address
  balance: bigint;
  seqNum: bigint;
  numSubEntries: number;
  /** [master weight, low, medium, high]. */
  thresholds: [number, number, number, number];
  /** Ed25519 signers, sorted by key; `sponsor` pays the signer's reserve (CAP-33). */
  signers: { key: string; weight: number; sponsor?: string | null }[];
  data: Map<string, Uint8Array>;
  /** The sponsors of data entries that have one (by name). */
  dataSponsors: Map<string, string>;
  /** Trustlines by asset ("CODE:ISSUER"). */
  trustlines: Map<string, TrustLine>;
  /** Reserves this account pays for others' entries, and others pay for its own (CAP-33). */
  numSponsoring: number;
  numSponsored: number;
  /** Who paid the account entry's reserve (a sponsored createAccount), or null. */
  sponsor: string | null;
  homeDomain: string;
  flags: number;
  /** Ledger and close time of the last sequence number change (AccountEntryExtensionV3). */
  seqLedger: number;
  seqTime: bigint;
  lastModified: number;
}

/** A contract data entry, keyed by the base64 XDR of its LedgerKey. */
export interface ContractData {
  key: string; // base64 LedgerKey
  entry: Uint8Array; // LedgerEntryData XDR (contractData arm)
  liveUntil: number;
  lastModified: number;
}

export interface LedgerHeaderState {
  sequence: number;
  closeTime: bigint; // unix seconds
  closeTimeMs: number;
  hash: Uint8Array;
  previousHash: Uint8Array;
  baseFee: number;
  baseReserve: number;
  protocolVersion: number;
  maxTxSetSize: number;
  totalCoins: bigint;
  feePool: bigint;
}

export function cloneAccount(a: Account): Account {
  return {
    ...a,
    thresholds: [...a.thresholds] as Account["thresholds"],
    signers: a.signers.map((s) => ({ ...s })),
    data: new Map(a.data),
    dataSponsors: new Map(a.dataSponsors),
    trustlines: a.trustlines.size === 0 ? new Map() : new Map([...a.trustlines].map(([k, t]) => [k, { ...t }])),
  };
}

/** An account as stored before trustlines and sponsorship were modelled, with their empty defaults. */
export const withDefaults = (a: Account): Account => ({
  ...a,
  dataSponsors: a.dataSponsors ?? new Map(),
  trustlines: a.trustlines ?? new Map(),
  numSponsoring: a.numSponsoring ?? 0,
  numSponsored: a.numSponsored ?? 0,
  sponsor: a.sponsor ?? null,
});

/** A new account: like stellar-core's createAccount it has no sequence ledger/time yet (0). */
export function newAccount(id: string, balance: bigint, seqNum: bigint, ledger: number): Account {
  return {
    id,
    balance,
    seqNum,
    numSubEntries: 0,
    thresholds: [1, 0, 0, 0],
    signers: [],
    data: new Map(),
    dataSponsors: new Map(),
    trustlines: new Map(),
    numSponsoring: 0,
    numSponsored: 0,
    sponsor: null,
    homeDomain: "",
    flags: 0,
    seqLedger: 0,
    seqTime: 0n,
    lastModified: ledger,
  };
}

/** Read access shared by the ledger and its overlays. */
export interface StateReader {
  account(id: string): Account | undefined;
  contractData(key: string): ContractData | undefined;
}

/** The ledger's state as apply writes it. */
export interface LedgerStore extends StateReader {
  putAccount(a: Account): void;
  deleteAccount(id: string): void;
  putContractData(d: ContractData): void;
}

/** What changed in the committed state since the last close (a journal line's entries). */
export interface StateChanges {
  accounts: Account[];
  deleted: string[];
  data: ContractData[];
}

/** The committed state, with the keys written since the last close. */
export class RootState implements LedgerStore {
  readonly accounts = new Map<string, Account>();
  readonly data = new Map<string, ContractData>();
  private readonly dirtyAccounts = new Set<string>();
  private readonly dirtyData = new Set<string>();

  /** Sets entries without counting them as changes (a snapshot loaded, genesis accounts). */
  load(accounts: Iterable<Account>, data: Iterable<ContractData> = []): void {
    for (const a of accounts) this.accounts.set(a.id, withDefaults(a));
    for (const d of data) this.data.set(d.key, d);
  }

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

  /** The entries written since the last `clearChanges()`, as they are now. */
  changes(): StateChanges {
    const ids = [...this.dirtyAccounts];
    return {
      accounts: ids.map((id) => this.accounts.get(id)).filter((a) => a !== undefined),
      deleted: ids.filter((id) => !this.accounts.has(id)),
      data: [...this.dirtyData].map((k) => this.data.get(k)!),
    };
  }
  clearChanges(): void {
    this.dirtyAccounts.clear();
    this.dirtyData.clear();
  }
}

/**
 * Changes on top of a reader. `account()` returns a private clone on first access through
 * `loadAccount`, so a failed transaction is rolled back by dropping the overlay.
 */
export class Overlay implements StateReader {
  readonly accounts = new Map<string, Account | null>();
  readonly data = new Map<string, ContractData | null>();
  constructor(readonly parent: StateReader) {}

  account(id: string): Account | undefined {
    const own = this.accounts.get(id);
    if (own !== undefined) return own ?? undefined;
    return this.parent.account(id);
  }
  /** The account for writing (cloned into this overlay). */
  loadAccount(id: string): Account | undefined {
    const own = this.accounts.get(id);
    if (own !== undefined) return own ?? undefined;
    const base = this.parent.account(id);
    if (!base) return undefined;
    const copy = cloneAccount(base);
    this.accounts.set(id, copy);
    return copy;
  }
  putAccount(a: Account): void {
    this.accounts.set(a.id, a);
  }
  deleteAccount(id: string): void {
    this.accounts.set(id, null);
  }

  contractData(key: string): ContractData | undefined {
    const own = this.data.get(key);
    if (own !== undefined) return own ?? undefined;
    return this.parent.contractData(key);
  }
  putContractData(d: ContractData): void {
    this.data.set(d.key, d);
  }

  /** Moves the changes into `target` (the ledger or an outer overlay). */
  commitTo(
    target: { putAccount(a: Account): void; deleteAccount(id: string): void; putContractData(d: ContractData): void },
    ledgerSeq: number,
  ): void {
    for (const [id, a] of this.accounts) {
      if (a) {
        a.lastModified = ledgerSeq;
        target.putAccount(a);
      } else target.deleteAccount(id);
    }
    for (const d of this.data.values())
      if (d) {
        d.lastModified = ledgerSeq;
        target.putContractData(d);
      }
  }
}

/** Minimum balance: (2 + subentries + reserves it sponsors - reserves sponsored for it) base reserves. */
export const minBalance = (a: Account, baseReserve: number, more = 0): bigint =>
  BigInt(2 + a.numSubEntries + a.numSponsoring - a.numSponsored + more) * BigInt(baseReserve);
/** Balance above the reserve. */
export const availableBalance = (a: Account, baseReserve: number): bigint => a.balance - minBalance(a, baseReserve);
