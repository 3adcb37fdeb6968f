/**
 * GET /metrics (Prometheus text format) and the request metrics, on the relay's own port.
 *
 * - `/metrics` needs no API key and takes no rate-limit token (the auth plugin only handles /v1);
 *   with METRICS_TOKEN set it needs `Authorization: Bearer <METRICS_TOKEN>` (compared in constant
 *   time), else 401; unset, it is open (keep the port private, or set the token).
 * - Every answered request is counted and timed by method, route and status, from its arrival (the
 *   time the errors plugin's onRequest, the app's first hook, puts on its context). The route is Elysia's
 *   route pattern (`/v1/admin/projects/:id`), never the raw path. A request refused before routing
 *   (401 or 429 from the auth plugin, 413) is matched against the app's route patterns; a path no
 *   route has is `unmatched`. CORS preflights are answered before any hook and not counted.
 * - A 429 also counts in relay_rate_limited_total, by whose bucket was empty (project or anonymous).
 */
import { timingSafeEqual } from "node:crypto";
import { Elysia, StatusMap } from "elysia";
import { HttpError } from "../http/errors.ts";
import type { CallerContext } from "../features/projects/caller.ts";
import type { WithRequestContext } from "../http/errors.plugin.ts";
import type { RelayMetrics, MetricSources } from "../kernel/metrics.ts";
import { requestPath } from "../http/request-path.ts";
import { RouteTable } from "../http/route-table.ts";

export interface MetricsPluginOptions {
  metrics: RelayMetrics;
  /** Bearer token of GET /metrics; unset: open. */
  token?: string;
  /** The app's routes (method and pattern), read when a request was refused before routing. */
  routes: () => readonly { method: string; path: string }[];
  /** Where the channel and pending-submission gauges read from. */
  sources: MetricSources;
}

const digest = (s: string) => new Bun.CryptoHasher("sha256").update(s).digest();

const statusOf = (set: { status?: unknown }, response: unknown): number => {
  if (response instanceof Response) return response.status;
  const s = set.status;
  if (typeof s === "number") return s;
  if (typeof s === "string") return (StatusMap as Record<string, number>)[s] ?? 200;
  return 200;
};

export function metricsPlugin(opts: MetricsPluginOptions) {
  const { metrics } = opts;
  metrics.bind(opts.sources);
  const expected = opts.token ? digest(opts.token) : null;
  const table = new RouteTable(opts.routes);
  const routeOf = (method: string, url: string): string => table.match(method, requestPath(url)) ?? "unmatched";
  return new Elysia({ name: "metrics" })
    .onAfterResponse({ as: "global" }, (ctx) => {
      const { request, route, set } = ctx;
      // the arrival time the errors plugin put on the context; the principal the auth plugin did (when it got that far)
      const { responseValue, startedAt, principal } = ctx as WithRequestContext<typeof ctx> &
        Partial<CallerContext> & { responseValue?: unknown };
      const status = statusOf(set, responseValue);
      metrics.request(
        request.method,
        route || routeOf(request.method, request.url),
        status,
        startedAt === undefined ? undefined : (performance.now() - startedAt) / 1000,
      );
      // no principal: refused before one was resolved (an unknown key, limited by the client IP's bucket)
      if (status === 429) metrics.rateLimited(principal && principal.projectId !== null ? "project" : "anonymous");
    })
    .get(
      "/metrics",
      async ({ request, set }) => {
        if (expected) {
          const m = /^Bearer (.+)$/.exec(request.headers.get("authorization") ?? "");
          if (!m || !timingSafeEqual(digest(m[1]!), expected))
            throw new HttpError("UNAUTHORIZED", "GET /metrics needs Authorization: Bearer <METRICS_TOKEN>", {
              "WWW-Authenticate": "Bearer",
            });
        }
        const { contentType, body } = await metrics.scrape();
        set.headers["content-type"] = contentType;
        set.headers["cache-control"] = "no-store";
        return body;
      },
      { detail: { hide: true } },
    );
}
