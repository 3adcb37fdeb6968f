/**
 * Hostile input and what every response carries: bodies nested without end, control characters in
 * bodies and URLs, numbers sent as strings, bodies that are not JSON, error logs without SQL,
 * unknown API keys taking rate-limit tokens from their IP, and the security headers. The whole
 * relay's app is called in this process, but over a socket where Bun's own server is under test.
 * Keys created, or live at boot, never costing their IP a token: relay-restart.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Elysia } from "elysia";
import { sql } from "drizzle-orm";
import { errorsPlugin } from "../../src/http/errors.plugin.ts";
import { serveOptions } from "../../src/app.ts";
import { MAX_JSON_DEPTH, screenJson } from "../../src/http/input.plugin.ts";
import { loadConfig } from "../../src/config.ts";
import { capturingLogger, startTestRelay, TEST_ADMIN_TOKEN, type TestRelay } from "../support/relay.ts";
import { lightApp } from "../support/app.ts";
import { expectError, parsed, UUID } from "../support/harness.ts";

const ADMIN = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
const JSON_TYPE = { "content-type": "application/json" };
/** Words of SQL, and what drizzle's failed-query message says: none may reach a log line. */
const SQL_WORDS = /\b(select|insert|update|delete from|params:|Failed query)\b/i;

const deepArray = (n: number) => "[".repeat(n) + "]".repeat(n);
const deepObject = (n: number) => `${'{"":'.repeat(n)}1${"}".repeat(n)}`;

test("screenJson: depth counted outside strings, control characters raw or escaped", () => {
  expect(() => screenJson(deepArray(MAX_JSON_DEPTH))).not.toThrow();
  expect(() => screenJson(deepArray(MAX_JSON_DEPTH + 1))).toThrow(/deeper than 32/);
  expect(() => screenJson(JSON.stringify({ s: "[".repeat(1000) + "{".repeat(1000) }))).not.toThrow(); // brackets inside a string
  expect(() => screenJson(JSON.stringify({ s: 'a "quoted" \\ back\\slash \u00e9 \u2028' }))).not.toThrow();
  for (const s of ["\u0000", "\t", "\n", "\u001f", "\u007f", "x\by", "\f", "\r"]) {
    expect(() => screenJson(JSON.stringify({ s }))).toThrow(/control character/);
    expect(() => screenJson(JSON.stringify({ [s]: 1 }))).toThrow(/control character/);
  }
  expect(() => screenJson('{"s":"\\u0000"}')).toThrow(/control character/);
  expect(() => screenJson('{"s":"\\u007F"}')).toThrow(/control character/);
  expect(() => screenJson('{"s":"\\u0020\\u00e9\\\\u0000"}')).not.toThrow(); // \\u0000 is a backslash and "u0000"
});

test("a failure outside the app's error handling is still the envelope (Bun's error hook), never Bun's page", async () => {
  const { log, lines } = capturingLogger();
  const app = new Elysia({ serve: serveOptions(log, 600) })
    .onError(() => {
      throw new RangeError("Maximum call stack size exceeded");
    })
    .get("/", () => {
      throw new Error("first");
    })
    .listen({ port: 0, hostname: "127.0.0.1" });
  try {
    const res = await parsed(await fetch(`http://127.0.0.1:${app.server!.port}/`));
    expectError(res, 500, "INTERNAL_ERROR");
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(res.headers.get("strict-transport-security")).toBe("max-age=600");
    expect(lines[0]).toMatchObject({
      requestId: res.body.error.requestId,
      err: { message: "Maximum call stack size exceeded" },
    });
  } finally {
    await app.stop();
  }
});

