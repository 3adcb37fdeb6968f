import { join } from "node:path";
import { Keypair } from "@stellar/stellar-sdk";
import { anonymousPolicyPatch, type Config } from "./config.ts";
import { createApp } from "./app.ts";
import { Lifecycle } from "./http/lifecycle.ts";
import { RelayMetrics } from "./metrics.ts";
import { Localnet } from "./localnet/ledger.ts";
import { createRpcMethods, inProcessTransport } from "./localnet/rpc.ts";
import { Submitter } from "./network/submitter.ts";
import { RETRY_POLICY } from "./network/submit-protocol.ts";
import { Gateway, NETWORKS, type NetworkName } from "./network/gateway.ts";
import { UserCaps } from "./relay/user-caps.ts";
import { Approvals } from "./relay/approval.ts";
import { UserDaysRepo } from "./store/user-days.repo.ts";
import { SponsorService } from "./relay/sponsor.service.ts";
import { TransactionsService } from "./relay/transactions.service.ts";
import { SubmissionViews } from "./store/submission-views.repo.ts";
import { SimulateService } from "./relay/simulate.service.ts";
import { FeePlanner } from "./relay/fee-plan.ts";
import { Idempotency } from "./relay/idempotency.ts";
import { createX402 } from "./features/x402/index.ts";
import { openDatabase, type Db } from "./store/db.ts";
import { SubmissionsRepo } from "./store/submissions.repo.ts";
import { IdempotencyRepo } from "./store/idempotency.repo.ts";
import { EventsRepo } from "./store/events.repo.ts";
import { EventFeed } from "./relay/event-feed.ts";
import { ProjectsRepo } from "./store/projects.repo.ts";
import { CreditsRepo } from "./store/credits.repo.ts";
import { MemoryCheckpoints, openCheckpoints } from "./store/checkpoints.ts";
import { ProjectActors } from "./relay/project-actors.ts";
import { ProjectsService, type ProjectNotice } from "./relay/projects.service.ts";
import { ProjectWatch } from "./relay/project-watch.ts";
import { anonymousPolicy, projectPolicyDefaults } from "./relay/policy.ts";
import { ChannelPool, type PoolNotice } from "./relay/pool/channel-pool.ts";
import { SecretBox } from "./relay/secret-box.ts";
import { ChannelsRepo } from "./store/channels.repo.ts";
import { WebhooksRepo } from "./store/webhooks.repo.ts";
import { WebhookSecrets, WebhooksService } from "./relay/webhooks/webhooks.service.ts";
import { WebhookWorker } from "./relay/webhooks/deliveries.ts";
import type { Logger } from "./log.ts";
import { lockDataDir } from "./store/instance-lock.ts";
import {
  LOCAL_FUNDER_STROOPS,
  PUBLIC_PASSPHRASES,
  embeddedParts,
  localFunder,
  networkSettings,
  servedNetworks,
  singleInstance,
} from "./boot-networks.ts";
import { calledOff, listenOn, openCluster, startLocalPool, startUpstreamPool } from "./boot-steps.ts";
import { databaseStep, readyLine, storeOf } from "./start-summary.ts";
import { ConsoleSessions } from "./http/console-session.ts";
import { AdminStatsRepo } from "./store/admin-stats.repo.ts";

export { localFunder } from "./boot-networks.ts";

export interface Relay {
  url: string;
  app: ReturnType<typeof createApp>;
  localnets: Partial<Record<NetworkName, Localnet>>;
  gateways: Partial<Record<NetworkName, Gateway>>;
  pools: Partial<Record<NetworkName, ChannelPool>>;
  /** The relay's database (for operators' tooling and tests). */
  database: Db;
  /** The feed of GET /v1/events (a writer of events pokes it). */
  events: EventFeed;
  stop(): Promise<void>;
}

/**
 * Starts the relay. `signal` calls the start off (SIGTERM while starting): it stops at its next
 * step, closes what it had opened and rejects with the signal's reason. A step under way finishes
 * first (each has its own timeout), except the wait for an embedded network's channel pool, which
 * waits on ledger closes.
 */
