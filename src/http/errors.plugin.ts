/**
 * Request ids, access logs, security headers and the error envelope: every response carries
 * `X-Request-Id` and the security headers, and is logged (id, method, route, status, duration; never
 * bodies, keys or XDR); every error (ours, Elysia's validation/parse/not-found, or an unexpected
 * exception) becomes the spec's envelope with the same id. Unexpected exceptions are logged (a safe
 * summary: never SQL or its parameters) and answered as INTERNAL_ERROR without internals.
 */
import { Elysia, ValidationError } from "elysia";
import type { RouteTable } from "./route-table.ts";
import { DrizzleQueryError } from "drizzle-orm";
import { RelayError } from "../kernel/errors.ts";
import { ERROR_STATUS, HttpError, envelope, errorHeaders } from "./errors.ts";
import { type FlatFields, flatLogger, type Logger } from "../kernel/log.ts";
import { requestPath } from "./request-path.ts";
import { fromValidation } from "./validation-errors.ts";

/**
 * What the errors plugin's onRequest puts on each request's context. Elysia hands that same object to every later
 * hook, to the handler, to onError and to onAfterResponse (also when an earlier hook threw or no route matched), so
 * nothing is kept beside the request. Routes read it through `requestContext`; hooks through `WithRequestContext`.
 */
export interface RequestContext {
  /** The client's `X-Request-Id` when it is a sane one, else a new UUID: in the answer's header, its envelope, its logs. */
  requestId: string;
  /** performance.now() when the request arrived (the access log's and the request metrics' duration). */
  startedAt: number;
  /** Fields routes add to the request's access log line (`annotate`). */
  logFields: FlatFields;
}

/**
 * A hook's context as it carries the request context (unset before the errors plugin's onRequest ran). A cast, never
 * a call taking the context: Elysia's sucrose reads hooks' source, and a context passed to a function makes it
 * prepare everything (query, headers, cookies) for every request.
 */
export type WithRequestContext<C> = C & Partial<RequestContext>;

/** A client's own request id is kept (and echoed) when it is 1 to 128 of these characters. */
export const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:@-]{1,128}$/;

/**
 * The request context on a route's context, typed: `.use(requestContext)`, then `({ requestId, annotate })`.
 * The errors plugin's onRequest set it; this only exposes it.
 */
export const requestContext = new Elysia({ name: "request-context" }).resolve({ as: "scoped" }, (context) => {
  const { requestId = "", logFields } = context as WithRequestContext<typeof context>;
  return {
    requestId,
    /** Adds fields to the request's access log line (never secrets: project, network, hash, result code). */
    annotate: (fields: FlatFields): void => {
      if (logFields) Object.assign(logFields, fields);
    },
  };
});

/**
 * What an unexpected error may log: its message and code. A failed query's message holds the SQL and
 * its parameters (a key's hash and prefix, names...): only the driver's own message and code are kept.
 */
export function safeError(error: unknown): { message: string; code?: string } {
  const e = error instanceof DrizzleQueryError ? error.cause : error;
  if (!(e instanceof Error))
    return { message: error instanceof DrizzleQueryError ? "a database query failed" : String(e) };
  const code = (e as { code?: unknown }).code;
  return { message: e.message, ...(typeof code === "string" ? { code } : {}) };
}

/** Headers every response carries; `Cache-Control: no-store` on the admin API, whose answers hold keys and balances. */
export function securityHeaders(path: string, hstsMaxAge: number): Record<string, string> {
  return {
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    ...(path === "/v1/admin" || path.startsWith("/v1/admin/") ? { "cache-control": "no-store" } : {}),
    ...(hstsMaxAge > 0 ? { "strict-transport-security": `max-age=${hstsMaxAge}` } : {}),
  };
}

const pathOf = (request: Request) => requestPath(request.url);

/**
 * Another protocol's error shape for the paths under `prefix` (src/features/compat/compat.routes.ts): its status and body for
 * the relay's error, instead of the envelope. Request ids, headers and logs are as for any error.
 */
export interface ErrorDialect {
  prefix: string;
  answer(e: RelayError): { status: number; body: unknown };
}

