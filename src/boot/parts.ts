/**
 * The relay's foundations, a step of the start each (boot.ts): the store (database, repositories,
 * metrics), what instances share (Redis coordination, checkpoints, the projects' actors), the event
 * feed, and the projects (their actors started, kept in step with the other instances).
 */
import { anonymousPolicyPatch, type Config } from "../config.ts";
import type { Logger } from "../kernel/log.ts";
import { RelayMetrics } from "../kernel/metrics.ts";
import { SecretBox } from "../kernel/secret-box.ts";
import { NETWORKS } from "../stellar/networks.ts";
import { ChannelsRepo } from "../store/channels.repo.ts";
import { openCheckpoints } from "../store/checkpoints.ts";
import type { Cluster } from "../store/cluster.ts";
import { openDatabase } from "../store/db.ts";
import { EventsRepo } from "../store/events.repo.ts";
import { IdempotencyRepo } from "../store/idempotency.repo.ts";
import { ProjectsRepo } from "../store/projects.repo.ts";
import { CreditsRepo } from "../store/credits.repo.ts";
import { SubmissionsRepo } from "../store/submissions.repo.ts";
import { WebhooksRepo } from "../store/webhooks.repo.ts";
import type { Networks } from "../features/networks/networks.ts";
import type { PoolNotice } from "../features/pool/channel-pool.ts";
import { ProjectActors } from "../features/projects/project-actors.ts";
import { ProjectWatch } from "../features/projects/project-watch.ts";
import { type ProjectNotice, ProjectsService } from "../features/projects/projects.service.ts";
import type { Approvals } from "../features/projects/rules/approval.ts";
import { anonymousPolicy, projectPolicyDefaults } from "../features/projects/rules/policy.ts";
import { EventFeed } from "../features/transactions/events/event-feed.ts";
import type { Closers } from "./closers.ts";
import { embeddedParts, singleInstance } from "./networks.ts";
import { openCluster } from "./steps.ts";
import { databaseStep, storeOf } from "./start-summary.ts";

export type Store = Awaited<ReturnType<typeof openStore>>;
export type Shared = Awaited<ReturnType<typeof openShared>>;

/** The database and its repositories (one of each), the metrics, the sealing of secrets. */
export async function openStore(config: Config, log: Logger, closers: Closers) {
  const metrics = new RelayMetrics(NETWORKS);
  metrics.collectProcessMetrics();
  log.info({ store: storeOf(config) }, databaseStep(config));
  const database = await openDatabase({
    url: config.DATABASE_URL,
    dataDir: config.DATA_DIR,
    schema: config.DATABASE_SCHEMA,
    metrics,
    instanceLock: singleInstance(config) ? { alone: embeddedParts(config) } : "shared",
  });
  closers.push("database", () => database.close());
  const { db } = database;
  const pglite = database.kind === "pglite";
  const feed = new EventFeed(new EventsRepo(db), log, {
    pollMs: config.EVENTS_POLL_MS,
    maxPerProject: config.EVENTS_STREAMS_PER_PROJECT,
  });
  return {
    metrics,
    database,
    box: SecretBox.open(config.CHANNEL_ENCRYPTION_KEY, config.DATA_DIR),
    // several instances reserve a project's credits: the journal, not one actor, checks the balance;
    // a status change is an event: the stream reads it at once
    submissions: new SubmissionsRepo(db, pglite ? 1 : 3, !singleInstance(config), pglite, () => feed.poke()),
    channels: new ChannelsRepo(db),
    idempotencyKeys: new IdempotencyRepo(db),
    projectsRepo: new ProjectsRepo(db),
    credits: new CreditsRepo(db),
    webhooksRepo: new WebhooksRepo(db),
    events: feed,
  };
}