describe("a whole relay", () => {
  let r: TestRelay;
  const captured = capturingLogger();
  beforeAll(
    async () => {
      r = await startTestRelay({}, captured.log);
    },
    { timeout: 30_000 },
  );
  afterAll(() => r.stop());

  // in this process (app.handle), but for the tests that say "over a socket"
  const send = (method: string, path: string, body?: string, headers: Record<string, string> = {}) =>
    r.http.request(method, path, body, headers);
  const errorLines = () => captured.lines.filter((l) => (l.level as number) >= 50);

  test("JSON nested 10,000 and 50,000 deep is 400 VALIDATION_ERROR at once, over a socket; Bun never renders its error page", async () => {
    expect(r.app.server!.development).toBe(false);
    for (const n of [10_000, 50_000]) {
      const routes = [
        ["POST", "/v1/sponsor", {}],
        ["POST", "/v1/estimate", {}],
        ["POST", "/v1/admin/projects", ADMIN],
      ] as const;
      for (const [method, path, headers] of routes) {
        for (const body of [deepArray(n), deepObject(n)]) {
          const t0 = performance.now();
          const res = await r.tcp.request(method, path, body, headers);
          const ms = performance.now() - t0;
          expectError(res, 400, "VALIDATION_ERROR");
          expect(res.body.error.details).toEqual({ reason: "too_deep", limit: MAX_JSON_DEPTH });
          expect(ms).toBeLessThan(500);
        }
      }
    }
    // within the bound: the body reaches the route's validation
    const shallow = await r.tcp.request(
      "POST",
      "/v1/sponsor",
      JSON.stringify({ network: "testnet", transaction: "AAAA", extra: [[[[[[[[[[[]]]]]]]]]]] }),
    );
    expectError(shallow, 400, "VALIDATION_ERROR");
    expect(shallow.body.error.details.reason).not.toBe("too_deep");
    expect(errorLines()).toEqual([]);
  });

  test("a control character in a body's string or in the URL is 400 before any database work, and nothing with SQL is logged", async () => {
    const project = await r.project();
    const cases: [string, string, unknown][] = [
      ["POST", "/v1/admin/projects", { name: "a\u0000b" }],
      ["POST", "/v1/admin/projects", { name: "tab\there" }],
      ["POST", "/v1/admin/projects", { name: "del\u007f" }],
      ["PATCH", `/v1/admin/projects/${project.id}`, { name: "\u0000" }],
      ["POST", `/v1/admin/projects/${project.id}/keys`, { environment: "test", label: "nul\u0000label" }],
      ["POST", `/v1/admin/projects/${project.id}/credits`, { amount: "100", reference: "\u0001" }],
      ["POST", "/v1/sponsor", { network: "testnet", transaction: "AAAA\u0000" }],
      ["POST", "/v1/estimate", { transaction: "AAAA", "\u0000key": 1 }],
    ];
    for (const [method, path, body] of cases) {
      // the admin token on the admin API only: elsewhere a bearer token is taken as the API key
      const res = await send(method, path, JSON.stringify(body), path.startsWith("/v1/admin") ? ADMIN : {});
      expectError(res, 400, "VALIDATION_ERROR");
      expect(res.body.error.details.reason).toBe("control_character");
    }
    const paths = [
      "/v1/admin/projects/%00",
      `/v1/admin/projects/${project.id}%1F/keys`,
      "/v1/admin/projects/x%7f",
      "/v1/admin/projects?x=%0a",
    ];
    for (const path of paths) {
      const res = await send("GET", path, undefined, ADMIN);
      expectError(res, 400, "VALIDATION_ERROR");
      expect(res.body.error.details.reason).toBe("control_character");
    }
    expectError(await send("GET", "/v1/admin/projects/%00"), 401, "UNAUTHORIZED"); // the token is checked first
    // an escaped backslash followed by "u0000" is plain text
    const plain = await send("POST", "/v1/admin/projects", JSON.stringify({ name: "\\u0000" }), ADMIN);
    expect(plain.status).toBe(201);
    expect(plain.body.name).toBe("\\u0000");
    expect(errorLines()).toEqual([]);
    expect(captured.lines.filter((l) => SQL_WORDS.test(JSON.stringify(l)))).toEqual([]);
  });

  test("an unexpected database error is logged with the driver's message and code, never the SQL or its parameters", async () => {
    const { log, lines } = capturingLogger();
    const app = new Elysia()
      .use(errorsPlugin({ log }))
      .get("/boom", () => r.database.execute(sql`select * from no_such_table where hash = ${"secret-param-value"}`));
    const res = await parsed(await app.handle(new Request("http://localhost/boom")));
    expectError(res, 500, "INTERNAL_ERROR");
    const line = lines.find((l) => l.msg === "unexpected error")!;
    expect(line.requestId).toBe(res.body.error.requestId);
    expect(line.err).toMatchObject({ code: "42P01" });
    expect((line.err as { message: string }).message).toContain("no_such_table");
    const text = JSON.stringify(line);
    expect(text).not.toContain("secret-param-value");
    expect(text).not.toMatch(SQL_WORDS);
  });

  test("a key naming a member of Object.prototype is 400 (a value with its own toString was a 500)", async () => {
    const project = await r.project();
    const cases: [string, string, string][] = [
      ["POST", "/v1/admin/projects", '{"name":{"toString":""}}'],
      ["POST", "/v1/admin/projects", '{"name":[{"valueOf":1}]}'],
      ["PATCH", `/v1/admin/projects/${project.id}`, '{"policy":{"__proto__":{"burst":1}}}'],
      ["POST", "/v1/sponsor", '{"network":"testnet","transaction":"AAAA","constructor":{"prototype":{}}}'],
      ["POST", "/v1/estimate", '{"transaction":{"hasOwnProperty":1}}'],
    ];
    for (const [method, path, body] of cases) {
      const res = await send(method, path, body, path.startsWith("/v1/admin") ? ADMIN : {});
      expectError(res, 400, "VALIDATION_ERROR");
      expect(res.body.error.details.reason).toBe("reserved_key");
    }
    expect(errorLines()).toEqual([]);
  });

  test("a number sent as a string is 400 (no coercion of bodies)", async () => {
    for (const count of ["5", "4", " 4", "4.0"]) {
      const res = await send("PUT", "/v1/admin/channels", JSON.stringify({ network: "testnet", count }), ADMIN);
      expectError(res, 400, "VALIDATION_ERROR");
      expect(res.body.error.details.field).toBe("count");
    }
    const project = await r.project();
    for (const policy of [{ burst: "5" }, { requestsPerSecond: "5" }, { maxOperations: "5" }]) {
      const res = await send("PATCH", `/v1/admin/projects/${project.id}`, JSON.stringify({ policy }), ADMIN);
      expectError(res, 400, "VALIDATION_ERROR");
    }
    const same = await send("PUT", "/v1/admin/channels", JSON.stringify({ network: "testnet", count: 4 }), ADMIN); // the pool's size: no change
    expect(same.status).toBe(202);
  });

  test("bodies are JSON only: other content types are 400 unsupported_content_type", async () => {
    const body = JSON.stringify({ name: "typed" });
    const refused = [
      "text/plain",
      "text/json",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      "application/octet-stream",
      "application/jsonx",
    ];
    for (const type of refused) {
      const res = await send("POST", "/v1/admin/projects", body, { ...ADMIN, "content-type": type });
      expectError(res, 400, "VALIDATION_ERROR");
      expect(res.body.error.details.reason).toBe("unsupported_content_type");
    }
    for (const type of ["application/json; charset=utf-8", "Application/JSON", "application/vnd.relay+json"]) {
      expect((await send("POST", "/v1/admin/projects", body, { ...ADMIN, "content-type": type })).status).toBe(201);
    }
  });

  test("a chunked body over MAX_BODY_BYTES is 413 in the envelope", async () => {
    const big = new TextEncoder().encode(JSON.stringify({ transaction: "A".repeat(300_000), network: "testnet" }));
    const stream = new ReadableStream({
      start(c) {
        c.enqueue(big);
        c.close();
      },
    });
    const chunked = new Request("http://localhost/v1/sponsor", { method: "POST", headers: JSON_TYPE, body: stream });
    const res = await parsed(await r.app.handle(chunked));
    expectError(res, 413, "PAYLOAD_TOO_LARGE");
  });

  test("over a real socket, any size, chunked or not: 413 in the envelope with X-Request-Id (never Bun's bare 413)", async () => {
    const mib = 1024 * 1024;
    for (const size of [2 * mib, 16 * mib]) {
      const payload = new Uint8Array(size).fill(0x41);
      const chunks = (function* () {
        for (let i = 0; i < size; i += 64 * 1024) yield payload.subarray(i, i + 64 * 1024);
      })();
      const stream = new ReadableStream({
        pull(c) {
          const n = chunks.next();
          if (n.done) c.close();
          else c.enqueue(n.value);
        },
      });
      for (const body of [payload, stream]) {
        const res = await fetch(`${r.url}/v1/sponsor`, { method: "POST", headers: JSON_TYPE, body });
        const json = (await res.json()) as { error: { code: string; requestId: string } };
        expect(res.status).toBe(413);
        expect(json.error.code).toBe("PAYLOAD_TOO_LARGE");
        expect(json.error.requestId).toBe(res.headers.get("x-request-id")!);
      }
    }
  });

  test("security headers on every response; no-store on the admin API (key creation included); no HSTS unless configured", async () => {
    const project = await r.project();
    const responses = [
      await send("GET", "/health"),
      await send("GET", "/openapi/json"),
      await send("GET", "/nowhere"),
      await send("POST", "/v1/estimate", "{}"),
      await send("POST", "/v1/sponsor", "{"),
      await send("GET", "/v1/admin/projects"),
      await send("GET", "/v1/admin/projects", undefined, ADMIN),
      await send("POST", `/v1/admin/projects/${project.id}/keys`, JSON.stringify({ environment: "live" }), ADMIN),
    ];
    for (const res of responses) {
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("referrer-policy")).toBe("no-referrer");
      expect(res.headers.get("strict-transport-security")).toBeNull();
      expect(res.headers.get("x-request-id")).toMatch(UUID);
    }
    const [health, , , , , unauthorized, list, created] = responses;
    expect(created!.status).toBe(201);
    expect(created!.body.key).toStartWith("sr_live_");
    for (const res of [unauthorized!, list!, created!]) expect(res.headers.get("cache-control")).toBe("no-store");
    expect(health!.headers.get("cache-control")).toBeNull();
  });
});

