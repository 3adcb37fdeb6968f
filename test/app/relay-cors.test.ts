/**
 * CORS (CORS_ORIGINS): a preflight to /v1/sponsor is answered 204 with the headers a browser needs,
 * without an API key and without taking a rate-limit token; simple and refused (429) requests carry
 * the allow-origin and expose the headers a client reads; an origin not listed gets no allow-origin;
 * `*` allows any; unset, no CORS header at all. GET /metrics without METRICS_TOKEN is open. Listed
 * origins against a whole relay (CORS_ORIGINS read from its environment); `*` and unset against the
 * app alone (test/support/app.ts). Every request in this process (app.handle).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { lightApp } from "../support/app.ts";
import type { Http } from "../support/harness.ts";
import { startTestRelay, type TestRelay } from "../support/relay.ts";

const APP = "https://app.example";
const OTHER = "https://wallet.example:8443";
/** The anonymous relay's bucket: 2 requests, refilled once in 1000 s. */
const TIGHT = JSON.stringify({ requestsPerSecond: 0.001, burst: 2 });

const preflight = (http: Http, origin: string, path = "/v1/sponsor") =>
  http.raw(path, {
    method: "OPTIONS",
    headers: {
      origin,
      "access-control-request-method": "POST",
      "access-control-request-headers": "content-type,x-api-key,x-idempotency-key",
    },
  });
const simple = (http: Http, origin: string) =>
  http.raw("/v1/estimate", {
    method: "POST",
    headers: { origin, "content-type": "application/json" },
    body: JSON.stringify({ transaction: "AAAA", network: "testnet" }),
  });
const health = (http: Http, origin: string) => http.raw("/health", { headers: { origin } });
const list = (h: string | null) =>
  (h ?? "")
    .split(",")
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
const corsHeaders = (res: Response) => [...res.headers.keys()].filter((k) => k.startsWith("access-control-"));

describe("CORS_ORIGINS lists origins", () => {
  let r: TestRelay;
  beforeAll(
    async () => {
      r = await startTestRelay({ CORS_ORIGINS: ` ${APP} ,${OTHER}`, ANONYMOUS_POLICY: TIGHT });
    },
    { timeout: 30_000 },
  );
  afterAll(() => r.stop());

  test("a preflight to /v1/sponsor is 204 with the allowed origin, methods and headers; no API key, no rate-limit token", async () => {
    for (let i = 0; i < 5; i++) {
      const res = await preflight(r.http, APP);
      expect(res.status).toBe(204);
      expect(res.headers.get("access-control-allow-origin")).toBe(APP);
      expect(list(res.headers.get("access-control-allow-methods"))).toEqual(expect.arrayContaining(["get", "post"]));
      expect(list(res.headers.get("access-control-allow-headers"))).toEqual(
        expect.arrayContaining(["content-type", "x-api-key", "x-idempotency-key", "x-request-id"]),
      );
      expect(res.headers.get("access-control-max-age")).toBe("600");
      expect(res.headers.get("access-control-allow-credentials")).toBeNull();
      expect(list(res.headers.get("vary"))).toContain("origin");
      expect(res.headers.get("ratelimit-limit")).toBeNull(); // no token was taken
    }
    expect((await preflight(r.http, OTHER)).headers.get("access-control-allow-origin")).toBe(OTHER);
    // the bucket (burst 2) is still full: two requests pass, the third is refused, and a browser can read why
    const answers = [await simple(r.http, APP), await simple(r.http, APP), await simple(r.http, APP)];
    expect(answers.map((a) => a.status)).toEqual([400, 400, 429]);
    const refused = answers[2]!;
    expect(refused.headers.get("access-control-allow-origin")).toBe(APP);
    expect(refused.headers.get("retry-after")).toBeTruthy();
    expect(list(refused.headers.get("access-control-expose-headers"))).toEqual(
      expect.arrayContaining(["retry-after", "x-request-id", "ratelimit-remaining"]),
    );
    // counted as the anonymous relay's rejection (GET /metrics is open without METRICS_TOKEN)
    const metrics = await r.http.raw("/metrics");
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain('relay_rate_limited_total{scope="anonymous"} 1\n');
  });

  test("a simple request from a listed origin gets allow-origin and the exposed headers", async () => {
    const res = await health(r.http, APP);
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe(APP);
    expect(res.headers.get("access-control-allow-credentials")).toBeNull();
    expect(list(res.headers.get("access-control-expose-headers"))).toEqual(
      expect.arrayContaining([
        "x-request-id",
        "retry-after",
        "idempotent-replayed",
        "ratelimit-limit",
        "ratelimit-remaining",
        "ratelimit-reset",
      ]),
    );
  });

  test("an origin not listed gets no allow-origin (the browser refuses), on preflights and requests", async () => {
    for (const origin of [
      "https://evil.example",
      "http://app.example",
      "https://app.example.evil.example",
      "constructor",
    ]) {
      const pre = await preflight(r.http, origin);
      expect(pre.headers.get("access-control-allow-origin")).toBeNull();
      const res = await health(r.http, origin);
      expect(res.headers.get("access-control-allow-origin")).toBeNull();
    }
  });
});

describe("CORS_ORIGINS=*", () => {
  const light = lightApp({ corsOrigins: "*" });
  afterAll(() => light.stop());

  test("any origin: allow-origin *, preflight answered", async () => {
    const pre = await preflight(light.http, "https://anywhere.example");
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBe("*");
    const res = await health(light.http, "https://anywhere.example");
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
  });
});

describe("CORS_ORIGINS unset", () => {
  const light = lightApp();
  afterAll(() => light.stop());

  test("no CORS header on any answer, preflights included", async () => {
    const pre = await preflight(light.http, APP);
    expect(pre.status).not.toBe(204);
    expect(corsHeaders(pre)).toEqual([]);
    for (const res of [await health(light.http, APP), await simple(light.http, APP)])
      expect(corsHeaders(res)).toEqual([]);
  });
});
