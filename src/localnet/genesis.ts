/**
 * A fresh network's first ledger: the root account holds every lumen not given to the genesis
 * accounts, the built-in contracts are installed, and ledger 1 is sealed with no transactions.
 */
import { BASE_FEE, BASE_RESERVE } from "../stellar/protocol.ts";
import { newAccount, type LedgerHeaderState, type RootState } from "./state.ts";
import { installBuiltins } from "./soroban/contracts.ts";
import { sealLedger, type Closed } from "./close.ts";

export const PROTOCOL_VERSION = 27;
export const TOTAL_COINS = 1_000_000_000_000_000_000n; // 100 billion XLM in stroops

export interface GenesisOptions {
  passphrase: string;
  /** The root account (the passphrase's master key). */
  root: string;
  /** Accounts funded at genesis (stroops). */
  funded: { id: string; balance: bigint }[];
  maxTxSetSize: number;
  nowMs: number;
}

/** Writes the genesis state into `state` and returns ledger 1. */
export function genesis(state: RootState, o: GenesisOptions): Closed {
  const header: LedgerHeaderState = {
    sequence: 1,
    closeTime: BigInt(Math.floor(o.nowMs / 1000)),
    closeTimeMs: o.nowMs,
    hash: new Uint8Array(32),
    previousHash: new Uint8Array(32),
    baseFee: Number(BASE_FEE),
    baseReserve: Number(BASE_RESERVE),
    protocolVersion: PROTOCOL_VERSION,
    maxTxSetSize: o.maxTxSetSize,
    totalCoins: TOTAL_COINS,
    feePool: 0n,
  };
  const rootBalance = o.funded.reduce((left, a) => left - a.balance, TOTAL_COINS);
  state.load([
    newAccount(o.root, rootBalance, 0n, 1),
    ...o.funded.map((a) => newAccount(a.id, a.balance, 1n << 32n, 1)),
  ]);
  installBuiltins({ passphrase: o.passphrase, header, putContractData: (d) => state.putContractData(d) });
  return sealLedger(header, [], new Uint8Array(32));
}
