/**
 * createApp: the relay's HTTP application without listen (tests call app.handle): the error
 * envelope and request ids, the /v1 routes, /health, OpenAPI, and the embedded local networks.
 */
import { type Route, RouteTable } from "./http/route-table.ts";
import { Elysia } from "elysia";
import { localnetHttp } from "./localnet/server.ts";
import { bodyLimitPlugin, errorsPlugin, internalErrorResponse } from "./http/errors.plugin.ts";
import { inputPlugin } from "./http/input.plugin.ts";
import { Gathering } from "./http/turn.ts";
import { Lifecycle, lifecyclePlugin, probeRoutes } from "./http/lifecycle.ts";
import { sponsorRoutes } from "./features/sponsor/sponsor.routes.ts";
import { simulateRoutes } from "./features/tx/simulate.routes.ts";
import { estimateRoutes } from "./features/tx/estimate.routes.ts";
import { eventsRoutes } from "./features/transactions/events/events.routes.ts";
import type { EventFeed } from "./features/transactions/events/event-feed.ts";
import { healthRoutes } from "./server/health.routes.ts";
import { authPlugin } from "./server/auth.plugin.ts";
import { adminRoutes } from "./features/projects/admin.routes.ts";
import type { ProjectsService } from "./features/projects/projects.service.ts";
import type { ProjectActors } from "./features/projects/project-actors.ts";
import type { Networks } from "./features/networks/networks.ts";
import type { SponsorService } from "./features/sponsor/sponsor.service.ts";
import type { TransactionsService } from "./features/transactions/transactions.service.ts";
import type { UserCaps } from "./features/projects/rules/user-caps.ts";
import { userRoutes } from "./features/projects/users.routes.ts";
import { adminTransactionRoutes, transactionRoutes } from "./features/transactions/transactions.routes.ts";
import type { SimulateService } from "./features/tx/simulate.service.ts";
import { channelRoutes } from "./features/pool/channels.routes.ts";
import { webhookRoutes } from "./features/webhooks/webhooks.routes.ts";
import type { WebhooksService } from "./features/webhooks/webhooks.service.ts";
import { openapiRoutes } from "./server/openapi.ts";
import type { Idempotency } from "./features/sponsor/idempotency.ts";
import type { Logger } from "./kernel/log.ts";
import type { RelayMetrics } from "./kernel/metrics.ts";
import { metricsPlugin } from "./server/metrics.ts";
import { corsPlugin, parseCorsOrigins } from "./http/cors.ts";
import { channelsDialect, compatRoutes } from "./features/compat/compat.routes.ts";
import { ConsoleSessions, SignInLimiter } from "./features/console/console-session.ts";
import { sessionRoutes } from "./features/console/session.routes.ts";
import { consoleRoutes } from "./features/console/console.routes.ts";
import { statsRoutes } from "./features/console/stats.routes.ts";
import type { AdminStatsRepo } from "./store/admin-stats.repo.ts";
import { MemoryCheckpoints } from "./store/checkpoints.ts";
import { type X402Deps, x402Routes } from "./features/x402/index.ts";

export const VERSION = "0.1.0";

export interface AppDeps {
  /** End users' days (the policy's perUser caps). */
  userCaps?: UserCaps;
  /** The served networks (each with its gateway, pool and, when embedded, localnet). */
  networks: Networks;
  /** The relay's own URL, as its clients reach it (the embedded networks announce their friendbot under it). */
  publicUrl: () => string;
  sponsor: SponsorService;
  transactions: TransactionsService;
  simulate: SimulateService;
  idempotency: Idempotency;
  /** The feed of GET /v1/events. */
  events: EventFeed;
  /** GET /v1/events: a heartbeat comment this often (EVENTS_HEARTBEAT_MS; default 15 s). */
  eventsHeartbeatMs?: number;
  projects: ProjectsService;
  actors: ProjectActors;
  /** The admin API's webhooks (without them: no webhook routes). */
  webhooks?: WebhooksService;
  /** The admin API's bearer token; without it the admin API does not exist (404). */
  adminToken?: string;
  /** The operator console's sessions (default: in this process). */
  sessions?: ConsoleSessions;
  /** The console overview's figures (GET /v1/admin/stats; without them, no such route). */
  stats?: AdminStatsRepo;
  storage: () => Promise<{ database: string; status: string; checkpoints: string }>;
  log: Logger;
  maxBodyBytes: number;
  trustProxy: boolean;
  /** A busy relay's requests wait this long for those after them, to go on together (GATHER_MS; 0: the turn only). */
  gatherMs?: number;
  /** Strict-Transport-Security max-age in seconds; 0 or unset: no HSTS header. */
  hstsMaxAge?: number;
  startedAt: number;
  /** The relay's metrics, served at GET /metrics; without them there is no /metrics (404). */
  metrics?: RelayMetrics;
  /** Bearer token of GET /metrics (METRICS_TOKEN); unset: open. */
  metricsToken?: string;
  /** CORS_ORIGINS: comma-separated origins allowed cross-origin, or `*`; unset: no CORS headers. */
  corsOrigins?: string;
  /** Readiness and graceful shutdown (default: always ready, never draining). */
  lifecycle?: Lifecycle;
  /** The x402 facilitator (/x402/*; without it: no such routes). */
  x402?: X402Deps;
}

