/**
 * The OpenAPI document (GET /openapi/json) drives a client: it is valid OpenAPI 3.1 for a real validator, openapi-typescript
 * generates types from it, and what it says (statuses, headers, parameters, schemas) is what the relay does. The docs page
 * (GET /openapi) needs nothing but the relay.
 */
import { afterAll, describe, expect, mock, test } from "bun:test";
import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { Validator } from "@seriousme/openapi-schema-validator";
import * as ts5 from "typescript5";
import type { OpenAPI3 } from "openapi-typescript";
import { lightApp } from "../support/app.ts";
import { startTestRelay, type TestRelay } from "../support/relay.ts";
import { ERROR_STATUS } from "../../src/http/errors.ts";

// openapi-typescript builds its output with the TypeScript 5 API; the project's typescript (7) has no JS API
mock.module("typescript", () => ({ ...ts5, default: ts5 }));

type Json = Record<string, any>;
const light = lightApp({ anonymousPolicy: { requestsPerSecond: 0.001, burst: 3 }, trustProxy: true });
afterAll(() => light.stop());
const get = (path: string, headers: Record<string, string> = {}) =>
  light.app.handle(new Request(`http://localhost${path}`, { headers }));
const doc = (await (await get("/openapi/json")).json()) as Json;

const operations = (): { path: string; method: string; op: Json }[] =>
  Object.entries(doc.paths as Json).flatMap(([path, item]) =>
    Object.entries(item as Json).map(([method, op]) => ({ path, method, op: op as Json })),
  );
const op = (path: string, method: string): Json => doc.paths[path][method];
const statuses = (path: string, method: string) => Object.keys(op(path, method).responses).sort();
const headersOf = (path: string, method: string, status: string) =>
  Object.keys(op(path, method).responses[status].headers).sort();
/** The value a local `$ref` points to. */
const resolve = (ref: string): unknown =>
  ref
    .slice(2)
    .split("/")
    .reduce((node: any, key) => node?.[key], doc);
const ref = (path: string) => `#/components/${path}`;
const refsIn = (node: unknown): string[] =>
  Array.isArray(node)
    ? node.flatMap(refsIn)
    : node !== null && typeof node === "object"
      ? Object.entries(node).flatMap(([k, v]) => (k === "$ref" ? [v as string] : refsIn(v)))
      : [];

/** Ajv (JSON Schema 2020-12, OpenAPI 3.1's dialect) over the document's component schemas. */
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema({ $id: "https://relay.test/openapi", components: { schemas: doc.components.schemas } });
const schema = (name: string) => ajv.getSchema(`https://relay.test/openapi#/components/schemas/${name}`)!;
const expectValid = (name: string, value: unknown) => {
  const validate = schema(name);
  expect(validate(value), JSON.stringify(validate.errors)).toBe(true);
};

