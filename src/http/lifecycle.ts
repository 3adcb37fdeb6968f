/**
 * The relay's lifecycle as HTTP sees it: liveness, readiness (every configured network's channel
 * pool started; not shutting down) and graceful shutdown. While draining, new /v1 requests are
 * answered 503 with `Connection: close` and the requests in flight finish (the embedded networks
 * and the watchers stay up until they have), bounded by SHUTDOWN_GRACE_MS.
 */
import { Elysia, t } from "elysia";
import { RelayError } from "../kernel/errors.ts";
import { pathAndQuery } from "./request-path.ts";

export class Lifecycle {
  draining = false;
  private readonly inflight = new Set<Request>();
  private readonly idle = new Set<() => void>();

  /** What is still starting (for readiness); empty once everything is up. */
  constructor(readonly starting: () => string[]) {}

  enter(request: Request): void {
    this.inflight.add(request);
  }

  leave(request: Request): void {
    if (!this.inflight.delete(request) || this.inflight.size) return;
    for (const fn of [...this.idle]) fn();
  }

  get inFlight(): number {
    return this.inflight.size;
  }

  /** Stops taking /v1 requests and waits for those in flight, at most `graceMs`; true when all finished. */
  async drain(graceMs: number): Promise<boolean> {
    this.draining = true;
    if (!this.inflight.size) return true;
    return await new Promise<boolean>((resolve) => {
      const done = (all: boolean) => {
        clearTimeout(timer);
        this.idle.delete(onIdle);
        resolve(all);
      };
      const onIdle = () => done(true);
      const timer = setTimeout(() => done(false), graceMs);
      this.idle.add(onIdle);
    });
  }
}

/** The relay's API: /v1, and the other protocols it speaks (/compat: compat.routes.ts). */
const isApi = (request: Request) => {
  const path = pathAndQuery(request.url);
  return path.startsWith("/v1/") || path.startsWith("/compat/");
};

/** Counts /v1 and /compat requests in flight; refuses new ones while draining. */
export function lifecyclePlugin(lifecycle: Lifecycle) {
  return new Elysia({ name: "lifecycle" })
    .onRequest(({ request, set }) => {
      if (!isApi(request)) return;
      if (lifecycle.draining) {
        set.headers.connection = "close";
        throw new RelayError(
          "NETWORK_UNAVAILABLE",
          "the relay is shutting down; retry on another instance or shortly",
          { reason: "shutting_down" },
          { retryAfter: 2 },
        );
      }
      lifecycle.enter(request);
    })
    .onAfterResponse({ as: "global" }, ({ request }) => lifecycle.leave(request));
}

const Live = t.Object({ status: t.Literal("ok") }, { $id: "Liveness" });
const Ready = t.Object(
  {
    status: t.Union([t.Literal("ready"), t.Literal("starting"), t.Literal("shutting_down")]),
    starting: t.Array(t.String(), { description: 'what is still starting, e.g. "mainnet channel pool"' }),
  },
  { $id: "Readiness" },
);

/** GET /health/live (the process answers) and GET /health/ready (503 naming what is still starting, or while shutting down). */
export function probeRoutes(lifecycle: Lifecycle) {
  return new Elysia({ name: "probes" })
    .get("/health/live", () => ({ status: "ok" as const }), {
      response: { 200: Live },
      detail: { summary: "Liveness: the process answers", tags: ["health"] },
    })
    .get(
      "/health/ready",
      ({ set }) => {
        const starting = lifecycle.starting();
        const ready = !starting.length && !lifecycle.draining;
        if (!ready) set.status = 503;
        return {
          status: ready ? ("ready" as const) : lifecycle.draining ? ("shutting_down" as const) : ("starting" as const),
          starting,
        };
      },
      {
        response: { 200: Ready, 503: Ready },
        detail: {
          summary: "Readiness: every configured network's channel pool is ready and the relay is not shutting down",
          tags: ["health"],
        },
      },
    );
}
