/**
 * Authentication and rate limiting, before any other work (before the body is parsed, so that
 * invalid requests count too):
 * - /v1/admin/*: `Authorization: Bearer <ADMIN_TOKEN>`, compared in constant time, or the operator
 *   console's session cookie (with X-CSRF-Token on a change; console-session.ts) (the routes do
 *   not exist without ADMIN_TOKEN: 404);
 * - every other /v1 request: X-API-Key (or `Authorization: Bearer <key>`) -> project (none: the anonymous testnet relay, per client
 *   IP), then one rate-limit token from the project's actor, with the RateLimit-* headers
 *   (and X-RateLimit-*) on the response, and 429 + Retry-After when the bucket is empty;
 * - a key this process does not know as valid (malformed, unknown, revoked, or not yet looked up)
 *   first takes a token from the client IP's anonymous bucket, before the database lookup: bad keys
 *   are limited per IP like anonymous requests, and cannot buy lookups without limit;
 * - an expired key (KEY_EXPIRED) is not known as valid either: its caller's IP pays first, as for a revoked one;
 * - a key's scopes, checked here after the token is taken (`scopeFor`: the path's scope), 403 SCOPE_REQUIRED;
 *   the compat endpoint's route asks by request kind (submitting: sponsor, getTransaction: read);
 * - /compat/* (other protocols, compat.routes.ts) as /v1, but a key not of the relay's form (not sr_...) is no key;
 * - /x402/* (the x402 facilitator, features/x402) as /v1, but a key is required (a merchant's, on testnet too).
 */
import { Elysia } from "elysia";
import {
  type AdminContext,
  type ConsoleSessions,
  type SignInLimiter,
  adminAuthenticator,
} from "../features/console/console-session.ts";
import type { CallerContext } from "../features/projects/caller.ts";
import { clientIp } from "../http/caller.ts";
import { HttpError } from "../http/errors.ts";
import { RelayError } from "../kernel/errors.ts";
import type { Gathering } from "../http/turn.ts";
import { requireScope } from "../features/projects/principal.ts";
import type { KeyScope } from "../features/projects/keys/key.model.ts";
import type { ProjectsService } from "../features/projects/projects.service.ts";
import type { ProjectActors } from "../features/projects/project-actors.ts";
import type { ProjectActor } from "../../actors/projects/project.machine.ts";
import { canonicalPath, requestPath } from "../http/request-path.ts";

/**
 * The scope a /v1 call needs: sponsor, simulate, estimate by their paths, read for every look-up (GET: transactions,
 * lists, the event stream). Null: none (the compat endpoint's route asks by request kind).
 */
export function scopeFor(method: string, path: string): KeyScope | null {
  if (path === "/x402/verify" || path === "/x402/settle") return "sponsor"; // the x402 facilitator's (features/x402)
  if (!path.startsWith("/v1/")) return null;
  if (path === "/v1/sponsor") return "sponsor";
  if (path === "/v1/simulate") return "simulate";
  if (path === "/v1/estimate") return "estimate";
  return method === "GET" || method === "HEAD" ? "read" : null;
}

/**
 * An API key sent as `Authorization: Bearer <key>` (what OpenZeppelin's clients and most HTTP tools
 * send): taken as X-API-Key is, so that a caller who sent a key is never served anonymously.
 */
function bearer(request: Request): string | null {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.get("authorization") ?? "");
  return m ? m[1]! : null;
}

