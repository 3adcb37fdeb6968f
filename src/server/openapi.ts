/**
 * The OpenAPI 3.1 document (GET /openapi/json) and its viewer (GET /openapi: Swagger UI from the pinned swagger-ui-dist
 * package, served by the relay under /openapi/assets, so that the page works without network access).
 *
 * The document is generated from the routes' TypeBox schemas (@elysiajs/openapi's toOpenAPISchema), then completed for
 * client generators:
 * - each schema with a `$id` (src/features/projects/project.model.ts, src/http/schemas.ts, the admin routes) is moved to components.schemas once
 *   and referenced;
 * - the security schemes and the X-Idempotency-Key parameter, which the routes' `detail` names (the exports below);
 * - each response's description (the error codes of its status) and headers: X-Request-Id on every one, RateLimit-* where
 *   the route takes a rate-limit token (the X-API-Key routes), Retry-After on 429 and on an error 503, WWW-Authenticate
 *   on the admin API's 401, Idempotent-Replayed on the answers an idempotency key can replay;
 * - request bodies are JSON only: the relay parses them itself (src/http/input.plugin.ts) with a function the generator
 *   cannot describe (it would leave the bodies out), so the generator is shown Elysia's JSON parser instead;
 * - header parameters: an optional X-Request-Id on every operation (src/http/errors.plugin.ts keeps and echoes a client's
 *   sane one); X-API-Key where the ApiKey scheme applies too, since generated clients type headers from parameters only.
 * The embedded test networks (/localnet/*) are not the relay's API: they are left out.
 */
import { dirname, join } from "node:path";
import { Elysia, type AnyElysia, type InternalRoute } from "elysia";
import { toOpenAPISchema } from "@elysiajs/openapi";
import { ERROR_DESCRIPTIONS, RelayError, type ErrorCode } from "../kernel/errors.ts";
import { EXAMPLES, errorExample, exampleOf } from "./openapi-examples.ts";
import { webhookEvents } from "./openapi-webhooks.ts";
import { TransactionSummary } from "../features/transactions/transaction.model.ts";
import { ERROR_STATUS } from "../http/errors.ts";
import { CLIENT_REQUEST_ID } from "../http/errors.plugin.ts";
import { IDEMPOTENCY_KEY } from "../features/sponsor/idempotency.ts";

import { idempotencyKeyParameter } from "../http/openapi-refs.ts";

const header = (description: string, type = "string") => ({ description, schema: { type } });
const HEADERS = {
  "X-Request-Id": header("The request's id: in the relay's logs, and error.requestId of an error"),
  "RateLimit-Limit": header("The caller's bucket size (also X-RateLimit-Limit)", "integer"),
  "RateLimit-Remaining": header("Requests left in the bucket (also X-RateLimit-Remaining)", "integer"),
  "RateLimit-Reset": header("Seconds until the bucket is full again (also X-RateLimit-Reset)", "integer"),
  "Retry-After": header("Seconds to wait before retrying", "integer"),
  "WWW-Authenticate": header("Bearer"),
  "Idempotent-Replayed": header("true: the answer of an earlier request with the same X-Idempotency-Key and body"),
  Location: header("Where the submission can be looked up: /v1/transactions/{innerHash}"),
  "Preference-Applied": header("respond-async: the asynchronous answer was given (RFC 7240)"),
};
type HeaderName = keyof typeof HEADERS;
/** A header's name in components.headers: XRequestId, RateLimitLimit... */
const headerId = (name: string) => name.replace(/-/g, "");
/** A response's headers, referenced. */
const headerRefs = (names: HeaderName[]) =>
  Object.fromEntries(names.map((n) => [n, { $ref: `#/components/headers/${headerId(n)}` }]));

const COMPONENTS = {
  securitySchemes: {
    ApiKey: {
      type: "apiKey",
      in: "header",
      name: "X-API-Key",
      description:
        "A project's key: sr_test_ for testnet, sr_live_ for mainnet. Optional on testnet (the anonymous relay, limited per " +
        "client IP); mainnet needs one.",
    },
    AdminToken: {
      type: "http",
      scheme: "bearer",
      description: "The relay's ADMIN_TOKEN (without it, the admin API does not exist: 404)",
    },
    ConsoleSession: {
      type: "apiKey",
      in: "cookie",
      name: "relay_console",
      description:
        "The operator console's session (POST /v1/admin/session); a change made with it also needs the session's " +
        "X-CSRF-Token header (403 without)",
    },
  },
  parameters: {
    ApiKey: {
      name: "X-API-Key",
      in: "header",
      required: false,
      description: "See the ApiKey security scheme",
      schema: { type: "string" },
    },
    RequestId: {
      name: "X-Request-Id",
      in: "header",
      required: false,
      description:
        "Your id for the request, answered in X-Request-Id and error.requestId (otherwise the relay makes one)",
      schema: { type: "string", pattern: CLIENT_REQUEST_ID.source },
    },
    IdempotencyKey: {
      name: "X-Idempotency-Key",
      in: "header",
      required: false,
      description:
        "Per caller, kept IDEMPOTENCY_TTL_MS (24 h): the same key and body answers the first outcome (with Idempotent-Replayed: " +
        "true), another body is IDEMPOTENCY_KEY_REUSED; 503 and 504 are not kept",
      schema: { type: "string", pattern: IDEMPOTENCY_KEY.source },
    },
    LastEventId: {
      name: "Last-Event-ID",
      in: "header",
      required: false,
      description:
        "The id of the last event received: the stream resumes after it (events are kept at least 24 h); without it, " +
        "the stream starts with the events from now on",
      schema: { type: "string", pattern: "^[0-9]{1,19}$" },
    },
  },
  headers: Object.fromEntries(Object.entries(HEADERS).map(([name, h]) => [headerId(name), h])),
};