export async function startRelay(config: Config, log: Logger, signal?: AbortSignal): Promise<Relay> {
  const unlockDataDir = singleInstance(config) ? lockDataDir(config.DATA_DIR, embeddedParts(config)) : () => {};
  // what start() opens before its stop() can close it: closed, newest first, if it fails before then
  const opened: (() => unknown)[] = [];
  try {
    return await start(config, log, unlockDataDir, opened, signal ?? new AbortController().signal);
  } catch (e) {
    for (const close of opened.reverse())
      await Promise.resolve()
        .then(close)
        .catch(() => {});
    unlockDataDir();
    throw e;
  }
}

async function start(
  config: Config,
  log: Logger,
  unlockDataDir: () => void,
  opened: (() => unknown)[],
  signal: AbortSignal,
): Promise<Relay> {
  const goOn = () => signal.throwIfAborted();
  const { upstream, secrets, channelCounts, channelMax, passphrases } = networkSettings(config);
  const localnets: Partial<Record<NetworkName, Localnet>> = {};
  for (const name of servedNetworks(config)) {
    if (upstream[name]) continue;
    localnets[name] = new Localnet({
      passphrase: PUBLIC_PASSPHRASES[name],
      ledgerCloseMs: config.LEDGER_CLOSE_MS,
      maxTxSetSize: config.LOCALNET_MAX_TX_SET_SIZE,
      dataDir: join(config.DATA_DIR, "localnet"),
      genesisAccounts: [{ id: localFunder(PUBLIC_PASSPHRASES[name]).publicKey(), balance: LOCAL_FUNDER_STROOPS }],
    });
  }
  const gateways: Partial<Record<NetworkName, Gateway>> = {};
  const pools: Partial<Record<NetworkName, ChannelPool>> = {};
  const submitters: Partial<Record<NetworkName, Submitter>> = {};
  const retry = { ...RETRY_POLICY, tryAgainLaterMs: config.TRY_AGAIN_LATER_MS };
  const metrics = new RelayMetrics();
  metrics.collectProcessMetrics();
  log.info({ store: storeOf(config) }, databaseStep(config));
  const database = await openDatabase({
    url: config.DATABASE_URL,
    dataDir: config.DATA_DIR,
    schema: config.DATABASE_SCHEMA,
    metrics,
    instanceLock: singleInstance(config) ? { alone: embeddedParts(config) } : "shared",
  });
  opened.push(() => database.close());
  goOn();
  const pglite = database.kind === "pglite";
  // several instances reserve a project's credits: the journal, not one actor, checks the balance
  const submissions = new SubmissionsRepo(database.db, pglite ? 1 : 3, !singleInstance(config), pglite);
  const channels = new ChannelsRepo(database.db);
  const box = SecretBox.open(config.CHANNEL_ENCRYPTION_KEY, config.DATA_DIR);
  const startingBalance = BigInt(config.CHANNEL_STARTING_BALANCE);
  const poolConfig = {
    startingBalance,
    topUpThreshold: config.CHANNEL_TOPUP_THRESHOLD ? BigInt(config.CHANNEL_TOPUP_THRESHOLD) : startingBalance / 2n,
    waitMs: config.CHANNEL_WAIT_MS,
    feePercentile: config.FEE_PERCENTILE,
  };
  const idempotencyKeys = new IdempotencyRepo(database.db);
  const cluster = singleInstance(config) ? null : await openCluster(config);
  opened.push(() => cluster?.close());
  goOn();
  const checkpoints = await openCheckpoints({
    url: config.REDIS_URL,
    prefix: config.REDIS_PREFIX,
    maxEntries: config.CHECKPOINT_MEMORY_MAX_ENTRIES,
  });
  opened.push(() => checkpoints.store.close());
  goOn();
  const actors = new ProjectActors(
    checkpoints.store,
    {
      anonymousPolicy: anonymousPolicy(anonymousPolicyPatch(config.ANONYMOUS_POLICY)),
      debounceMs: config.CHECKPOINT_DEBOUNCE_MS,
      maxAnonymousClients: config.ANONYMOUS_MAX_CLIENTS,
    },
    log,
    cluster,
  );
  const approvals = new Approvals({ box, allowPrivate: config.WEBHOOK_ALLOW_PRIVATE, log, metrics });
  const projects = new ProjectsService({
    approvals,
    allowPrivate: config.WEBHOOK_ALLOW_PRIVATE,
    projects: new ProjectsRepo(database.db),
    credits: new CreditsRepo(database.db),
    submissions,
    actors,
    defaults: projectPolicyDefaults(config.PROJECT_TESTNET_DAILY_SPEND_LIMIT),
    log,
    sharedCredits: cluster !== null,
  });
  // several instances: a notice missed (Redis pub/sub drops them while reconnecting) is repaired from Postgres
  const watch = cluster
    ? new ProjectWatch({ repo: new ProjectsRepo(database.db), apply: (n) => projects.applyNotice(n), log })
    : null;
  await watch?.begin(); // before the boot's reads: what changes from now on is seen
  await projects.boot();
  watch?.start(config.CLUSTER_CHECK_MS);
  opened.push(() => watch?.stop());
  goOn();
  if (cluster) {
    projects.publish = (n) => cluster.publish(n);
    // applied one after another, in the order published (a project's creation before its credits)
    let applying = Promise.resolve();
    await cluster.subscribe((n) => {
      if (n.from === cluster.id) return;
      const pool = "network" in n ? pools[n.network as NetworkName] : undefined;
      applying = applying
        .then(() =>
          pool ? pool.applyNotice(n as unknown as PoolNotice) : projects.applyNotice(n as unknown as ProjectNotice),
        )
        .catch((e) => log.error({ err: String(e), notice: n.topic }, "applying another instance's change failed"));
    });
  }
  const events = new EventFeed(new EventsRepo(database.db), log, {
    pollMs: config.EVENTS_POLL_MS,
    maxPerProject: config.EVENTS_STREAMS_PER_PROJECT,
  });
  await events.start();
  projects.cutOff = (who) => void events.cutOff(who); // a revoked key's streams end, on every instance
  projects.expiring = (keyId, at) => events.expire(keyId, at); // and a rotated key's, when its overlap ends
  submissions.wrote = () => events.poke(); // a status change is an event: the stream reads it at once
  opened.push(() => events.stop());
  const prune = () =>
    Promise.all([
      idempotencyKeys.prune().catch((e) => log.warn({ err: String(e) }, "pruning idempotency keys failed")),
      events.prune(config.EVENTS_RETENTION_HOURS).catch((e) => log.warn({ err: String(e) }, "pruning events failed")),
      // ended deliveries are kept as long as events: the deliveries list shows them meanwhile
      new WebhooksRepo(database.db)
        .prune(new Date(Date.now() - config.EVENTS_RETENTION_HOURS * 3600_000))
        .catch((e) => log.warn({ err: String(e) }, "pruning webhook deliveries failed")),
    ]);
  await prune();
  const pruneTimer = setInterval(prune, 3600_000);
  opened.push(() => clearInterval(pruneTimer));
  goOn();
  const userCaps = new UserCaps(new UserDaysRepo(database.db));
  const fees = new FeePlanner({ feePercentile: config.FEE_PERCENTILE, maxFeeRate: BigInt(config.MAX_FEE_RATE) });
  const sponsor = new SponsorService({
    gateways,
    pools,
    submitters,
    submissions,
    log,
    metrics,
    fees,
    settleProject: (projectId, s) => actors.settleJournaled(projectId, s),
    userCaps,
    approvals,
    config: {
      maxFeeRate: BigInt(config.MAX_FEE_RATE),
      submissionTimeoutMs: config.SUBMISSION_TIMEOUT_MS,
      order: {
        holdMs: config.SEQUENCE_HOLD_MS,
        perPayer: config.SEQUENCE_MAX_HELD_PER_PROJECT,
        perAccount: config.SEQUENCE_MAX_HELD_PER_ACCOUNT,
      },
    },
    shared: cluster,
  });
  projects.answered = () => sponsor.written();
  const webhooksRepo = new WebhooksRepo(database.db);
  const webhookSecrets = new WebhookSecrets(box);
  const webhooks = new WebhooksService({
    webhooks: webhooksRepo,
    projects: new ProjectsRepo(database.db),
    secrets: webhookSecrets,
    allowPrivate: config.WEBHOOK_ALLOW_PRIVATE,
  });
  const webhookWorker = new WebhookWorker({
    repo: webhooksRepo,
    secrets: webhookSecrets,
    log,
    config: {
      pollMs: config.WEBHOOK_POLL_MS,
      retryBaseMs: config.WEBHOOK_RETRY_BASE_MS,
      timeoutMs: config.WEBHOOK_TIMEOUT_MS,
      allowPrivate: config.WEBHOOK_ALLOW_PRIVATE,
    },
  });
  // the networks whose channel pool is configured: readiness waits for each
  const poolsExpected = servedNetworks(config).filter((n) => !upstream[n] || secrets[n]);
  const lifecycle = new Lifecycle(() => poolsExpected.filter((n) => !pools[n]?.ready).map((n) => `${n} channel pool`));
  // the app answers 413 in the envelope (declared lengths on arrival, chunked bodies as they are read); the
  // server's own limit, which answers a bare 413, is set beyond any body the app would read
  const app = createApp({
    localnets,
    gateways,
    publicUrl: () => `http://localhost:${app.server?.port ?? config.PORT}`,
    sponsor,
    userCaps,
    transactions: new TransactionsService(
      new SubmissionViews(database.db, NETWORKS),
      () => sponsor.written(),
      () => lifecycle.draining,
      {
        watch: events, // a waiting look-up is woken by its status events
        held: (network, innerHash) => sponsor.waitingFor(network, innerHash),
        pollMs: config.WAIT_POLL_MS,
        perProject: config.WAITERS_PER_PROJECT,
        perIp: config.WAITERS_PER_IP,
      },
    ),
    simulate: new SimulateService(fees),
    idempotency: new Idempotency(idempotencyKeys, config.IDEMPOTENCY_TTL_MS),
    x402: createX402({ sponsor, pools, submissions, claims: idempotencyKeys, claimTtlMs: config.IDEMPOTENCY_TTL_MS }),
    events,
    eventsHeartbeatMs: config.EVENTS_HEARTBEAT_MS,
    projects,
    actors,
    pools,
    webhooks,
    adminToken: config.ADMIN_TOKEN,
    // console sessions where the checkpoints are: Redis (every instance sees them), else this process
    sessions: new ConsoleSessions(
      checkpoints.kind === "redis" ? checkpoints.store : new MemoryCheckpoints(10_000),
      config.ADMIN_TOKEN,
      config.ADMIN_SESSION_TTL_S,
    ),
    stats: new AdminStatsRepo(database.db),
    storage: async () => ({
      database: database.kind,
      status: (await database.ping()) ? "ok" : "down",
      checkpoints: checkpoints.kind,
    }),
    log,
    maxBodyBytes: config.MAX_BODY_BYTES,
    trustProxy: config.TRUST_PROXY,
    hstsMaxAge: config.HSTS_MAX_AGE,
    startedAt: Date.now(),
    lifecycle,
    poolsExpected,
    metrics,
    metricsToken: config.METRICS_TOKEN,
    corsOrigins: config.CORS_ORIGINS,
  });
  listenOn(app, config);
  const url = `http://127.0.0.1:${app.server!.port}`;

  const recovering = new Set<NetworkName>();
  const recover = () => {
    for (const name of Object.keys(gateways) as NetworkName[]) {
      // several instances: the one running the network's upkeep recovers its submissions
      if (recovering.has(name) || pools[name]?.leads === false) continue;
      recovering.add(name);
      sponsor
        .recover(name)
        .catch((e) =>
          log.warn(
            { network: name, err: e instanceof Error ? e.message : String(e) },
            "recovering submissions failed; retrying",
          ),
        )
        .finally(() => recovering.delete(name));
    }
  };
  const recoverTimer = setInterval(recover, config.RECOVERY_INTERVAL_MS);
  const stop = async () => {
    clearInterval(recoverTimer);
    await webhookWorker.stop();
    // new /v1 requests get 503; those in flight finish while the networks and watchers are still up
    if (!(await lifecycle.drain(config.SHUTDOWN_GRACE_MS)))
      log.warn({ inFlight: lifecycle.inFlight }, "shutdown grace ended with requests in flight");
    sponsor.stop();
    await sponsor.written();
    await watch?.stop();
    await events.stop(); // a last read, then every event stream ends (clients resume elsewhere with Last-Event-ID)
    await Promise.all(Object.values(pools).map((p) => p.stop())); // with others: hands its channels back
    clearInterval(pruneTimer);
    for (const g of Object.values(gateways)) g.stop();
    for (const n of Object.values(localnets)) n.stop();
    await app.stop(true);
    await actors.stop();
    await checkpoints.store.close();
    await cluster?.close();
    await database.close();
    unlockDataDir();
  };
  opened.length = 0; // from here on stop() closes all of it
  try {
    const localPools: Promise<void>[] = [];
    for (const name of servedNetworks(config)) {
      goOn();
      const net = localnets[name];
      const gw = new Gateway({
        name,
        rpcUrl: upstream[name] ?? `${url}/localnet/${name}/rpc`,
        // an embedded network is called in-process: no loopback HTTP on the request path
        transport: net ? inProcessTransport(createRpcMethods(net)) : undefined,
        upstream: net ? "localnet" : new URL(upstream[name]!).host,
        passphrase: net ? net.passphrase : passphrases[name],
        pollMs: config.WATCHER_POLL_MS,
        fastPollMs: config.WATCHER_FAST_POLL_MS,
        timeoutMs: config.RPC_TIMEOUT_MS,
        log,
        metrics,
      });
      await gw.start().catch((e) => {
        throw new Error(
          `cannot read the ${name} network's passphrase from ${upstream[name]}: ` +
            `set ${name.toUpperCase()}_PASSPHRASE or make it reachable (${e instanceof Error ? e.message : e})`,
        );
      });
      gateways[name] = gw;
      const submitter = new Submitter(gw, log, retry);
      submitters[name] = submitter;
      gw.watcher.metrics = metrics;
      const funder = net ? localFunder(net.passphrase) : secrets[name] ? Keypair.fromSecret(secrets[name]!) : null;
      if (net) {
        net.start();
        net.onLedgerClosed((l) => {
          gw.watcher.poke(); // confirm the moment the embedded ledger closes
          const closedAtMs = net.header.closeTimeMs; // when the close began; applied by now
          const at = { closedAtMs, appliedAtMs: Date.now() };
          log.debug({ network: name, ledger: l.sequence, txs: l.txHashes.length, ...at }, "ledger closed");
        });
        if (!net.account(funder!.publicKey()))
          throw new Error(
            `the ${name} localnet in ${config.DATA_DIR} has no funder account: remove its snapshot to start afresh`,
          );
        log.warn(
          {
            network: name,
            passphrase: net.passphrase,
            rpc: `${url}/localnet/${name}/rpc`,
            friendbot: `${url}/localnet/${name}/friendbot`,
            horizon: `${url}/localnet/${name}/horizon`,
            ledgerCloseMs: net.ledgerCloseMs,
            funder: funder!.publicKey(),
          },
          `LOCAL NETWORK: ${name} is an embedded localnet, not the public ${name}`,
        );
      } else if (funder) {
        log.info({ network: name, upstream: gw.upstream, funder: funder.publicKey() }, "network upstream");
      } else {
        log.error(
          { network: name },
          `no ${name.toUpperCase()}_FUNDER_SECRET: sponsoring on ${name} answers NETWORK_UNAVAILABLE`,
        );
        continue;
      }
      const pool = new ChannelPool({
        network: name,
        gateway: gw,
        submitter,
        funder: funder!,
        repo: channels,
        box,
        log,
        config: { ...poolConfig, channels: channelCounts[name], max: channelMax[name], idleMs: config.POOL_IDLE_MS },
        metrics,
        cluster: cluster && { coordination: cluster, tell: (n) => cluster.publish(n) },
      });
      pools[name] = pool;
      log.info(
        { network: name, channels: channelCounts[name] },
        `starting the ${name} channel pool: ${channelCounts[name]} channel accounts (a first start funds them, a few ledgers)`,
      );
      if (net) localPools.push(startLocalPool(pool, net));
      else void startUpstreamPool(pool, log);
    }
    // the embedded networks' pools are funded side by side (each waits on its own ledger closes)
    await calledOff(Promise.all(localPools), signal);
    goOn();
  } catch (e) {
    await stop(); // a relay that cannot start leaves nothing running
    throw e;
  }
  recover(); // what a crash left unsettled, at once
  webhookWorker.start(); // events to webhooks, from this instance too (deliveries are leased one instance at a time)
  log.info({ port: app.server!.port }, "relay listening");
  const networks = Object.fromEntries(
    Object.keys(gateways).map((n) => {
      const embedded = !upstream[n as NetworkName];
      return [n, { embedded, rpc: embedded ? `${url}/localnet/${n}/rpc` : upstream[n as NetworkName]! }];
    }),
  );
  log.info({ url }, readyLine(config, { url, networks, channels: channelCounts }));

  return {
    url,
    app,
    localnets,
    gateways,
    pools,
    database: database.db,
    events,
    stop,
  };
}