test("HSTS_MAX_AGE: off by default; when set, Strict-Transport-Security on every response", async () => {
  expect(loadConfig({}).HSTS_MAX_AGE).toBe(0);
  expect(loadConfig({ HSTS_MAX_AGE: "31536000" }).HSTS_MAX_AGE).toBe(31_536_000);
  expect(() => loadConfig({ HSTS_MAX_AGE: "-1" })).toThrow(/HSTS_MAX_AGE/);
  const light = lightApp({ hstsMaxAge: 31_536_000 });
  for (const path of ["/health", "/v1/estimate", "/nowhere", "/v1/admin/projects"]) {
    const res = await light.app.handle(
      new Request(`http://localhost${path}`, { method: path === "/v1/estimate" ? "POST" : "GET" }),
    );
    expect(res.headers.get("strict-transport-security")).toBe("max-age=31536000");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  }
  await light.stop();
});

describe("unknown API keys take a token from their client IP's anonymous bucket", () => {
  const estimate = (app: ReturnType<typeof lightApp>["app"], ip: string, key?: string) =>
    app
      .handle(
        new Request("http://localhost/v1/estimate", {
          method: "POST",
          headers: { ...JSON_TYPE, "x-forwarded-for": ip, ...(key === undefined ? {} : { "x-api-key": key }) },
          body: "{}",
        }),
      )
      .then(parsed);

  test("before the lookup: after the IP's burst, unknown, malformed and missing keys are 429 without a lookup", async () => {
    const light = lightApp({ anonymousPolicy: { requestsPerSecond: 0.01, burst: 3 }, trustProxy: true });
    const unknown = () => `sr_test_${crypto.randomUUID().replace(/-/g, "")}`;
    for (const remaining of [2, 1, 0]) {
      const res = await estimate(light.app, "203.0.113.5", unknown());
      expectError(res, 401, "UNAUTHORIZED");
      expect(res.headers.get("ratelimit-remaining")).toBe(String(remaining));
      expect(res.headers.get("ratelimit-limit")).toBe("3");
    }
    expect(light.lookups()).toBe(3);
    for (const key of [unknown(), "sr_test_short", "not a key", undefined]) {
      const res = await estimate(light.app, "203.0.113.5", key);
      expectError(res, 429, "RATE_LIMIT_EXCEEDED");
      expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    }
    expect(light.lookups()).toBe(3);
    // another IP has its own bucket
    expectError(await estimate(light.app, "198.51.100.1", "sr_test_short"), 401, "UNAUTHORIZED");
    await light.stop();
  });
});

