/**
 * Which networks a relay serves and how: embedded localnets (their funder, its genesis balance) or
 * upstream RPCs; what an instance embeds, which makes it the only one on its data.
 */
import { Keypair, Networks } from "@stellar/stellar-sdk";
import type { Config } from "../config.ts";
import { NETWORKS, type NetworkName } from "../network/gateway.ts";

export const PUBLIC_PASSPHRASES: Record<NetworkName, string> = { testnet: Networks.TESTNET, mainnet: Networks.PUBLIC };

/**
 * The embedded network's funder account: derived from its passphrase (local lumens only, like the
 * root account; the seed string predates the pool, so existing localnet data stays valid).
 */
export const localFunder = (passphrase: string): Keypair =>
  Keypair.fromRawEd25519Seed(
    new Uint8Array(
      new Bun.CryptoHasher("sha256").update(`stellar-sponsor-relay/localnet-sponsor/${passphrase}`).digest(),
    ),
  );

/** The embedded funder's genesis balance: 1,000,000 XLM. */
export const LOCAL_FUNDER_STROOPS = 10_000_000_000_000n;

export const perNetwork = <T>(testnet: T, mainnet: T): Record<NetworkName, T> => ({ testnet, mainnet });

/** The networks' settings: an upstream RPC (or an embedded localnet), funder, channel count, passphrase. */
export const networkSettings = (c: Config) => ({
  upstream: perNetwork(c.TESTNET_RPC_URL, c.MAINNET_RPC_URL),
  secrets: perNetwork(c.TESTNET_FUNDER_SECRET, c.MAINNET_FUNDER_SECRET),
  /** The funders' keys in PKCS#11 tokens (URIs), instead of their seeds. */
  signers: perNetwork(c.TESTNET_FUNDER_SIGNER, c.MAINNET_FUNDER_SIGNER),
  channelCounts: perNetwork(c.TESTNET_CHANNELS, c.MAINNET_CHANNELS),
  /** The most channels demand may grow each pool to (default 8 times its count). */
  channelMax: perNetwork(
    c.TESTNET_CHANNELS_MAX ?? 8 * c.TESTNET_CHANNELS,
    c.MAINNET_CHANNELS_MAX ?? 8 * c.MAINNET_CHANNELS,
  ),
  passphrases: perNetwork(c.TESTNET_PASSPHRASE, c.MAINNET_PASSPHRASE),
});

/** The networks this relay serves (NETWORKS). */
export const servedNetworks = (config: Config): NetworkName[] =>
  NETWORKS.filter((n) => config.NETWORKS.split(",").includes(n));

/** What this instance embeds, each of which serves one instance only: none for an instance of a cluster. */
export function embeddedParts(config: Config): string[] {
  const upstream = networkSettings(config).upstream;
  return [
    ...(config.DATABASE_URL ? [] : ["PGlite (no DATABASE_URL)"]),
    ...(config.REDIS_URL ? [] : ["in-memory limits and leases (no REDIS_URL)"]),
    ...servedNetworks(config)
      .filter((n) => !upstream[n])
      .map((n) => `an embedded ${n} (no ${n.toUpperCase()}_RPC_URL; NETWORKS=${config.NETWORKS})`),
  ];
}

/** Whether this instance must be the only one: it uses something embedded (PGlite, in-memory Redis, a localnet). */
export const singleInstance = (config: Config): boolean => embeddedParts(config).length > 0;
