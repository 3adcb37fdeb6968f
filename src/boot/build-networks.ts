/**
 * The served networks, built in one place: for each, an embedded localnet (no upstream RPC URL) or
 * the upstream's passphrase read, its gateway, its submit loop and, when it has a funder, its
 * channel pool (built here, started by `startNetworks` once the relay listens).
 */
import { join } from "node:path";
import { Keypair } from "@stellar/stellar-sdk";
import type { Config } from "../config.ts";
import type { Logger } from "../kernel/log.ts";
import type { RelayMetrics } from "../kernel/metrics.ts";
import type { SecretBox } from "../kernel/secret-box.ts";
import { Localnet } from "../localnet/ledger.ts";
import { createRpcMethods, inProcessTransport } from "../localnet/rpc.ts";
import { Gateway } from "../network/gateway.ts";
import { type NetworkName, specOf } from "../stellar/networks.ts";
import { RETRY_POLICY } from "../network/submit-protocol.ts";
import { Submitter } from "../network/submitter.ts";
import type { ChannelsRepo } from "../store/channels.repo.ts";
import type { Cluster } from "../store/cluster.ts";
import { type Network, Networks } from "../features/networks/networks.ts";
import { ChannelPool } from "../features/pool/channel-pool.ts";
import { channelKeys } from "../features/pool/channel-keys.ts";
import type { Signers } from "./signers.ts";
import { LOCAL_FUNDER_STROOPS, localFunder, servedNetworks, settingsOf } from "./networks.ts";
import { calledOff, startLocalPool, startUpstreamPool } from "./steps.ts";

export interface NetworkParts {
  config: Config;
  log: Logger;
  metrics: RelayMetrics;
  channels: ChannelsRepo;
  box: SecretBox;
  cluster: Cluster | null;
  /** Keys in PKCS#11 tokens: funders, and the channels' token. */
  signers: Signers;
}

/** Builds every served network; `built` receives each as it is made (so that a failed start closes it). */
export async function buildNetworks(parts: NetworkParts, built: (n: Network) => void): Promise<Networks> {
  const networks: Network[] = [];
  for (const name of servedNetworks(parts.config)) {
    const n = await buildNetwork(name, parts);
    built(n);
    networks.push(n);
  }
  return new Networks(networks);
}

async function buildNetwork(name: NetworkName, parts: NetworkParts): Promise<Network> {
  const { config, log, metrics } = parts;
  const spec = specOf(name);
  const { upstream, secret, passphrase } = settingsOf(config, name);
  const localnet = upstream
    ? undefined
    : new Localnet({
        passphrase: spec.publicPassphrase,
        ledgerCloseMs: config.LEDGER_CLOSE_MS,
        maxTxSetSize: config.LOCALNET_MAX_TX_SET_SIZE,
        dataDir: join(config.DATA_DIR, "localnet"),
        genesisAccounts: [{ id: localFunder(spec.publicPassphrase).publicKey(), balance: LOCAL_FUNDER_STROOPS }],
      });
  const gateway = new Gateway({
    name,
    rpcUrl: upstream ?? `in-process:${name}`,
    // an embedded network is called in-process: no loopback HTTP on the request path
    transport: localnet ? inProcessTransport(createRpcMethods(localnet)) : undefined,
    upstream: localnet ? "localnet" : new URL(upstream!).host,
    passphrase: localnet ? localnet.passphrase : passphrase,
    pollMs: config.WATCHER_POLL_MS,
    fastPollMs: config.WATCHER_FAST_POLL_MS,
    timeoutMs: config.RPC_TIMEOUT_MS,
    log,
    metrics,
  });
  await gateway.start().catch((e) => {
    throw new Error(
      `cannot read the ${name} network's passphrase from ${upstream}: ` +
        `set ${spec.settings}_PASSPHRASE or make it reachable (${e instanceof Error ? e.message : e})`,
    );
  });
  const submitter = new Submitter(gateway, log, { ...RETRY_POLICY, tryAgainLaterMs: config.TRY_AGAIN_LATER_MS });
  const funder = localnet
    ? localFunder(localnet.passphrase)
    : (parts.signers.funder(name) ?? (secret ? Keypair.fromSecret(secret) : null));
  const pool = funder ? buildPool(name, gateway, submitter, funder, parts) : undefined;
  return { name, passphrase: gateway.passphrase, gateway, submitter, pool, localnet, rpc: upstream ?? null };
}