test("a request without a usable Host header (none, or one holding a slash) is authenticated like any other", async () => {
  const { connect } = await import("node:net");
  const relay = await startTestRelay();
  try {
    const port = Number(new URL(relay.url).port);
    // the status line of a raw HTTP exchange (Bun's request.url is then the path alone)
    const status = (req: string) =>
      new Promise<string>((resolve) => {
        const s = connect(port, "127.0.0.1", () => s.write(req));
        let d = "";
        s.on("data", (c) => {
          d += c;
        });
        s.on("close", () => resolve(d.split("\r\n")[0] ?? ""));
        setTimeout(() => s.destroy(), 3000);
      });
    const body = '{"name":"pwned"}';
    expect(await status("GET /v1/admin/projects HTTP/1.0\r\n\r\n")).toBe("HTTP/1.1 401 Unauthorized");
    expect(
      await status(
        `POST /v1/admin/projects HTTP/1.1\r\nHost: a/b\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
      ),
    ).toBe("HTTP/1.1 401 Unauthorized");
    expect((await relay.admin("GET", "/projects")).body.projects).toEqual([]); // nothing was created
    // a /v1 route without Host: authenticated (anonymous here), not a 500
    const estimate = '{"transaction":"AAAA","network":"testnet"}';
    expect(
      await status(
        `POST /v1/estimate HTTP/1.1\r\nHost: a/b\r\nContent-Type: application/json\r\nContent-Length: ${estimate.length}\r\nConnection: close\r\n\r\n${estimate}`,
      ),
    ).toBe("HTTP/1.1 400 Bad Request");
  } finally {
    await relay.stop();
  }
});
