/**
 * The features wired on the foundations (boot.ts): sponsorship, look-ups, simulation, webhooks,
 * then the app that serves them, and the background work once the networks run (recovery of
 * unsettled submissions, webhook deliveries).
 */
import { createApp } from "../app.ts";
import type { Config } from "../config.ts";
import type { Logger } from "../kernel/log.ts";
import { MemoryCheckpoints } from "../store/checkpoints.ts";
import { NETWORKS } from "../stellar/networks.ts";
import { AdminStatsRepo } from "../store/admin-stats.repo.ts";
import { SubmissionViews } from "../features/transactions/submission-views.repo.ts";
import { UserDaysRepo } from "../store/user-days.repo.ts";
import { Lifecycle } from "../http/lifecycle.ts";
import { ConsoleSessions } from "../features/console/console-session.ts";
import type { Networks } from "../features/networks/networks.ts";
import type { ProjectWatch } from "../features/projects/project-watch.ts";
import type { ProjectsService } from "../features/projects/projects.service.ts";
import { Approvals } from "../features/projects/rules/approval.ts";
import { UserCaps } from "../features/projects/rules/user-caps.ts";
import { Idempotency } from "../features/sponsor/idempotency.ts";
import { SponsorService } from "../features/sponsor/sponsor.service.ts";
import type { EventFeed } from "../features/transactions/events/event-feed.ts";
import { TransactionsService } from "../features/transactions/transactions.service.ts";
import { FeePlanner } from "../features/tx/fee-plan.ts";
import { SimulateService } from "../features/tx/simulate.service.ts";
import { WebhookWorker } from "../features/webhooks/deliveries.ts";
import { WebhookSecrets, WebhooksService } from "../features/webhooks/webhooks.service.ts";
import { createX402, settleClaimMs } from "../features/x402/index.ts";
import type { Closers } from "./closers.ts";
import type { Shared, Store } from "./parts.ts";
import { listenOn } from "./steps.ts";

export type Features = ReturnType<typeof wireFeatures>;

export function wireFeatures(
  config: Config,
  log: Logger,
  parts: Store & Shared & { networks: Networks; events: EventFeed },
) {
  const { networks, metrics, box, database, checkpoints, events } = parts;
  const fees = new FeePlanner({ feePercentile: config.FEE_PERCENTILE, maxFeeRate: BigInt(config.MAX_FEE_RATE) });
  const userCaps = new UserCaps(new UserDaysRepo(database.db));
  const approvals = new Approvals({ box, allowPrivate: config.WEBHOOK_ALLOW_PRIVATE, log, metrics });
  const sponsor = new SponsorService({
    networks,
    submissions: parts.submissions,
    log,
    metrics,
    fees,
    projects: parts.actors, // a resumed submission of another project settles on its actor
    userCaps,
    approvals,
    config: {
      maxFeeRate: BigInt(config.MAX_FEE_RATE),
      submissionTimeoutMs: config.SUBMISSION_TIMEOUT_MS,
      order: {
        holdMs: config.SEQUENCE_HOLD_MS,
        perPayer: config.SEQUENCE_MAX_HELD_PER_PROJECT,
        perAccount: config.SEQUENCE_MAX_HELD_PER_ACCOUNT,
        perPayerBytes: config.SEQUENCE_MAX_HELD_BYTES_PER_PROJECT,
      },
    },
    shared: parts.cluster,
  });
  // readiness waits for each network's channel pool
  const lifecycle = new Lifecycle(() =>
    networks
      .pools()
      .filter(([, p]) => !p.ready)
      .map(([n]) => `${n} channel pool`),
  );
  const secrets = new WebhookSecrets(box);
  const webhookWorker = new WebhookWorker({
    repo: parts.webhooksRepo,
    secrets,
    log,
    config: {
      pollMs: config.WEBHOOK_POLL_MS,
      retryBaseMs: config.WEBHOOK_RETRY_BASE_MS,
      timeoutMs: config.WEBHOOK_TIMEOUT_MS,
      allowPrivate: config.WEBHOOK_ALLOW_PRIVATE,
    },
  });
  const transactions = new TransactionsService(new SubmissionViews(database.db, NETWORKS), {
    watch: events, // a waiting look-up is woken by its status events
    orders: sponsor,
    outcomes: sponsor,
    lifecycle,
    pollMs: config.WAIT_POLL_MS,
    perProject: config.WAITERS_PER_PROJECT,
    perIp: config.WAITERS_PER_IP,
  });
  /** The app on its port (the server's own body limit is beyond any body the app reads: it answers 413 itself). */
  const app = (projects: { service: ProjectsService }) => {
    const served = createApp({
      networks,
      publicUrl: () => `http://localhost:${served.server?.port ?? config.PORT}`,
      sponsor,
      userCaps,
      transactions,
      simulate: new SimulateService(fees),
      idempotency: new Idempotency(parts.idempotencyKeys, config.IDEMPOTENCY_TTL_MS),
      x402: createX402({
        sponsor,
        networks,
        submissions: parts.submissions,
        claims: parts.idempotencyKeys,
        claimTtlMs: settleClaimMs(config.SUBMISSION_TIMEOUT_MS),
        payTo: async (id) => (await parts.projectsRepo.get(id))?.x402PayTo ?? [],
      }),
      events,
      eventsHeartbeatMs: config.EVENTS_HEARTBEAT_MS,
      projects: projects.service,
      actors: parts.actors,
      webhooks: new WebhooksService({
        webhooks: parts.webhooksRepo,
        projects: parts.projectsRepo,
        secrets,
        allowPrivate: config.WEBHOOK_ALLOW_PRIVATE,
      }),
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
      gatherMs: config.GATHER_MS,
      hstsMaxAge: config.HSTS_MAX_AGE,
      startedAt: Date.now(),
      lifecycle,
      metrics,
      metricsToken: config.METRICS_TOKEN,
      corsOrigins: config.CORS_ORIGINS,
    });
    listenOn(served, config);
    return served;
  };
  /** Shutdown's first step: new requests get 503, those in flight finish while the networks are still up. */
  const drain = async (watch: ProjectWatch | null) => {
    if (!(await lifecycle.drain(config.SHUTDOWN_GRACE_MS)))
      log.warn({ inFlight: lifecycle.inFlight }, "shutdown grace ended with requests in flight");
    sponsor.stop();
    await sponsor.written();
    await watch?.stop();
    await events.stop(); // a last read, then every event stream ends (clients resume elsewhere with Last-Event-ID)
  };
  return { sponsor, approvals, outcomes: sponsor, webhookWorker, app, drain };
}

/** What runs once the networks do: recovery (at once, then every RECOVERY_INTERVAL_MS) and webhook deliveries. */
export function startBackground(
  config: Config,
  log: Logger,
  features: Features,
  networks: Networks,
  closers: Closers,
): void {
  const recovering = new Set<string>();
  const recover = () => {
    for (const { name, pool } of networks.all()) {
      // several instances: the one running the network's upkeep recovers its submissions
      if (recovering.has(name) || pool?.leads === false) continue;
      recovering.add(name);
      features.sponsor
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
  const timer = setInterval(recover, config.RECOVERY_INTERVAL_MS);
  closers.push("recovery", () => clearInterval(timer));
  recover(); // what a crash left unsettled, at once
  features.webhookWorker.start(); // events to webhooks, from this instance too (deliveries are leased one at a time)
  closers.push("webhook deliveries", () => features.webhookWorker.stop());
}
