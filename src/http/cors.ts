/**
 * CORS for browser dApps (@elysiajs/cors), configured by CORS_ORIGINS: a comma-separated list of
 * origins (`https://app.example`, scheme and host, no path) or `*` for any. Unset: no CORS headers
 * at all, and browsers keep other origins out.
 *
 * A preflight (OPTIONS) is answered 204 by the plugin's request hook, registered before the auth
 * plugin: it needs no API key and takes no rate-limit token. Methods GET and POST; request headers
 * Content-Type, X-API-Key, X-Idempotency-Key and X-Request-Id (a client's own request id); the
 * response headers a client reads are exposed.
 * No credentials (cookies are not used; API keys travel in X-API-Key). The admin API and
 * /metrics need Authorization, which is not allowed cross-origin.
 */
import { Elysia } from "elysia";
import { cors } from "@elysiajs/cors";

/** Request headers a browser may send cross-origin (beyond the CORS-safelisted ones). */
export const CORS_ALLOWED_HEADERS = ["Content-Type", "X-API-Key", "X-Idempotency-Key", "X-Request-Id"];
/** Response headers a browser may read cross-origin. */
export const CORS_EXPOSED_HEADERS = [
  "X-Request-Id",
  "Retry-After",
  "Idempotent-Replayed",
  "RateLimit-Limit",
  "RateLimit-Remaining",
  "RateLimit-Reset",
  "X-RateLimit-Limit",
  "X-RateLimit-Remaining",
  "X-RateLimit-Reset",
];
export const CORS_METHODS = ["GET", "POST"];
/** How long a browser may cache a preflight answer (seconds). */
const PREFLIGHT_MAX_AGE = 600;

/** CORS_ORIGINS as a list: trimmed, empty entries dropped; `*` anywhere means any origin. */
export function parseCorsOrigins(value: string | undefined): string[] {
  const origins = (value ?? "")
    .split(",")
    .map((s) => s.trim().replace(/\/+$/, ""))
    .filter(Boolean);
  return origins.includes("*") ? ["*"] : [...new Set(origins)];
}

/** The CORS plugin for `origins` (see parseCorsOrigins); none: a plugin that does nothing. */
export function corsPlugin(origins: string[] = []) {
  if (!origins.length) return new Elysia({ name: "cors" });
  // an exact match on the whole Origin (scheme, host, port), in a Set: the plugin's own list matching also
  // accepts an origin without its scheme and names on Object.prototype
  const allowed = new Set(origins);
  return cors({
    origin: origins.includes("*") ? "*" : (request: Request) => allowed.has(request.headers.get("origin") ?? ""),
    methods: CORS_METHODS,
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposeHeaders: CORS_EXPOSED_HEADERS,
    credentials: false,
    maxAge: PREFLIGHT_MAX_AGE,
    preflight: true,
  });
}
