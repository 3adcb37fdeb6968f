/** GET /health: per-network status from the ledger watchers; 503 when no network can be reached. No secrets, no authentication. */
import { Elysia } from "elysia";
import { HealthResponse } from "./schemas.ts";
import type { Gateway, NetworkName } from "../network/gateway.ts";

/** A network whose latest ledger is older than this is degraded. */
const STALE_MS = 30_000;

export function healthRoutes(deps: { gateways: Partial<Record<NetworkName, Gateway>>; version: string; startedAt: number; storage: () => Promise<{ database: string; status: string; checkpoints: string }> }) {
  return new Elysia({ name: "health.routes" }).get("/health", async ({ set }) => {
    const now = Date.now();
    const networks = Object.fromEntries(Object.entries(deps.gateways).map(([name, g]) => {
      const age = g.watcher.latestSeenAt ? now - g.watcher.latestSeenAt : Number.MAX_SAFE_INTEGER;
      const status = g.watcher.lastError ? "down" : age > STALE_MS ? "degraded" : "ok";
      return [name, { status, upstream: g.upstream, latestLedger: g.watcher.latestLedger, lastLedgerAgeMs: Math.min(age, Number.MAX_SAFE_INTEGER) }] as const;
    }));
    const statuses = Object.values(networks).map((n) => n.status);
    const storage = await deps.storage();
    const status = statuses.every((s) => s === "down") ? "down" : statuses.every((s) => s === "ok") && storage.status === "ok" ? "ok" : "degraded";
    if (status === "down") set.status = 503;
    return { status, version: deps.version, uptimeSeconds: Math.floor((now - deps.startedAt) / 1000), networks, storage };
  }, {
    response: { 200: HealthResponse, 503: HealthResponse },
    detail: { summary: "Relay health and status", tags: ["health"] },
  });
}
