/**
 * GET /health: per-network status from the ledger watchers (and the network calls' failures); 503
 * when every network is down. No secrets (an upstream's URL, which may hold an API key, is cut out
 * of error messages), no authentication. Whatever a watcher holds, the answer is 200 or 503.
 *
 * Per network, with P the watcher's poll interval (WATCHER_POLL_MS):
 * - `down`: the last poll failed (`failingForMs` says since when), or no poll has succeeded yet;
 * - `degraded`: a poll or another call to the network failed within the last 5 P, or the latest
 *   ledger was first seen more than max(30 s, 10 P) ago (the network, or the upstream's view of it, is stuck);
 * - `ok` otherwise.
 */
import { Elysia } from "elysia";
import { HealthResponse } from "../http/schemas.ts";
import type { Gateway } from "../network/gateway.ts";
import type { Networks } from "../features/networks/networks.ts";

/** A network whose latest ledger is older than this (or 10 polls) is degraded: public networks close one every 5 to 6 s. */
const STALE_MS = 30_000;
/** A failure within this many poll intervals makes a network degraded. */
const RECENT_POLLS = 5;

type Status = "ok" | "degraded" | "down" | "starting";
type Storage = { database: string; status: string; checkpoints: string };

const finite = (n: number): number | null => (Number.isFinite(n) ? n : null);
/** A message fit to show anyone: no URLs (an upstream's may carry a key), one line, bounded. */
const publicMessage = (m: string): string =>
  m
    .replace(/[a-z][a-z0-9+.-]*:\/\/\S+/gi, "<url>")
    .replace(/\s+/g, " ")
    .slice(0, 300);

export function networkHealth(g: Gateway, now: number) {
  const w = g.watcher;
  const pollMs = Number.isFinite(w.pollMs) && w.pollMs > 0 ? w.pollMs : 1000;
  const recentMs = RECENT_POLLS * pollMs;
  const ledger = finite(w.latestLedger) ?? 0;
  const age = ledger > 0 && w.latestSeenAt > 0 ? finite(now - w.latestSeenAt) : null;
  const callFailure = g.lastFailure && now - g.lastFailure.at <= recentMs ? g.lastFailure : null;
  let status: Status;
  if (w.lastError !== null || ledger === 0) status = "down";
  else if (now - w.lastFailureAt <= recentMs || callFailure || age === null || age > Math.max(STALE_MS, 10 * pollMs))
    status = "degraded";
  else status = "ok";
  const lastError = w.lastError ?? callFailure?.message ?? (ledger === 0 ? "no answer from the network yet" : null);
  return {
    status,
    upstream: g.upstream,
    latestLedger: ledger,
    lastLedgerAgeMs: age,
    failingForMs: w.lastError !== null && w.failingSince !== null ? finite(now - w.failingSince) : null,
    lastError: lastError === null ? null : publicMessage(String(lastError)),
  };
}

export function healthRoutes(deps: {
  networks: Networks;
  version: string;
  startedAt: number;
  storage: () => Promise<Storage>;
  /** What is still starting (the channel pools): /health is 503 `starting` until it is empty. */
  starting?: () => string[];
}) {
  return new Elysia({ name: "health.routes" }).get(
    "/health",
    async ({ set }) => {
      const now = Date.now();
      // each network's state, and what signs for it (never a key or a PIN)
      const networks = Object.fromEntries(
        deps.networks
          .all()
          .map((n) => [n.name, { ...networkHealth(n.gateway, now), ...(n.pool ? { signer: n.pool.signer } : {}) }]),
      );
      const statuses = Object.values(networks).map((n) => n.status);
      const storage: Storage = await deps
        .storage()
        .catch(() => ({ database: "unknown", status: "down", checkpoints: "unknown" }));
      const starting = deps.starting?.() ?? [];
      // every network down says more than a pool that cannot start without them
      const status: Status = statuses.every((s) => s === "down")
        ? "down"
        : starting.length
          ? "starting"
          : statuses.every((s) => s === "ok") && storage.status === "ok"
            ? "ok"
            : "degraded";
      if (status === "down" || status === "starting") set.status = 503;
      return {
        status,
        ...(starting.length ? { starting } : {}),
        version: deps.version,
        uptimeSeconds: Math.max(0, Math.floor((now - deps.startedAt) / 1000)),
        networks,
        storage,
      };
    },
    {
      response: { 200: HealthResponse, 503: HealthResponse },
      detail: {
        summary: "Relay health and status (503: still starting, or every network is down)",
        tags: ["health"],
      },
    },
  );
}
