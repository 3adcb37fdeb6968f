/** What a network's channel pool is built from: its settings, its collaborators, its notices to other instances. */
import type { Keypair } from "@stellar/stellar-sdk";
import type { Logger } from "../../kernel/log.ts";
import type { FeePercentile, Gateway } from "../../network/gateway.ts";
import type { NetworkName } from "../../stellar/networks.ts";
import type { Submitter } from "../../network/submitter.ts";
import type { ChannelsRepo } from "../../store/channels.repo.ts";
import type { Coordination } from "./ownership.ts";
import type { ChannelKeys } from "./channel-keys.ts";

/** A change to a network's pool that every instance applies (several instances share Redis). */
export type PoolNotice =
  | { topic: "pool"; network: NetworkName }
  | { topic: "channel-credit"; network: NetworkName; publicKey: string; amount: string };

export interface PoolConfig {
  /** The channel count of a new pool (the operator's target, once set, is kept in Postgres). */
  channels: number;
  startingBalance: bigint;
  /** A channel whose balance falls under this is topped up to the starting balance. */
  topUpThreshold: bigint;
  /** How long a fee-bump's request waits for a channel that can pay before 503 (a func+auth one: its deadline). */
  waitMs: number;
  /** The most channels demand may grow the pool to (default: `channels`: no growth). */
  max?: number;
  /** How long no request may wait before the channels added for demand are retired. */
  idleMs?: number;
  feePercentile: FeePercentile;
}

export interface PoolDeps {
  network: NetworkName;
  gateway: Gateway;
  submitter: Submitter;
  funder: Keypair;
  repo: ChannelsRepo;
  /** Where the channels' keys are kept (sealed, or in a PKCS#11 token). */
  keys: ChannelKeys;
  config: PoolConfig;
  log: Logger;
  /** Waits for a channel, for GET /metrics. */
  metrics?: { channelWait(network: string, outcome: "served" | "refused", seconds: number): void };
  /** Several instances: the coordination, and how to tell the others of a change. */
  cluster?: { coordination: Coordination; tell(n: PoolNotice): Promise<void> } | null;
}