const REASONS: Record<string, string> = {
  200: "OK",
  201: "Created",
  202: "Accepted",
  400: "Bad request",
  401: "Unauthorized",
  402: "Payment required",
  403: "Forbidden",
  404: "Not found",
  413: "Content too large",
  422: "Unprocessable",
  429: "Too many requests",
  500: "Internal error",
  503: "Service unavailable",
  504: "Gateway timeout",
};
const codesOf = (status: string) =>
  Object.entries(ERROR_STATUS)
    .filter(([, s]) => String(s) === status)
    .map(([code]) => code);
/** Answers an idempotency key can replay: kept outcomes (503 and 504 are not kept; 401, 413, 429 come before the key is read). */
const REPLAYED = new Set(["200", "400", "402", "403", "422"]);
const ERROR_REF = "#/components/schemas/ErrorResponse";

type Info = { title: string; version: string };

interface ResponseObject {
  description: string;
  headers?: Record<string, unknown>;
  content?: Record<string, { schema: { $ref?: string; contentMediaType?: string } }>;
}
interface Operation {
  security?: Record<string, string[]>[];
  parameters?: { $ref?: string }[];
  responses?: Record<string, ResponseObject>;
}

/** Replaces each schema with a `$id` by a reference to it in `schemas` (one definition per id). */
function hoist(node: unknown, schemas: Record<string, unknown>): unknown {
  if (Array.isArray(node)) return node.map((n) => hoist(n, schemas));
  if (node === null || typeof node !== "object") return node;
  const { $id, ...rest } = node as Record<string, unknown>;
  const out = Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, hoist(v, schemas)]));
  if (typeof $id !== "string") return out;
  if ($id in schemas && JSON.stringify(schemas[$id]) !== JSON.stringify(out))
    throw new Error(`two different schemas have $id ${$id}`);
  schemas[$id] = out;
  return { $ref: `#/components/schemas/${$id}` };
}

function complete(op: Operation): void {
  const keyed = op.security?.some((s) => "ApiKey" in s) ?? false;
  const admin = op.security?.some((s) => "AdminToken" in s) ?? false;
  const replayable = op.parameters?.some((p) => p.$ref === idempotencyKeyParameter.$ref) ?? false;
  const asynchronous = op.parameters?.some((p) => (p as { name?: string }).name === "Prefer") ?? false;
  const ref = (name: string) => ({ $ref: `#/components/parameters/${name}` });
  op.parameters = [ref("RequestId"), ...(keyed ? [ref("ApiKey")] : []), ...(op.parameters ?? [])];
  for (const [status, response] of Object.entries(op.responses ?? {})) {
    const text = response.content?.["text/plain"]?.schema;
    if (text?.contentMediaType) response.content = { [text.contentMediaType]: { schema: text } };
    const error = response.content?.["application/json"]?.schema.$ref === ERROR_REF;
    response.description = error
      ? `${REASONS[status] ?? status}: ${codesOf(status).join(" or ")}`
      : (REASONS[status] ?? status);
    response.headers = headerRefs([
      "X-Request-Id",
      ...(keyed ? (["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"] as const) : []),
      ...(status === "429" || (status === "503" && error) ? (["Retry-After"] as const) : []),
      ...(admin && status === "401" ? (["WWW-Authenticate"] as const) : []),
      ...(replayable && REPLAYED.has(status) ? (["Idempotent-Replayed"] as const) : []),
      ...(asynchronous && status === "202" ? (["Location", "Preference-Applied"] as const) : []),
    ]);
  }
}

/** The app as the generator reads it: its routes, with the bodies parsed as JSON (see the top of this file). */
const generatorView = (routes: readonly InternalRoute[]) =>
  ({
    getGlobalRoutes: () => routes.map((r) => ({ ...r, hooks: { ...r.hooks, parse: [{ fn: "json" }] } })),
  }) as unknown as AnyElysia;