export function authPlugin(deps: {
  projects: ProjectsService;
  actors: ProjectActors;
  adminToken?: string;
  /** The console's sessions (none: the bearer token only). */
  sessions?: ConsoleSessions;
  /** Wrong admin tokens per client IP (the app shares it with the channels protocol's adminSecret; default: its own). */
  adminLimiter?: SignInLimiter;
  trustProxy: boolean;
  /** Where a /v1 request waits for the requests that arrive with it (turn.ts). */
  gathering: Gathering;
}) {
  const admin = deps.adminToken
    ? adminAuthenticator({ adminToken: deps.adminToken, sessions: deps.sessions, limiter: deps.adminLimiter })
    : null;
  /** Takes one token from an actor's bucket: the RateLimit headers on the response, 429 when it is empty. */
  const take = async (actor: ProjectActor, headers: Record<string, unknown>) => {
    const admitted = await deps.actors.admit(actor);
    if (admitted.rate) {
      const { limit, remaining, resetSeconds } = admitted.rate;
      for (const prefix of ["", "x-"]) {
        headers[`${prefix}ratelimit-limit`] = String(limit);
        headers[`${prefix}ratelimit-remaining`] = String(remaining);
        headers[`${prefix}ratelimit-reset`] = String(resetSeconds);
      }
    }
    if (!admitted.ok) throw admitted.error;
  };
  return (
    new Elysia({ name: "auth" })
      .onRequest(async (context) => {
        const { request, server, set } = context;
        // decided on the path as the router may read it: no spelling of a scoped route passes for another path
        const path = canonicalPath(requestPath(request.url));
        // /compat: other protocols of the same API (compat.routes.ts), keys and rate limits as /v1's
        const compat = path.startsWith("/compat/");
        // /x402: the x402 facilitator (features/x402), a merchant's key required on every network
        const x402 = path.startsWith("/x402/");
        if (!compat && !x402 && !path.startsWith("/v1/")) return;
        if (path.startsWith("/v1/admin/") || path === "/v1/admin") {
          if (!admin)
            throw new RelayError(
              "NOT_FOUND",
              "the admin API is off: this relay has no ADMIN_TOKEN (set it, 16 characters or more, and restart)",
              { reason: "admin_api_disabled" },
            );
          const adminAuth = await admin(request, path, clientIp(request, server, deps.trustProxy));
          (context as typeof context & AdminContext).adminAuth = adminAuth;
          return;
        }
        const ip = clientIp(request, server, deps.trustProxy); // before the wait: the client may be gone after it
        // the requests that came with it go on together, stage by stage; a read waits for its turn only (turn.ts)
        const read = request.method === "GET" || request.method === "HEAD";
        await (read ? deps.gathering.endOfTurn() : deps.gathering.wait());
        const sent = request.headers.get("x-api-key") ?? bearer(request);
        // an Authorization that is no bearer key (Basic, a bare token...) is a key sent wrongly: never anonymous
        if (sent === null && !compat && request.headers.has("authorization"))
          throw new HttpError("UNAUTHORIZED", "send the API key as X-API-Key: <key> or Authorization: Bearer <key>", {
            "WWW-Authenticate": "Bearer",
          });
        if (x402 && sent === null)
          throw new HttpError(
            "UNAUTHORIZED",
            "the x402 facilitator needs the merchant's key: Authorization: Bearer <key>",
            {
              "WWW-Authenticate": "Bearer",
            },
          );
        // a compat client's key not of this relay's form (another service's, or a placeholder) is no key: anonymous
        const apiKey = compat && sent !== null && !sent.startsWith("sr_") ? null : sent;
        // a key hashed once: known as valid, or its caller's IP pays a rate-limit token first
        const known = apiKey === null ? null : deps.projects.knownKey(apiKey);
        if (apiKey !== null && known === null) await take(await deps.actors.anonymousFor(ip), set.headers);
        const principal = await deps.projects.authenticate(apiKey, ip, known ?? undefined);
        // set field by field: the context passed to a function would make Elysia parse every request's
        // cookies, query and headers (its static analysis cannot see what a callee reads)
        const caller = context as typeof context & CallerContext;
        caller.principal = principal;
        caller.clientIp = ip;
        await take(principal.actor, set.headers);
        const scope = scopeFor(request.method, path);
        if (scope) requireScope(principal, scope);
      })
      // fail closed, on the route the router matched (its pattern, not the path read above), before the body is
      // validated: an admin route runs only for a request the admin check let through, a keyed route only with the
      // caller resolved above and the scope its pattern needs
      .onTransform({ as: "global" }, (context) => {
        const route = (context as { route?: string }).route ?? "";
        if (route.startsWith("/v1/admin")) {
          if (!(context as typeof context & Partial<AdminContext>).adminAuth)
            throw new HttpError("UNAUTHORIZED", "the admin API needs Authorization: Bearer <ADMIN_TOKEN>", {
              "WWW-Authenticate": "Bearer",
            });
          return;
        }
        if (!route.startsWith("/v1/") && !route.startsWith("/x402/") && !route.startsWith("/compat/")) return;
        const { principal } = context as typeof context & Partial<CallerContext>;
        if (!principal) throw new RelayError("NOT_FOUND", `no route for ${context.request.method} ${context.path}`);
        const scope = scopeFor(context.request.method, route);
        if (scope) requireScope(principal, scope);
      })
  );
}