function buildPool(
  name: NetworkName,
  gateway: Gateway,
  submitter: Submitter,
  funder: Keypair,
  { config, log, metrics, channels, box, cluster, signers }: NetworkParts,
): ChannelPool {
  const { channels: count, channelMax } = settingsOf(config, name);
  const startingBalance = BigInt(config.CHANNEL_STARTING_BALANCE);
  return new ChannelPool({
    network: name,
    gateway,
    submitter,
    funder,
    repo: channels,
    keys: channelKeys(box, signers.channels, config.CHANNEL_KEYS),
    log,
    config: {
      startingBalance,
      topUpThreshold: config.CHANNEL_TOPUP_THRESHOLD ? BigInt(config.CHANNEL_TOPUP_THRESHOLD) : startingBalance / 2n,
      waitMs: config.CHANNEL_WAIT_MS,
      feePercentile: config.FEE_PERCENTILE,
      channels: count,
      max: channelMax,
      idleMs: config.POOL_IDLE_MS,
    },
    metrics,
    cluster: cluster && { coordination: cluster, tell: (n) => cluster.publish(n) },
  });
}

/**
 * Starts the networks once the relay listens: each embedded localnet closes ledgers (the watcher
 * told at once), each pool starts (an embedded network's funded before the relay answers, side by
 * side; an upstream one's in the background, retried).
 */
export async function startNetworks(
  networks: Networks,
  { config, log, url, signal }: { config: Config; log: Logger; url: string; signal: AbortSignal },
): Promise<void> {
  const localPools: Promise<void>[] = [];
  for (const { name, localnet, gateway, pool } of networks.all()) {
    signal.throwIfAborted();
    if (localnet) {
      localnet.start();
      localnet.onLedgerClosed((l) => {
        gateway.watcher.poke(); // confirm the moment the embedded ledger closes
        const at = { closedAtMs: localnet.header.closeTimeMs, appliedAtMs: Date.now() };
        log.debug({ network: name, ledger: l.sequence, txs: l.txHashes.length, ...at }, "ledger closed");
      });
      const funder = localFunder(localnet.passphrase).publicKey();
      if (!localnet.account(funder))
        throw new Error(
          `the ${name} localnet in ${config.DATA_DIR} has no funder account: remove its snapshot to start afresh`,
        );
      const base = `${url}/localnet/${name}`;
      log.warn(
        {
          network: name,
          passphrase: localnet.passphrase,
          rpc: `${base}/rpc`,
          friendbot: `${base}/friendbot`,
          horizon: `${base}/horizon`,
          ledgerCloseMs: localnet.ledgerCloseMs,
          funder,
        },
        `LOCAL NETWORK: ${name} is an embedded localnet, not the public ${name}`,
      );
    } else if (pool) {
      log.info({ network: name, upstream: gateway.upstream, funder: pool.funder }, "network upstream");
    } else {
      log.error(
        { network: name },
        `no ${specOf(name).settings}_FUNDER_SECRET: sponsoring on ${name} answers NETWORK_UNAVAILABLE`,
      );
      continue;
    }
    const { channels } = settingsOf(config, name);
    log.info(
      { network: name, channels },
      `starting the ${name} channel pool: ${channels} channel accounts (a first start funds them, a few ledgers)`,
    );
    if (localnet) localPools.push(startLocalPool(pool!, localnet));
    else void startUpstreamPool(pool!, log);
  }
  // the embedded networks' pools are funded side by side (each waits on its own ledger closes)
  await calledOff(Promise.all(localPools), signal);
  signal.throwIfAborted();
}