describe("the OpenAPI document", () => {
  test("is valid OpenAPI 3.1 (@seriousme/openapi-schema-validator); every $ref resolves; every schema compiles", async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc)); // resolveRefs() dereferences the document it was given
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
    expect(() => validator.resolveRefs()).not.toThrow();
    const refs = refsIn(doc);
    expect(refs.length).toBeGreaterThan(100);
    for (const ref of refs) expect(resolve(ref), ref).toBeDefined();
    for (const name of Object.keys(doc.components.schemas)) expect(schema(name), name).toBeFunction();
  });

  test("openapi-typescript generates the client's types: the API key, the idempotency key, the error codes, every route", async () => {
    const { default: openapiTS, astToString } = await import("openapi-typescript");
    const types = astToString(await openapiTS(structuredClone(doc) as OpenAPI3));
    expect(ts5.transpileModule(types, { reportDiagnostics: true }).diagnostics).toEqual([]);
    expect(types).toContain('"X-API-Key"?: components["parameters"]["ApiKey"]');
    expect(types).toContain('"X-Idempotency-Key"?: components["parameters"]["IdempotencyKey"]');
    expect(types).toContain(
      `ErrorCode: ${Object.keys(ERROR_STATUS)
        .map((c) => `"${c}"`)
        .join(" | ")};`,
    );
    // the answer's type (after the example the generator puts in a comment above it)
    expect(types).toMatch(
      /content: \{\n(\s*\/?\*.*\n)*\s*"application\/json": components\["schemas"\]\["SponsorResponse"\];/,
    );
    for (const path of ["/v1/sponsor", "/v1/simulate", "/v1/estimate", "/v1/admin/projects/{id}/keys", "/health"]) {
      expect(types).toContain(`"${path}": {`);
    }
  });

  test("security schemes: X-API-Key (optional: the anonymous testnet relay; required by the event stream) on the relay routes, the bearer token or the console's session cookie on the admin API (signing in: the token)", () => {
    expect(doc.components.securitySchemes).toMatchObject({
      ApiKey: { type: "apiKey", in: "header", name: "X-API-Key" },
      AdminToken: { type: "http", scheme: "bearer" },
      ConsoleSession: { type: "apiKey", in: "cookie", name: "relay_console" },
    });
    for (const { path, method, op } of operations()) {
      if (path === "/v1/admin/session" && method === "post") expect(op.security, path).toEqual([{ AdminToken: [] }]);
      else if (path.startsWith("/v1/admin/"))
        expect(op.security, path).toEqual([{ AdminToken: [] }, { ConsoleSession: [] }]);
      else if (path === "/v1/events") expect(op.security, path).toEqual([{ ApiKey: [] }]);
      else if (path.startsWith("/v1/")) expect(op.security, path).toEqual([{ ApiKey: [] }, {}]);
      else expect(op.security, path).toBeUndefined();
    }
  });

  test("every status each route can answer; error answers are the envelope, its code one of ERROR_STATUS's (defined once)", () => {
    const relay = ["200", "400", "401", "403", "413", "422", "429", "500", "503"];
    expect(statuses("/v1/sponsor", "post")).toEqual([...relay, "202", "402", "504"].sort());
    expect(statuses("/v1/simulate", "post")).toEqual(relay);
    expect(statuses("/v1/estimate", "post")).toEqual(relay);
    expect(statuses("/v1/admin/projects", "post")).toEqual(["201", "400", "401", "404", "413", "500"]);
    expect(statuses("/v1/admin/projects/{id}/credits", "post")).toEqual([
      "200",
      "400",
      "401",
      "402",
      "404",
      "413",
      "500",
    ]);
    expect(statuses("/v1/admin/projects/{id}/credits", "get")).toEqual(["200", "400", "401", "404", "500"]);
    expect(statuses("/v1/admin/channels", "put")).toEqual(["202", "400", "401", "413", "500", "503"]);
    expect(statuses("/v1/admin/channels/{publicKey}", "delete")).toEqual(["202", "400", "401", "404", "500", "503"]);
    expect(statuses("/health", "get")).toEqual(["200", "503"]);
    expect(statuses("/v1/admin/projects/{id}/webhooks", "post")).toEqual(["201", "400", "401", "404", "413", "500"]);
    expect(statuses("/v1/admin/projects/{id}/webhooks/{webhookId}/deliveries", "get")).toEqual([
      "200",
      "400",
      "401",
      "404",
      "500",
    ]);
    expect(statuses("/v1/events", "get")).toEqual(["200", "400", "401", "403", "413", "429", "500", "503"]);
    for (const { path, op } of operations()) {
      for (const [status, response] of Object.entries(op.responses ?? {}) as [string, Json][]) {
        const isError = Number(status) >= 400 && path.startsWith("/v1/");
        if (!isError) continue;
        expect(response.content["application/json"].schema, `${path} ${status}`).toEqual({
          $ref: ref("schemas/ErrorResponse"),
        });
        for (const [code, s] of Object.entries(ERROR_STATUS))
          if (String(s) === status) expect(response.description).toContain(code);
      }
    }
    expect(doc.components.schemas.ErrorCode).toMatchObject({ type: "string", enum: Object.keys(ERROR_STATUS) });
    expect(doc.components.schemas.ErrorCode.default).toBeUndefined();
    expect(JSON.stringify(doc).match(/"requestId":\{/g)).toHaveLength(1); // the envelope, once
  });

  test("the operator console's routes: the session (sign in, its CSRF token, sign out), the stats, a transaction by hash, every pool; the page itself is not in the document", () => {
    expect(statuses("/v1/admin/session", "post")).toEqual(["201", "401", "429", "500"]);
    expect(statuses("/v1/admin/session", "get")).toEqual(["200", "401", "500"]);
    expect(statuses("/v1/admin/session", "delete")).toEqual(["200", "401", "403", "500"]);
    expect(op("/v1/admin/session", "post").responses["201"].content["application/json"].schema).toEqual({
      $ref: ref("schemas/AdminSession"),
    });
    expect(Object.keys(doc.components.schemas.AdminSession.properties).sort()).toEqual([
      "authenticatedBy",
      "csrfToken",
      "expiresAt",
    ]);
    expect(headersOf("/v1/admin/session", "post", "429")).toEqual(["Retry-After", "X-Request-Id"]);
    expect(statuses("/v1/admin/transactions/{hash}", "get")).toEqual(["200", "400", "401", "404", "500"]);
    const pools = op("/v1/admin/channels", "get");
    expect(pools.parameters.find((p: Json) => p.name === "network")?.required ?? false).toBe(false);
    expect(JSON.stringify(pools.responses["200"].content["application/json"].schema)).toContain("ChannelPools");
    expect(doc.components.schemas.Channel.required).toContain("holder");
    for (const path of Object.keys(doc.paths)) expect(path).not.toStartWith("/console");
  });

  test("shared component schemas: request and response bodies by reference, JSON only", () => {
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining([
        "SponsorRequest",
        "SponsorResponse",
        "TransactionRequest",
        "SimulateResponse",
        "EstimateResponse",
        "ErrorResponse",
        "ErrorCode",
        "HealthResponse",
        "NetworkHealth",
        "Project",
        "Policy",
        "PolicyPatch",
        "ApiKey",
        "CreatedApiKey",
        "CreditEntry",
        "ChannelPool",
        "CreateWebhookRequest",
        "Webhook",
        "CreatedWebhook",
        "WebhookDelivery",
      ]),
    );
    const sponsor = op("/v1/sponsor", "post").requestBody.content;
    expect(sponsor).toEqual({
      "application/json": { schema: { $ref: ref("schemas/SponsorRequest") }, example: expect.any(Object) },
    });
    expect(op("/v1/simulate", "post").requestBody.content["application/json"].schema).toEqual({
      $ref: ref("schemas/TransactionRequest"),
    });
    for (const { path, op } of operations()) {
      if (op.requestBody) expect(Object.keys(op.requestBody.content), path).toEqual(["application/json"]);
    }
  });

  test("the event stream: text/event-stream, Last-Event-ID", () => {
    const events = op("/v1/events", "get");
    expect(Object.keys(events.responses["200"].content)).toEqual(["text/event-stream"]);
    expect(events.responses["200"].content["text/event-stream"].schema).toMatchObject({
      type: "string",
      contentMediaType: "text/event-stream",
    });
    const lastEventId = resolve(events.parameters.at(-1).$ref) as Json;
    expect(lastEventId).toMatchObject({ name: "Last-Event-ID", in: "header", required: false });
    expect(new RegExp(lastEventId.schema.pattern).test("123")).toBe(true);
  });

  test("header parameters: X-Request-Id everywhere, X-API-Key on the relay routes, X-Idempotency-Key on sponsor", () => {
    const names = (path: string, method: string) =>
      op(path, method).parameters.map((p: Json) => (p.$ref ? (resolve(p.$ref) as Json).name : p.name));
    expect(names("/v1/sponsor", "post")).toEqual(["X-Request-Id", "X-API-Key", "X-Idempotency-Key", "Prefer"]);
    expect(names("/v1/simulate", "post")).toEqual(["X-Request-Id", "X-API-Key"]);
    expect(names("/v1/events", "get")).toEqual(["X-Request-Id", "X-API-Key", "Last-Event-ID"]);
    expect(names("/v1/admin/projects/{id}/keys/{keyId}", "delete")).toEqual(["X-Request-Id", "id", "keyId"]);
    for (const { path, method } of operations()) expect(names(path, method)[0]).toBe("X-Request-Id");
  });

  test("response headers: X-Request-Id, RateLimit-* on the relay routes, Retry-After on 429 and error 503s, Idempotent-Replayed", () => {
    const rate = ["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"];
    expect(headersOf("/v1/sponsor", "post", "200")).toEqual(["Idempotent-Replayed", ...rate, "X-Request-Id"]);
    expect(headersOf("/v1/sponsor", "post", "429")).toEqual([...rate, "Retry-After", "X-Request-Id"]);
    expect(headersOf("/v1/sponsor", "post", "503")).toEqual([...rate, "Retry-After", "X-Request-Id"]);
    expect(headersOf("/v1/estimate", "post", "422")).toEqual([...rate, "X-Request-Id"]);
    expect(headersOf("/v1/admin/projects", "get", "401")).toEqual(["WWW-Authenticate", "X-Request-Id"]);
    expect(headersOf("/v1/admin/channels", "get", "503")).toEqual(["Retry-After", "X-Request-Id"]);
    expect(headersOf("/health", "get", "503")).toEqual(["X-Request-Id"]);
    for (const { path, op } of operations()) {
      for (const r of Object.values(op.responses ?? {}) as Json[])
        expect(r.headers["X-Request-Id"], path).toBeDefined();
    }
  });
});