/**
 * Bun.serve's options, whatever NODE_ENV is: never Bun's HTML error page (with stack frames); a failure the app
 * did not answer itself (its error handling failed) is an enveloped INTERNAL_ERROR.
 */
export const serveOptions = (log: Logger, hstsMaxAge?: number) => ({
  development: false,
  error: (e: unknown) => internalErrorResponse(log, e, hstsMaxAge),
});

export function createApp(deps: AppDeps) {
  const lifecycle = deps.lifecycle ?? new Lifecycle(() => []);
  const sessions = deps.sessions ?? new ConsoleSessions(new MemoryCheckpoints(10_000), deps.adminToken);
  // wrong admin tokens per client IP, on the admin API and as the channels protocol's adminSecret: one count
  const adminLimiter = new SignInLimiter();
  // normalize off: a body with an unknown field is a VALIDATION_ERROR (where its schema says so), never silently dropped
  const app = new Elysia({ normalize: false, serve: serveOptions(deps.log, deps.hstsMaxAge) })
    .use(
      errorsPlugin({
        log: deps.log,
        hstsMaxAge: deps.hstsMaxAge,
        dialects: [channelsDialect],
        routes: new RouteTable((): readonly Route[] => app.routes),
      }),
    )
    .use(
      deps.metrics
        ? metricsPlugin({
            metrics: deps.metrics,
            token: deps.metricsToken,
            routes: (): readonly { method: string; path: string }[] => app.routes,
            sources: { pools: () => deps.networks.pools(), pending: (n) => deps.sponsor.pending(n) },
          })
        : new Elysia(),
    )
    // before lifecycle and auth: a preflight is answered at once (no API key, no rate-limit token, not counted in flight)
    .use(corsPlugin(parseCorsOrigins(deps.corsOrigins)))
    .use(lifecyclePlugin(lifecycle))
    .use(probeRoutes(lifecycle))
    .use(openapiRoutes({ title: "Stellar sponsorship relay", version: VERSION }))
    .use(consoleRoutes())
    .use(authPlugin({ ...deps, sessions, adminLimiter, gathering: new Gathering(deps.gatherMs ?? 0) }))
    .use(bodyLimitPlugin(deps.maxBodyBytes))
    .use(inputPlugin({ maxBodyBytes: deps.maxBodyBytes }))
    .use(sponsorRoutes(deps))
    .use(transactionRoutes(deps))
    .use(simulateRoutes(deps))
    .use(estimateRoutes(deps))
    .use(deps.x402 ? x402Routes(deps.x402) : new Elysia())
    .use(compatRoutes({ ...deps, fees: deps.simulate.fees, adminGuesses: adminLimiter }))
    .use(eventsRoutes({ events: deps.events, heartbeatMs: deps.eventsHeartbeatMs ?? 15_000 }))
    .use(deps.adminToken ? adminRoutes(deps) : new Elysia())
    .use(deps.adminToken && deps.userCaps ? userRoutes({ ...deps, userCaps: deps.userCaps }) : new Elysia())
    .use(deps.adminToken ? channelRoutes(deps) : new Elysia())
    .use(deps.adminToken && deps.webhooks ? webhookRoutes({ webhooks: deps.webhooks }) : new Elysia())
    .use(deps.adminToken ? adminTransactionRoutes(deps) : new Elysia())
    .use(deps.adminToken ? sessionRoutes({ sessions, trustProxy: deps.trustProxy }) : new Elysia())
    .use(
      deps.adminToken && deps.stats
        ? statsRoutes({ stats: deps.stats, written: () => deps.sponsor.written() })
        : new Elysia(),
    )
    .use(
      healthRoutes({
        networks: deps.networks,
        version: VERSION,
        startedAt: deps.startedAt,
        storage: deps.storage,
        starting: () => lifecycle.starting(),
      }),
    );
  for (const { name, localnet: net } of deps.networks.all()) {
    if (!net) continue;
    const base = `/localnet/${name}`;
    app.use(
      localnetHttp(net, { base, horizonPath: "/horizon", friendbotUrl: () => `${deps.publicUrl()}${base}/friendbot` }),
    );
  }
  return app;
}