export function errorsPlugin(opts: {
  log: Logger;
  hstsMaxAge?: number;
  dialects?: ErrorDialect[];
  /** The app's routes: a path that has routes, but not for the method asked, is 405 with Allow. */
  routes?: RouteTable;
}) {
  const headersFor = (request: Request) => securityHeaders(pathOf(request), opts.hstsMaxAge ?? 0);
  const access = flatLogger(opts.log);
  return new Elysia({ name: "errors" })
    .onRequest((context) => {
      const { request, set } = context;
      const own = request.headers.get("x-request-id");
      const id = own !== null && CLIENT_REQUEST_ID.test(own) ? own : crypto.randomUUID();
      const state = context as typeof context & RequestContext;
      state.requestId = id;
      state.startedAt = performance.now();
      state.logFields = {};
      set.headers["x-request-id"] = id;
      Object.assign(set.headers, headersFor(request));
    })
    .onAfterResponse({ as: "global" }, (context) => {
      const { request, route, set, params } = context;
      const { requestId = "", startedAt, logFields } = context as WithRequestContext<typeof context>;
      const path = route || pathOf(request);
      const line = {
        requestId,
        method: request.method,
        route: path,
        status: set.status ?? 200,
        durationMs: startedAt === undefined ? undefined : Math.round((performance.now() - startedAt) * 100) / 100,
        ...logFields,
      };
      // the embedded networks' own traffic (the relay's watchers poll them) is debug-level
      access[path.startsWith("/localnet/") ? "debug" : "info"](line, "request");
      // an operator's change: one audit line with what was changed (ids from the path, never bodies or keys)
      if (path.startsWith("/v1/admin") && request.method !== "GET")
        opts.log.info({ ...line, audit: true, params }, "admin change");
    })
    .onError({ as: "global" }, (context) => {
      const { code, error, request, set } = context;
      const { requestId = "" } = context as WithRequestContext<typeof context>;
      let e: RelayError;
      if (error instanceof RelayError) e = error;
      else if (error instanceof ValidationError) e = fromValidation(error, new URL(request.url).searchParams);
      // the body parser's own refusals (src/http/input.plugin.ts) reach here wrapped in Elysia's ParseError
      else if (code === "PARSE" && error.cause instanceof RelayError) e = error.cause;
      else if (code === "PARSE")
        e = new RelayError("VALIDATION_ERROR", "the request body is not valid JSON", { reason: "invalid_json" });
      else if (code === "NOT_FOUND") e = notFound(request, opts.routes);
      else {
        opts.log.error({ requestId, err: safeError(error) }, "unexpected error");
        e = new RelayError("INTERNAL_ERROR", "internal error");
      }
      set.status = ERROR_STATUS[e.code];
      set.headers["x-request-id"] = requestId;
      Object.assign(set.headers, headersFor(request), errorHeaders(e));
      if (e instanceof HttpError) for (const [k, v] of Object.entries(e.headers)) set.headers[k.toLowerCase()] = v;
      const dialect = opts.dialects?.find((d) => pathOf(request).startsWith(d.prefix));
      if (!dialect) return envelope(e, requestId);
      const { status, body } = dialect.answer(e);
      set.status = status;
      return body;
    });
}

/** No route for the request: 405 with Allow when its path has routes for other methods, else 404. */
function notFound(request: Request, routes?: RouteTable): RelayError {
  const path = pathOf(request);
  const allow = routes?.methods(path) ?? [];
  if (!allow.length) return new RelayError("NOT_FOUND", `no route for ${request.method} ${path}`);
  return new HttpError("METHOD_NOT_ALLOWED", `${path} does not take ${request.method}: it takes ${allow.join(", ")}`, {
    Allow: allow.join(", "),
  });
}

export const payloadTooLarge = (maxBodyBytes: number) =>
  new RelayError("PAYLOAD_TOO_LARGE", `the request body is larger than ${maxBodyBytes} bytes`, { limit: maxBodyBytes });

/** 413 for a declared body over the limit (registered after authentication, so that it counts against the rate limit). */
export function bodyLimitPlugin(maxBodyBytes: number) {
  return new Elysia({ name: "body-limit" }).onRequest(({ request }) => {
    const length = Number(request.headers.get("content-length") ?? 0);
    if (length > maxBodyBytes) throw payloadTooLarge(maxBodyBytes);
  });
}

/**
 * The answer to a request that failed outside the app's error handling (Bun.serve's `error` hook, e.g. a
 * stack overflow while answering): the envelope with a fresh request id, never Bun's HTML page.
 */
export function internalErrorResponse(log: Logger, error: unknown, hstsMaxAge = 0): Response {
  const id = crypto.randomUUID();
  log.error({ requestId: id, err: safeError(error) }, "unexpected error outside the app");
  const headers = { "x-request-id": id, "cache-control": "no-store", ...securityHeaders("", hstsMaxAge) };
  return Response.json(envelope(new RelayError("INTERNAL_ERROR", "internal error"), id), { status: 500, headers });
}