describe("what the document says is what the relay does", () => {
  test("answers validate against the documented schemas and carry the documented headers", async () => {
    const send = (path: string, init: { body: string; ip?: string; headers?: Record<string, string> }) =>
      light.app.handle(
        new Request(`http://localhost${path}`, {
          method: "POST",
          body: init.body,
          headers: { "content-type": "application/json", "x-forwarded-for": init.ip ?? "10.0.0.1", ...init.headers },
        }),
      );
    const unknownKey = await send("/v1/sponsor", { body: "{}", headers: { "x-api-key": "sr_test_unknown" } });
    const hostile = await send("/v1/estimate", { body: '{"transaction":"\\u0000"}', ip: "10.0.0.2" });
    const anonymousStream = await get("/v1/events", { "x-forwarded-for": "10.0.0.5" });
    const tooLarge = await send("/v1/simulate", { body: "x".repeat(300_000), ip: "10.0.0.3" });
    for (const [res, status] of [
      [unknownKey, 401],
      [hostile, 400],
      [tooLarge, 413],
      [anonymousStream, 401],
    ] as const) {
      expect(res.status).toBe(status);
      for (const h of ["x-request-id", "ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"]) {
        expect(res.headers.get(h), h).not.toBeNull();
      }
      expectValid("ErrorResponse", await res.json());
    }
    for (let i = 0; i < 3; i++) await send("/v1/estimate", { body: "{}", ip: "10.0.0.4" });
    const limited = await send("/v1/estimate", { body: "{}", ip: "10.0.0.4" });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expectValid("ErrorResponse", await limited.json());
    const admin = await get("/v1/admin/projects");
    expect(admin.status).toBe(401);
    expect(admin.headers.get("www-authenticate")).toBe("Bearer");
    expectValid("ErrorResponse", await admin.json());
    const health = await get("/health"); // no networks: down
    expect(health.status).toBe(503);
    expectValid("HealthResponse", await health.json());
  });

  test("X-Request-Id: the documented pattern is what the relay keeps and echoes", async () => {
    const pattern = new RegExp(doc.components.parameters.RequestId.schema.pattern);
    for (const id of ["a", "req-1.2_3:4@5", "x".repeat(128), "x".repeat(129), "a b", "a/b", "a,b", "é"]) {
      const res = await get("/health", { "x-request-id": id });
      expect(res.headers.get("x-request-id") === id, id).toBe(pattern.test(id));
    }
  });

  let relay: TestRelay;
  afterAll(() => relay?.stop());

  test("the whole relay: its embedded networks are not in the document; the idempotency key pattern is the relay's", async () => {
    relay = await startTestRelay();
    const real = (await relay.http.get("/openapi/json")).body as Json;
    const rpc = await relay.http.post("/localnet/testnet/rpc", '{"jsonrpc":"2.0","id":1,"method":"getHealth"}');
    expect(rpc.status).toBe(200); // the routes exist
    expect(Object.keys(real.paths).filter((p) => p.startsWith("/localnet"))).toEqual([]);
    expect(Object.keys(real.paths)).toEqual(
      expect.arrayContaining(["/v1/sponsor", "/v1/admin/projects", "/v1/admin/channels", "/health"]),
    );
    // the console overview's figures need the database: the whole relay has them
    expect(Object.keys(real.paths["/v1/admin/stats"].get.responses).sort()).toEqual(["200", "400", "401", "500"]);
    const pattern = new RegExp(real.components.parameters.IdempotencyKey.schema.pattern);
    for (const key of ["k", "!~", "x".repeat(255), "x".repeat(256), "a b", ""]) {
      const res = await relay.post(
        "/v1/sponsor",
        { transaction: "AAAA", network: "testnet" },
        { "x-idempotency-key": key },
      );
      expect(res.status, key).toBe(400); // a valid key gets as far as decoding the transaction
      expect(res.body.error.details.field !== "X-Idempotency-Key", key).toBe(pattern.test(key));
    }
  });
});

