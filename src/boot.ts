/**
 * The relay's composition root: embedded networks, stores, services and the HTTP app, started in
 * order (listen first, so that the gateways can reach the embedded networks over RPC).
 */
import { join } from "node:path";
import { Keypair, Networks } from "@stellar/stellar-sdk";
import { anonymousPolicy, type Config } from "./config.ts";
import { createApp } from "./app.ts";
import { Localnet } from "./localnet/ledger.ts";
import { Gateway, NETWORKS, type NetworkName } from "./network/gateway.ts";
import { SponsorService } from "./relay/sponsor.service.ts";
import { SimulateService } from "./relay/simulate.service.ts";
import { Idempotency } from "./relay/idempotency.ts";
import { openDatabase } from "./store/db.ts";
import { SubmissionsRepo } from "./store/submissions.repo.ts";
import { IdempotencyRepo } from "./store/idempotency.repo.ts";
import { ProjectsRepo } from "./store/projects.repo.ts";
import { CreditsRepo } from "./store/credits.repo.ts";
import { openCheckpoints } from "./store/checkpoints.ts";
import { ProjectActors } from "./relay/project-actors.ts";
import { ProjectsService } from "./relay/projects.service.ts";
import { PROJECT_POLICY_DEFAULTS } from "./relay/policy.ts";
import type { Logger } from "./log.ts";

const PUBLIC_PASSPHRASES: Record<NetworkName, string> = { testnet: Networks.TESTNET, mainnet: Networks.PUBLIC };

/** The embedded network's fee account: derived from its passphrase (local lumens only, like the root account). */
export const localSponsor = (passphrase: string): Keypair =>
  Keypair.fromRawEd25519Seed(new Uint8Array(new Bun.CryptoHasher("sha256").update(`stellar-sponsor-relay/localnet-sponsor/${passphrase}`).digest()));

/** The embedded fee account's genesis balance: 1,000,000 XLM. */
const LOCAL_FEE_ACCOUNT_STROOPS = 10_000_000_000_000n;

export interface Relay {
  url: string;
  app: ReturnType<typeof createApp>;
  localnets: Partial<Record<NetworkName, Localnet>>;
  gateways: Partial<Record<NetworkName, Gateway>>;
  stop(): Promise<void>;
}

