/**
 * The Stellar networks a relay can serve, as one table: each one's name, the passphrase of the public
 * network, its CAIP-2 id (x402), whether sponsoring there draws on a project's credits, which API keys
 * reach it, and the prefix of its settings. Every per-network fact is read from here.
 */
import { Networks } from "@stellar/stellar-sdk";

export type NetworkName = "testnet" | "mainnet";
/** An API key's environment: `sr_test_` keys reach testnet, `sr_live_` keys mainnet. */
export type KeyEnvironment = "test" | "live";

export interface NetworkSpec {
  readonly name: NetworkName;
  /** The public network's passphrase (an embedded network takes it too, so that wallets sign alike). */
  readonly publicPassphrase: string;
  /** Its CAIP-2 id, as x402 names it. */
  readonly caip2: string;
  /** Whether sponsoring there is paid from the project's credit balance. */
  readonly chargesCredits: boolean;
  /** The environment of the keys that reach it. */
  readonly keyEnvironment: KeyEnvironment;
  /** Whether a caller without an API key may use it (the open relay). */
  readonly keyless: boolean;
  /** Its settings: <prefix>_RPC_URL, _PASSPHRASE, _FUNDER_SECRET, _FUNDER_SIGNER, _CHANNELS, _CHANNELS_MAX. */
  readonly settings: "TESTNET" | "MAINNET";
}

export const NETWORK_SPECS: readonly NetworkSpec[] = [
  {
    name: "testnet",
    publicPassphrase: Networks.TESTNET,
    caip2: "stellar:testnet",
    chargesCredits: false,
    keyEnvironment: "test",
    keyless: true,
    settings: "TESTNET",
  },
  {
    name: "mainnet",
    publicPassphrase: Networks.PUBLIC,
    caip2: "stellar:pubnet",
    chargesCredits: true,
    keyEnvironment: "live",
    keyless: false,
    settings: "MAINNET",
  },
];

export const NETWORKS: readonly NetworkName[] = NETWORK_SPECS.map((s) => s.name);

const BY_NAME = new Map(NETWORK_SPECS.map((s) => [s.name, s]));

/** The spec of a network. */
export const specOf = (name: NetworkName): NetworkSpec => BY_NAME.get(name)!;

/** Whether sponsoring on `name` is paid from credits. */
export const chargesCredits = (name: NetworkName): boolean => specOf(name).chargesCredits;

/** The network a CAIP-2 id names (null: not a Stellar network the relay knows). */
export const networkOfCaip2 = (caip2: string): NetworkName | null =>
  NETWORK_SPECS.find((s) => s.caip2 === caip2)?.name ?? null;

/** Whether `name` is a network's name. */
export const isNetworkName = (name: string): name is NetworkName => BY_NAME.has(name as NetworkName);

/** The network a caller without an API key reaches. */
export const KEYLESS_NETWORK: NetworkName = NETWORK_SPECS.find((s) => s.keyless)!.name;

/** The network an API key of `environment` reaches. */
export const networkOfKeys = (environment: KeyEnvironment): NetworkName =>
  NETWORK_SPECS.find((s) => s.keyEnvironment === environment)!.name;
