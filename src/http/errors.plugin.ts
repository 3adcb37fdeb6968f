/**
 * Request ids, access logs and the error envelope: every response carries `X-Request-Id` and is
 * logged (id, method, route, status, duration; never bodies, keys or XDR); every error (ours,
 * Elysia's validation/parse/not-found, or an unexpected exception) becomes the spec's envelope with
 * the same id. Unexpected exceptions are logged and answered as INTERNAL_ERROR without internals.
 */
import { Elysia, ValidationError } from "elysia";
import { RelayError, envelope } from "./errors.ts";
import type { Logger } from "../log.ts";

const ids = new WeakMap<Request, string>();
const started = new WeakMap<Request, number>();

/** The request id of a request (assigned when it arrived). */
export const requestIdOf = (request: Request): string => ids.get(request) ?? "";

function fromValidation(e: ValidationError): RelayError {
  const first = e.all[0] as { path?: string; message?: string; summary?: string } | undefined;
  const field = first?.path ? first.path.replace(/^\//, "").replace(/\//g, ".") : undefined;
  const message = field ? `${field}: ${first?.summary ?? first?.message ?? "is invalid"}` : "the request body is invalid";
  return new RelayError("VALIDATION_ERROR", message, { ...(field ? { field } : {}), reason: first?.summary ?? first?.message ?? "invalid" });
}

export function errorsPlugin(opts: { log: Logger }) {
  return new Elysia({ name: "errors" })
    .onRequest(({ request, set }) => {
      const id = crypto.randomUUID();
      ids.set(request, id);
      started.set(request, performance.now());
      set.headers["x-request-id"] = id;
    })
    .onAfterResponse({ as: "global" }, ({ request, route, set }) => {
      const t0 = started.get(request);
      const path = route || new URL(request.url).pathname;
      // the embedded networks' own traffic (the relay's watchers poll them) is debug-level
      opts.log[path.startsWith("/localnet/") ? "debug" : "info"]({ requestId: requestIdOf(request), method: request.method, route: path, status: set.status ?? 200, durationMs: t0 === undefined ? undefined : Math.round((performance.now() - t0) * 100) / 100 }, "request");
    })
    .onError({ as: "global" }, ({ code, error, request, set }) => {
      let e: RelayError;
      if (error instanceof RelayError) e = error;
      else if (error instanceof ValidationError) e = fromValidation(error);
      else if (code === "PARSE") e = new RelayError("VALIDATION_ERROR", "the request body is not valid JSON", { reason: "invalid JSON" });
      else if (code === "NOT_FOUND") e = new RelayError("NOT_FOUND", `no route for ${request.method} ${new URL(request.url).pathname}`);
      else {
        opts.log.error({ requestId: requestIdOf(request), err: error instanceof Error ? error.message : String(error) }, "unexpected error");
        e = new RelayError("INTERNAL_ERROR", "internal error");
      }
      set.status = e.status;
      const id = requestIdOf(request);
      set.headers["x-request-id"] = id;
      for (const [k, v] of Object.entries(e.headers)) set.headers[k.toLowerCase()] = v;
      return envelope(e, id);
    });
}

/** 413 for a declared body over the limit (registered after authentication, so that it counts against the rate limit). */
export function bodyLimitPlugin(maxBodyBytes: number) {
  return new Elysia({ name: "body-limit" }).onRequest(({ request }) => {
    const length = Number(request.headers.get("content-length") ?? 0);
    if (length > maxBodyBytes) throw new RelayError("PAYLOAD_TOO_LARGE", `the request body is larger than ${maxBodyBytes} bytes`, { limit: maxBodyBytes });
  });
}
