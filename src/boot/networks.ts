/**
 * Which networks a relay serves and how: embedded localnets (their funder, its genesis balance) or
 * upstream RPCs; what an instance embeds, which makes it the only one on its data.
 */
import { Keypair } from "@stellar/stellar-sdk";
import type { Config } from "../config.ts";
import { NETWORKS, type NetworkName, specOf } from "../stellar/networks.ts";

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

/** One network's settings, by the prefix its spec names (TESTNET_RPC_URL, MAINNET_RPC_URL, ...). */
export function settingsOf(c: Config, name: NetworkName) {
  const p = specOf(name).settings;
  const channels = c[`${p}_CHANNELS`];
  return {
    /** Its upstream RPC; none: an embedded localnet. */
    upstream: c[`${p}_RPC_URL`],
    secret: c[`${p}_FUNDER_SECRET`],
    /** The funder's key in a PKCS#11 token (a URI), instead of its seed; and the setting's name. */
    signer: c[`${p}_FUNDER_SIGNER`],
    signerSetting: `${p}_FUNDER_SIGNER`,
    channels,
    /** The most channels demand may grow its pool to (default 8 times its count). */
    channelMax: c[`${p}_CHANNELS_MAX`] ?? 8 * channels,
    passphrase: c[`${p}_PASSPHRASE`],
  };
}

/** The networks this relay serves (NETWORKS). */
export const servedNetworks = (config: Config): NetworkName[] =>
  NETWORKS.filter((n) => config.NETWORKS.split(",").includes(n));

/** What this instance embeds, each of which serves one instance only: none for an instance of a cluster. */
export function embeddedParts(config: Config): string[] {
  return [
    ...(config.DATABASE_URL ? [] : ["PGlite (no DATABASE_URL)"]),
    ...(config.REDIS_URL ? [] : ["in-memory limits and leases (no REDIS_URL)"]),
    ...servedNetworks(config)
      .filter((n) => !settingsOf(config, n).upstream)
      .map((n) => `an embedded ${n} (no ${specOf(n).settings}_RPC_URL; NETWORKS=${config.NETWORKS})`),
  ];
}

/** Whether this instance must be the only one: it uses something embedded (PGlite, in-memory Redis, a localnet). */
export const singleInstance = (config: Config): boolean => embeddedParts(config).length > 0;