/** What several instances share (none for one alone): the coordination, the checkpoints, the projects' actors. */
export async function openShared(config: Config, log: Logger, _store: Store, closers: Closers) {
  const cluster: Cluster | null = singleInstance(config) ? null : await openCluster(config);
  closers.push("coordination", () => cluster?.close());
  const checkpoints = await openCheckpoints({
    url: config.REDIS_URL,
    prefix: config.REDIS_PREFIX,
    maxEntries: config.CHECKPOINT_MEMORY_MAX_ENTRIES,
  });
  closers.push("checkpoints", () => checkpoints.store.close());
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
  closers.push("project actors", () => actors.stop());
  return { cluster, checkpoints, actors };
}

/** The event feed of GET /v1/events, started; old events, keys and deliveries pruned now and every hour. */
export async function startEvents(config: Config, log: Logger, store: Store, closers: Closers): Promise<EventFeed> {
  const { events } = store;
  await events.start();
  closers.push("event feed", () => events.stop());
  const prune = () =>
    Promise.all([
      store.idempotencyKeys.prune().catch((e) => log.warn({ err: String(e) }, "pruning idempotency keys failed")),
      events.prune(config.EVENTS_RETENTION_HOURS).catch((e) => log.warn({ err: String(e) }, "pruning events failed")),
      // ended deliveries are kept as long as events: the deliveries list shows them meanwhile
      store.webhooksRepo
        .prune(new Date(Date.now() - config.EVENTS_RETENTION_HOURS * 3600_000))
        .catch((e) => log.warn({ err: String(e) }, "pruning webhook deliveries failed")),
    ]);
  await prune();
  const pruneTimer = setInterval(prune, 3600_000);
  closers.push("pruning", () => clearInterval(pruneTimer));
  return events;
}

/**
 * The projects: every one's actor started from Postgres; with several instances, each change made
 * elsewhere applied here (Redis), and what Redis dropped repaired from Postgres every CLUSTER_CHECK_MS.
 */
export async function startProjects(
  config: Config,
  log: Logger,
  parts: Store &
    Shared & { networks: Networks; events: EventFeed; approvals: Approvals; outcomes: { written(): Promise<void> } },
  closers: Closers,
): Promise<{ service: ProjectsService; watch: ProjectWatch | null }> {
  const { cluster, events } = parts;
  const service = new ProjectsService({
    approvals: parts.approvals,
    allowPrivate: config.WEBHOOK_ALLOW_PRIVATE,
    projects: parts.projectsRepo,
    credits: parts.credits,
    submissions: parts.submissions,
    actors: parts.actors,
    defaults: projectPolicyDefaults(config.PROJECT_TESTNET_DAILY_SPEND_LIMIT),
    log,
    sharedCredits: cluster !== null,
    publish: cluster ? (n) => cluster.publish(n) : undefined,
    outcomes: parts.outcomes,
    // a revoked key's streams end, on every instance (and a rotated key's, when its overlap ends)
    streams: { cutOff: (who) => void events.cutOff(who), expire: (keyId, at) => events.expire(keyId, at) },
  });
  // several instances: a notice missed (Redis pub/sub drops them while reconnecting) is repaired from Postgres
  const watch = cluster
    ? new ProjectWatch({ repo: parts.projectsRepo, apply: (n) => service.applyNotice(n), log })
    : null;
  await watch?.begin(); // before the boot's reads: what changes from now on is seen
  await service.boot();
  watch?.start(config.CLUSTER_CHECK_MS);
  closers.push("project watch", () => watch?.stop());
  if (cluster) {
    // applied one after another, in the order published (a project's creation before its credits)
    let applying = Promise.resolve();
    await cluster.subscribe((n) => {
      if (n.from === cluster.id) return;
      const pool = "network" in n ? parts.networks.find(n.network as never)?.pool : undefined;
      applying = applying
        .then(() =>
          pool ? pool.applyNotice(n as unknown as PoolNotice) : service.applyNotice(n as unknown as ProjectNotice),
        )
        .catch((e) => log.error({ err: String(e), notice: n.topic }, "applying another instance's change failed"));
    });
  }
  return { service, watch };
}
