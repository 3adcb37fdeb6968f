/** What applying one classic operation knows of its ledger and its transaction. */
import type { ContractEventW } from "../stellar/xdr.ts";
import type { SponsorContext } from "./sponsorship.ts";

export interface OpContext extends SponsorContext {
  ledgerSeq: number;
  closeTime: bigint;
  baseReserve: number;
  /** Sequence number ledgerSeq << 32, the starting sequence of new accounts. */
  startingSeq: bigint;
  /** The operation's source account's key, raw (for its events). */
  sourceKey: Uint8Array;
  /** The network's id (the contract ids of assets, for events). */
  networkId: Uint8Array;
  /** The operation's events (CAP-67), appended as it moves value. */
  events: ContractEventW[];
}