describe("the docs page works without network access", () => {
  test("GET /openapi and every asset it references are served by the relay: nothing off-host", async () => {
    const page = await get("/openapi");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toStartWith("text/html");
    const html = await page.text();
    expect(html).not.toMatch(/(?:https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}/i); // no absolute or protocol-relative URL
    const refs = [...html.matchAll(/(?:src|href|url:)\s*=?\s*"([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.sort()).toEqual([
      "/openapi/assets/swagger-ui-bundle.js",
      "/openapi/assets/swagger-ui.css",
      "/openapi/json",
    ]);
    for (const ref of refs) {
      const res = await get(ref);
      expect(res.status, ref).toBe(200);
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      const body = await res.text();
      if (ref.endsWith(".css")) {
        expect(res.headers.get("content-type")).toStartWith("text/css");
        const urls = [...body.matchAll(/url\(\s*['"]?([^'")]+)|@import\s+['"]([^'"]+)/g)].map((m) => (m[1] ?? m[2])!);
        expect(urls.length).toBeGreaterThan(0);
        for (const url of urls) expect(url, url).toStartWith("data:");
      }
      if (ref.endsWith(".js")) {
        expect(res.headers.get("content-type")).toStartWith("text/javascript");
        expect(body).toContain("SwaggerUIBundle");
      }
    }
    const { version } = await Bun.file(Bun.resolveSync("swagger-ui-dist/package.json", import.meta.dir)).json();
    expect((await Bun.file(`${import.meta.dir}/../../package.json`).json()).dependencies["swagger-ui-dist"]).toBe(
      version,
    ); // pinned
  });

  test("only the viewer's own files: anything else under /openapi/assets is 404", async () => {
    const paths = ["package.json", "..%2Fpackage.json", "..%2F..%2Fpackage.json", "index.html", ""].map(
      (f) => `/openapi/assets/${f}`,
    );
    for (const path of paths) {
      const res = await get(path);
      expect(res.status, path).toBe(404);
      expectValid("ErrorResponse", await res.json());
    }
  });
});

describe("the OpenAPI document for people", () => {
  test("servers; an example on every JSON request and answer that validates against its schema; each error code described", async () => {
    expect(doc.servers).toEqual([{ url: "/", description: expect.any(String) }]);
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    for (const [name, schema] of Object.entries(doc.components.schemas))
      ajv.addSchema(schema as object, `#/components/schemas/${name}`);
    const invalid: string[] = [];
    for (const { path, method, op } of operations()) {
      const bodies = [
        ["request", op.requestBody?.content?.["application/json"]],
        ...Object.entries(op.responses ?? {}).map(([s, r]) => [s, (r as Json).content?.["application/json"]]),
      ] as [string, Json | undefined][];
      for (const [which, body] of bodies) {
        if (!body) continue;
        if (body.example === undefined) invalid.push(`${method} ${path} ${which}: no example`);
        else if (!ajv.validate(body.schema, body.example))
          invalid.push(`${method} ${path} ${which}: ${ajv.errorsText(ajv.errors)}`);
      }
    }
    expect(invalid).toEqual([]);
    const codes = doc.components.schemas.ErrorCode as Json;
    for (const code of Object.keys(ERROR_STATUS)) expect(codes.description).toContain(`- ${code} (`);
  });
});