/** An example on every JSON request and answer (src/server/openapi-examples.ts). */
function addExamples(paths: Record<string, Record<string, Operation>>, schemas: Record<string, unknown>): void {
  const resolve = (ref: string) => schemas[ref.replace("#/components/schemas/", "")] as Record<string, unknown>;
  for (const [path, item] of Object.entries(paths))
    for (const [method, op] of Object.entries(item)) {
      const body = (op as { requestBody?: { content?: Record<string, { schema: object; example?: unknown }> } })
        .requestBody?.content?.["application/json"];
      if (body) body.example = EXAMPLES[`${method} ${path} req`] ?? exampleOf(body.schema as never, resolve);
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        const json = response.content?.["application/json"] as { schema: { $ref?: string }; example?: unknown };
        if (!json) continue;
        json.example =
          json.schema.$ref === ERROR_REF
            ? errorExample(codesOf(status)[0] as ErrorCode)
            : (EXAMPLES[`${method} ${path} ${status}`] ?? exampleOf(json.schema as never, resolve));
      }
    }
}

/** The error codes' meanings and statuses on the ErrorCode schema. */
function describeCodes(schemas: Record<string, unknown>): void {
  const codes = schemas.ErrorCode as Record<string, unknown> | undefined;
  if (!codes) return;
  const entries = Object.entries(ERROR_DESCRIPTIONS) as [ErrorCode, string][];
  codes.description = `The error's code; each code has one HTTP status:\n${entries
    .map(([code, what]) => `- ${code} (${ERROR_STATUS[code]}): ${what}`)
    .join("\n")}`;
  codes["x-enumDescriptions"] = Object.fromEntries(entries);
}

/** The document of the app's routes, but the embedded networks' (see the top of this file). */
function documentOf(routes: readonly InternalRoute[], info: Info) {
  const generated = toOpenAPISchema(generatorView(routes), { paths: [/^\/localnet\//] });
  const schemas: Record<string, unknown> = {};
  const paths = hoist(generated.paths, schemas) as Record<string, Record<string, Operation>>;
  for (const item of Object.values(paths)) for (const op of Object.values(item)) complete(op);
  addExamples(paths, schemas);
  describeCodes(schemas);
  return {
    openapi: "3.1.1",
    info: { ...info, description: "Fee sponsorship for Stellar: the relay pays the fees of its callers' transactions" },
    servers: [{ url: "/", description: "The relay that serves this document" }],
    tags: [
      {
        name: "relay",
        description: "Sponsor, simulate and estimate (X-API-Key; anonymous on testnet); the event stream (X-API-Key)",
      },
      {
        name: "admin",
        description: "Projects, keys, credits and channel accounts (Authorization: Bearer ADMIN_TOKEN)",
      },
      { name: "health", description: "Status of the relay and its networks" },
    ],
    paths,
    webhooks: webhookEvents(hoist(structuredClone(TransactionSummary), schemas) as object), // a component of its own
    components: { schemas, ...COMPONENTS },
  };
}

const SWAGGER_UI = dirname(Bun.resolveSync("swagger-ui-dist/package.json", import.meta.dir));
const ASSETS = new Map([
  ["swagger-ui.css", "text/css; charset=utf-8"],
  ["swagger-ui-bundle.js", "text/javascript; charset=utf-8"],
]);

const page = (title: string) => `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${title}</title>
  <link rel="stylesheet" href="/openapi/assets/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/openapi/assets/swagger-ui-bundle.js"></script>
  <script>window.ui = SwaggerUIBundle({ url: "/openapi/json", dom_id: "#swagger-ui", validatorUrl: null, deepLinking: true });</script>
</body>
</html>
`;

/**
 * GET /openapi/json (the document of the app's routes, built on the first request: every route is declared by then),
 * GET /openapi and its assets.
 */
export function openapiRoutes(info: Info) {
  const hidden = { detail: { hide: true } };
  let document: ReturnType<typeof documentOf> | undefined;
  const docs = new Elysia({ name: "openapi" });
  // once used, a plugin's getGlobalRoutes (protected) lists its app's routes: what @elysiajs/openapi reads too
  const routes = () => (docs as unknown as { getGlobalRoutes(): InternalRoute[] }).getGlobalRoutes();
  return docs
    .get("/openapi/json", () => (document ??= documentOf(routes(), info)), hidden)
    .get(
      "/openapi",
      () => new Response(page(info.title), { headers: { "content-type": "text/html; charset=utf-8" } }),
      hidden,
    )
    .get(
      "/openapi/assets/:file",
      ({ params }) => {
        const type = ASSETS.get(params.file);
        if (!type) throw new RelayError("NOT_FOUND", `no asset ${params.file}`);
        const headers = { "content-type": type, "cache-control": "public, max-age=86400" };
        return new Response(Bun.file(join(SWAGGER_UI, params.file)), { headers });
      },
      hidden,
    );
}