export async function startRelay(config: Config, log: Logger): Promise<Relay> {
  const upstream: Record<NetworkName, string | undefined> = { testnet: config.TESTNET_RPC_URL, mainnet: config.MAINNET_RPC_URL };
  const secrets: Record<NetworkName, string | undefined> = { testnet: config.TESTNET_SPONSOR_SECRET, mainnet: config.MAINNET_SPONSOR_SECRET };
  const passphrases: Record<NetworkName, string | undefined> = { testnet: config.TESTNET_PASSPHRASE, mainnet: config.MAINNET_PASSPHRASE };
  const localnets: Partial<Record<NetworkName, Localnet>> = {};
  for (const name of NETWORKS) {
    if (upstream[name]) continue;
    localnets[name] = new Localnet({
      passphrase: PUBLIC_PASSPHRASES[name], ledgerCloseMs: config.LEDGER_CLOSE_MS, maxTxSetSize: config.LOCALNET_MAX_TX_SET_SIZE,
      dataDir: join(config.DATA_DIR, "localnet"), genesisAccounts: [{ id: localSponsor(PUBLIC_PASSPHRASES[name]).publicKey(), balance: LOCAL_FEE_ACCOUNT_STROOPS }],
    });
  }
  const gateways: Partial<Record<NetworkName, Gateway>> = {};
  const sponsors: Partial<Record<NetworkName, Keypair>> = {};
  const database = await openDatabase({ url: config.DATABASE_URL, dataDir: config.DATA_DIR, schema: config.DATABASE_SCHEMA });
  const submissions = new SubmissionsRepo(database.db);
  const idempotencyKeys = new IdempotencyRepo(database.db);
  const checkpoints = await openCheckpoints({ url: config.REDIS_URL, prefix: config.REDIS_PREFIX });
  const actors = new ProjectActors(checkpoints.store, { anonymousPolicy: anonymousPolicy(config.ANONYMOUS_POLICY), debounceMs: config.CHECKPOINT_DEBOUNCE_MS, maxAnonymousClients: config.ANONYMOUS_MAX_CLIENTS }, log);
  const projects = new ProjectsService({ projects: new ProjectsRepo(database.db), credits: new CreditsRepo(database.db), submissions, actors, defaults: PROJECT_POLICY_DEFAULTS, log });
  await projects.boot();
  const prune = () => idempotencyKeys.prune().catch((e) => log.warn({ err: String(e) }, "pruning idempotency keys failed"));
  await prune();
  const pruneTimer = setInterval(prune, 3600_000);
  const sponsor = new SponsorService({
    gateways, sponsors, submissions, log,
    settleProject: (projectId, s) => actors.project(projectId)?.send({ type: "SETTLE", id: crypto.randomUUID(), now: Date.now(), released: s.released, charged: s.charged, journaled: true }),
    config: { feePercentile: config.FEE_PERCENTILE, maxFeeRate: BigInt(config.MAX_FEE_RATE), submissionTimeoutMs: config.SUBMISSION_TIMEOUT_MS, tryAgainLaterMs: config.TRY_AGAIN_LATER_MS },
  });
  // the server's own body limit is only a backstop (chunked bodies): the errors plugin answers 413 in the envelope
  const app = createApp({
    localnets, gateways, publicUrl: `http://localhost:${config.PORT}`, sponsor, simulate: new SimulateService(config.FEE_PERCENTILE),
    idempotency: new Idempotency(idempotencyKeys, config.IDEMPOTENCY_TTL_MS), projects, actors, adminToken: config.ADMIN_TOKEN,
    storage: async () => ({ database: database.kind, status: (await database.ping()) ? "ok" : "down", checkpoints: checkpoints.kind }),
    log, maxBodyBytes: config.MAX_BODY_BYTES, trustProxy: config.TRUST_PROXY, startedAt: Date.now(),
  }).listen({ port: config.PORT, maxRequestBodySize: config.MAX_BODY_BYTES * 4 });
  const url = `http://127.0.0.1:${app.server!.port}`;

  for (const name of NETWORKS) {
    const net = localnets[name];
    const gw = new Gateway({
      name, rpcUrl: upstream[name] ?? `${url}/localnet/${name}/rpc`, upstream: net ? "localnet" : new URL(upstream[name]!).host,
      passphrase: net ? net.passphrase : passphrases[name], pollMs: config.WATCHER_POLL_MS, log,
    });
    await gw.start().catch((e) => {
      throw new Error(`cannot read the ${name} network's passphrase from ${upstream[name]}: set ${name.toUpperCase()}_PASSPHRASE or make it reachable (${e instanceof Error ? e.message : e})`);
    });
    gateways[name] = gw;
    if (net) {
      net.start();
      net.onLedgerClosed(() => gw.watcher.poke()); // confirm the moment the embedded ledger closes
      const kp = localSponsor(net.passphrase);
      if (!net.account(kp.publicKey())) throw new Error(`the ${name} localnet in ${config.DATA_DIR} has no fee account: remove its snapshot to start afresh`);
      sponsors[name] = kp;
      log.warn({ network: name, passphrase: net.passphrase, rpc: `${url}/localnet/${name}/rpc`, friendbot: `${url}/localnet/${name}/friendbot`, horizon: `${url}/localnet/${name}/horizon`, ledgerCloseMs: net.ledgerCloseMs, feeAccount: kp.publicKey() }, `LOCAL NETWORK: ${name} is an embedded localnet, not the public ${name}`);
    } else if (secrets[name]) {
      sponsors[name] = Keypair.fromSecret(secrets[name]!);
      log.info({ network: name, upstream: gw.upstream, feeAccount: sponsors[name]!.publicKey() }, "network upstream");
    } else {
      log.error({ network: name }, `no ${name.toUpperCase()}_SPONSOR_SECRET: sponsoring on ${name} answers NETWORK_UNAVAILABLE`);
    }
  }
  log.info({ port: app.server!.port }, "relay listening");

  return {
    url, app, localnets, gateways,
    async stop() {
      await app.stop(); // stop accepting; in-flight requests finish
      clearInterval(pruneTimer);
      for (const g of Object.values(gateways)) g.stop();
      for (const n of Object.values(localnets)) n.stop();
      await actors.stop();
      await checkpoints.store.close();
      await database.close();
    },
  };
}
