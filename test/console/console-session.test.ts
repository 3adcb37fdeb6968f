/**
 * The operator console's session (src/features/console/console-session.ts): signing in with the admin token
 * sets an HttpOnly, SameSite=Strict cookie (Secure behind TLS) that expires; the session authorizes
 * the admin API like the bearer token, a change needs its X-CSRF-Token, a cross-site request is
 * refused, wrong tokens at sign-in are limited per client IP, and sign-out ends the session
 * server-side. The bearer token keeps working unchanged. The console page itself is served with a
 * strict Content-Security-Policy, and says when the admin API is disabled.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { lightApp } from "../support/app.ts";
import { startTestRelay, TEST_ADMIN_TOKEN, type TestRelay } from "../support/relay.ts";
import { ConsoleSessions, SignInLimiter } from "../../src/features/console/console-session.ts";
import { CONSOLE_FILES } from "../../src/features/console/console.routes.ts";
import { MemoryCheckpoints } from "../../src/store/checkpoints.ts";
import { clearPrefix, REDIS_URL, redisUp } from "../support/redis.ts";

const LIGHT_TOKEN = "light-app-admin-token-0123";
const light = lightApp({ trustProxy: true });
afterAll(() => light.stop());

let ipSeq = 0;
/** A fresh client address per test: the sign-in limit is per IP. */
const freshIp = () => `198.51.100.${++ipSeq}`;

const send = (method: string, path: string, headers: Record<string, string> = {}, body?: unknown) =>
  light.app.handle(
    new Request(`http://localhost${path}`, {
      method,
      headers: { ...(body !== undefined ? { "content-type": "application/json" } : {}), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );

/** Signs in from `ip`; the cookie (name=value) and the answer. */
async function signIn(ip: string, headers: Record<string, string> = {}) {
  const res = await send("POST", "/v1/admin/session", {
    authorization: `Bearer ${LIGHT_TOKEN}`,
    "x-forwarded-for": ip,
    ...headers,
  });
  const setCookie = res.headers.get("set-cookie") ?? "";
  const body = (await res.json()) as any;
  return { res, setCookie, cookie: setCookie.split(";")[0]!, body };
}

const attributes = (setCookie: string) =>
  setCookie
    .split(";")
    .slice(1)
    .map((a) => a.trim());

describe("console session", () => {
  test("sign-in sets an HttpOnly, SameSite=Strict cookie for the admin API that expires (8 h); not Secure over plain HTTP", async () => {
    const { res, setCookie, cookie, body } = await signIn(freshIp());
    expect(res.status).toBe(201);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(cookie).toMatch(/^relay_console=[A-Za-z0-9_-]{40,}$/);
    const attrs = attributes(setCookie);
    expect(attrs).toEqual(expect.arrayContaining(["HttpOnly", "SameSite=Strict", "Path=/v1/admin", "Max-Age=28800"]));
    expect(attrs).not.toContain("Secure");
    expect(body.authenticatedBy).toBe("session");
    expect(body.csrfToken).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    expect(Date.parse(body.expiresAt) - Date.now()).toBeGreaterThan(8 * 3600_000 - 60_000);
    // the token is not in the answer, nor the cookie
    expect(JSON.stringify(body)).not.toContain(LIGHT_TOKEN);
    expect(setCookie).not.toContain(LIGHT_TOKEN);
  });

  test("the cookie is Secure behind TLS: X-Forwarded-Proto https from a trusted proxy, or an https URL", async () => {
    const proxied = await signIn(freshIp(), { "x-forwarded-proto": "https" });
    expect(attributes(proxied.setCookie)).toContain("Secure");
    const direct = await light.app.handle(
      new Request("https://relay.example/v1/admin/session", {
        method: "POST",
        headers: { authorization: `Bearer ${LIGHT_TOKEN}`, "x-forwarded-for": freshIp() },
      }),
    );
    expect(attributes(direct.headers.get("set-cookie")!)).toContain("Secure");
    // without TRUST_PROXY the header is the client's word: not trusted
    const untrusted = lightApp({ trustProxy: false });
    const res = await untrusted.app.handle(
      new Request("http://localhost/v1/admin/session", {
        method: "POST",
        headers: { authorization: `Bearer ${LIGHT_TOKEN}`, "x-forwarded-proto": "https" },
      }),
    );
    expect(attributes(res.headers.get("set-cookie")!)).not.toContain("Secure");
    await untrusted.stop();
  });

  test("the session authorizes the admin API: GET reads the CSRF token; a change needs X-CSRF-Token (403 without or wrong)", async () => {
    const { cookie, body } = await signIn(freshIp());
    const got = await send("GET", "/v1/admin/session", { cookie });
    expect(got.status).toBe(200);
    expect(await got.json()).toEqual({
      authenticatedBy: "session",
      csrfToken: body.csrfToken,
      expiresAt: body.expiresAt,
    });
    for (const csrf of [undefined, "", "nope", `${body.csrfToken}x`]) {
      const res = await send("DELETE", "/v1/admin/session", {
        cookie,
        ...(csrf !== undefined ? { "x-csrf-token": csrf } : {}),
      });
      expect(res.status).toBe(403);
      const err = ((await res.json()) as any).error;
      expect(err.code).toBe("FORBIDDEN");
      expect(err.details.reason).toBe("csrf_token");
    }
    // still signed in: those changes were refused
    expect((await send("GET", "/v1/admin/session", { cookie })).status).toBe(200);
  });

  test("a cross-site request with the cookie is refused even with the CSRF token (Sec-Fetch-Site: cross-site)", async () => {
    const { cookie, body } = await signIn(freshIp());
    const res = await send("DELETE", "/v1/admin/session", {
      cookie,
      "x-csrf-token": body.csrfToken,
      "sec-fetch-site": "cross-site",
      origin: "https://evil.example",
    });
    expect(res.status).toBe(403);
    expect(((await res.json()) as any).error.details.reason).toBe("cross_site");
  });

  test("sign-out ends the session server-side: the old cookie is 401 afterwards, and the cookie is cleared", async () => {
    const { cookie, body } = await signIn(freshIp());
    const out = await send("DELETE", "/v1/admin/session", { cookie, "x-csrf-token": body.csrfToken });
    expect(out.status).toBe(200);
    expect(await out.json()).toEqual({ ended: true });
    const cleared = out.headers.get("set-cookie")!;
    expect(cleared).toStartWith("relay_console=;");
    expect(attributes(cleared)).toContain("Max-Age=0");
    for (const [method, headers] of [
      ["GET", { cookie }],
      ["DELETE", { cookie, "x-csrf-token": body.csrfToken }],
    ] as const) {
      const res = await send(method, "/v1/admin/session", headers);
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe("Bearer");
      expect(((await res.json()) as any).error.code).toBe("UNAUTHORIZED");
    }
  });

  test("wrong admin tokens: 5 per minute per client IP, then 429 with Retry-After, on sign-in and every admin route; the right token still passes; other IPs unaffected", async () => {
    const ip = freshIp();
    for (let i = 0; i < 5; i++) {
      const res = await send("POST", "/v1/admin/session", {
        authorization: `Bearer wrong-${i}`,
        "x-forwarded-for": ip,
      });
      expect(res.status).toBe(401);
    }
    for (const [method, path] of [
      ["POST", "/v1/admin/session"],
      ["GET", "/v1/admin/projects"],
    ] as const) {
      const res = await send(method, path, { authorization: "Bearer wrong-again", "x-forwarded-for": ip });
      expect(res.status).toBe(429);
      expect(((await res.json()) as any).error.code).toBe("RATE_LIMIT_EXCEEDED");
      const retry = Number(res.headers.get("retry-after"));
      expect(retry).toBeGreaterThanOrEqual(1);
      expect(retry).toBeLessThanOrEqual(60);
    }
    // whoever shares the address cannot lock the operator out
    const right = await send("POST", "/v1/admin/session", {
      authorization: `Bearer ${LIGHT_TOKEN}`,
      "x-forwarded-for": ip,
    });
    expect(right.status).toBe(201);
    expect((await signIn(freshIp())).res.status).toBe(201);
  });

  test("the limiter's window: failures expire after a minute", () => {
    const l = new SignInLimiter(5, 60_000);
    const t0 = 1_000_000;
    for (let i = 0; i < 5; i++) l.failed("a", t0 + i);
    expect(l.waitSeconds("a", t0 + 10)).toBe(60);
    expect(l.waitSeconds("a", t0 + 59_000)).toBe(1);
    expect(l.waitSeconds("a", t0 + 60_000)).toBe(0);
    l.failed("a", t0 + 60_001);
    expect(l.waitSeconds("a", t0 + 60_002)).toBe(0);
  });

  test("a session expires after its TTL (ADMIN_SESSION_TTL_S)", async () => {
    const sessions = new ConsoleSessions(new MemoryCheckpoints(), "token-a", 1);
    const s = await sessions.open();
    expect(await sessions.find(s.id)).toMatchObject({ csrfToken: s.csrfToken });
    await Bun.sleep(1100);
    expect(await sessions.find(s.id)).toBeNull();
  });

  test("a session is tied to the admin token that opened it: the same store with another token does not find it", async () => {
    const store = new MemoryCheckpoints();
    const s = await new ConsoleSessions(store, "token-one-0123456789").open();
    expect(await new ConsoleSessions(store, "token-one-0123456789").find(s.id)).not.toBeNull();
    expect(await new ConsoleSessions(store, "token-two-0123456789").find(s.id)).toBeNull();
    expect(await new ConsoleSessions(store, undefined).find(s.id)).toBeNull();
    // the store holds neither the token nor anything that checks a guess at it without the session id
    const dump = JSON.stringify([...(store as any).map.values()]);
    expect(dump).not.toContain("token-one");
    expect(dump).not.toContain(s.id);
  });

  test("DELETE /v1/admin/sessions ends every console session (this one and others); new sign-ins work", async () => {
    const a = await signIn(freshIp());
    const b = await signIn(freshIp());
    const res = await send("DELETE", "/v1/admin/sessions", { cookie: a.cookie, "x-csrf-token": a.body.csrfToken });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ended: "all" });
    expect(res.headers.get("set-cookie")).toStartWith("relay_console=;");
    for (const { cookie } of [a, b]) {
      const got = await send("GET", "/v1/admin/session", { cookie });
      expect(got.status).toBe(401);
      expect(((await got.json()) as any).error.code).toBe("UNAUTHORIZED");
    }
    const c = await signIn(freshIp());
    expect((await send("GET", "/v1/admin/session", { cookie: c.cookie })).status).toBe(200);
    // with the bearer token too; without a CSRF token a session cannot
    expect((await send("DELETE", "/v1/admin/sessions", { cookie: c.cookie })).status).toBe(403);
    expect((await send("GET", "/v1/admin/session", { cookie: c.cookie })).status).toBe(200);
    const byToken = await send("DELETE", "/v1/admin/sessions", { authorization: `Bearer ${LIGHT_TOKEN}` });
    expect(byToken.status).toBe(200);
    expect(byToken.headers.get("set-cookie")).toBeNull();
    expect((await send("GET", "/v1/admin/session", { cookie: c.cookie })).status).toBe(401);
    expect((await send("DELETE", "/v1/admin/sessions")).status).toBe(401);
  });

  test("signing in needs the bearer token: a cookie alone cannot open a session; a bad or missing cookie is 401", async () => {
    const { cookie, body } = await signIn(freshIp());
    const again = await send("POST", "/v1/admin/session", {
      cookie,
      "x-csrf-token": body.csrfToken,
      "x-forwarded-for": freshIp(),
    });
    expect(again.status).toBe(401);
    for (const c of ["relay_console=not-a-session-id-0123456789", "relay_console=", "other=1"]) {
      expect((await send("GET", "/v1/admin/session", { cookie: c })).status).toBe(401);
    }
  });

  test("the bearer token works unchanged, without CSRF; a wrong bearer beside a valid cookie is 401", async () => {
    const res = await send("GET", "/v1/admin/session", { authorization: `Bearer ${LIGHT_TOKEN}` });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ authenticatedBy: "token", csrfToken: null, expiresAt: null });
    const out = await send("DELETE", "/v1/admin/session", { authorization: `Bearer ${LIGHT_TOKEN}` });
    expect(out.status).toBe(200);
    expect(await out.json()).toEqual({ ended: false });
    const { cookie } = await signIn(freshIp());
    expect((await send("GET", "/v1/admin/session", { cookie, authorization: "Bearer wrong-token" })).status).toBe(401);
  });
});

describe("console page", () => {
  test("GET /console: the page and its assets with their content types and a strict CSP (default-src 'self')", async () => {
    const assets = [...CONSOLE_FILES].map(([file, type]) => [`/console/assets/${file}`, type] as const);
    expect(assets).toContainEqual(["/console/assets/console.js", "text/javascript; charset=utf-8"]);
    expect(assets).toContainEqual(["/console/assets/lists.js", "text/javascript; charset=utf-8"]);
    expect(assets).toContainEqual(["/console/assets/console.css", "text/css; charset=utf-8"]);
    for (const [path, type] of [["/console", "text/html; charset=utf-8"], ...assets] as const) {
      const res = await send("GET", path);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe(type);
      expect(res.headers.get("content-security-policy")).toStartWith("default-src 'self';");
      expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    }
    const html = await (await send("GET", "/console")).text();
    expect(html).not.toMatch(/https?:\/\//); // nothing from elsewhere: it works offline
    expect(html).not.toMatch(/<script>|<style>| on[a-z]+="/); // no inline code (the CSP would block it)
    expect((await send("GET", "/console/assets/..%2Fconsole-session.ts")).status).toBe(404);
    expect((await send("GET", "/console/assets/other.js")).status).toBe(404);
  });

  test("the console weighs under 64 KB in all", async () => {
    let total = 0;
    for (const file of CONSOLE_FILES.keys())
      total += (await (await send("GET", `/console/assets/${file}`)).arrayBuffer()).byteLength;
    expect(total).toBeLessThan(64 * 1024);
  });
});

describe("console session on a whole relay", () => {
  let r: TestRelay;
  beforeAll(async () => {
    r = await startTestRelay();
  }, 60_000);
  afterAll(() => r?.stop(), 30_000);

  const over = (method: string, path: string, headers: Record<string, string>, body?: unknown) =>
    fetch(`${r.url}${path}`, {
      method,
      headers: { ...(body !== undefined ? { "content-type": "application/json" } : {}), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  test("over TCP: a session creates a project with X-CSRF-Token, not without; the old cookie is refused after sign-out", async () => {
    const inRes = await over("POST", "/v1/admin/session", { authorization: `Bearer ${TEST_ADMIN_TOKEN}` });
    expect(inRes.status).toBe(201);
    const cookie = inRes.headers.get("set-cookie")!.split(";")[0]!;
    const { csrfToken } = (await inRes.json()) as { csrfToken: string };
    const without = await over("POST", "/v1/admin/projects", { cookie }, { name: "no csrf" });
    expect(without.status).toBe(403);
    const created = await over(
      "POST",
      "/v1/admin/projects",
      { cookie, "x-csrf-token": csrfToken },
      { name: "console" },
    );
    expect(created.status).toBe(201);
    const list = await over("GET", "/v1/admin/projects", { cookie });
    expect(list.status).toBe(200);
    expect(((await list.json()) as any).projects.map((p: { name: string }) => p.name)).toContain("console");
    const all = await over("GET", "/v1/admin/channels", { cookie });
    expect(all.status).toBe(200);
    const pools = (await all.json()) as any;
    expect(pools.pools.map((p: { network: string }) => p.network).sort()).toEqual(["mainnet", "testnet"]);
    expect(pools.unavailable).toEqual([]);
    for (const p of pools.pools) for (const c of p.channels) expect(c.holder).toBeNull(); // the only instance
    const stats = await over("GET", "/v1/admin/stats", { cookie });
    expect(stats.status).toBe(200);
    expect(await stats.json()).toMatchObject({ minutes: 60, creditsSpentToday: "0" });
    expect((await over("DELETE", "/v1/admin/session", { cookie, "x-csrf-token": csrfToken })).status).toBe(200);
    expect((await over("GET", "/v1/admin/projects", { cookie })).status).toBe(401);
    expect(
      (await over("POST", "/v1/admin/projects", { cookie, "x-csrf-token": csrfToken }, { name: "x" })).status,
    ).toBe(401);
  });

  test.skipIf(!redisUp)(
    "a session opened with token 1 is refused after a restart with token 2 (sessions in Redis); token 1 again finds it",
    async () => {
      const prefix = `relay-test-session-${crypto.randomUUID().slice(0, 8)}:`;
      const redis = { REDIS_URL, REDIS_PREFIX: prefix };
      let relay = await startTestRelay({ ...redis, ADMIN_TOKEN: "first-admin-token-0123456789" });
      try {
        const signed = await fetch(`${relay.url}/v1/admin/session`, {
          method: "POST",
          headers: { authorization: "Bearer first-admin-token-0123456789" },
        });
        expect(signed.status).toBe(201);
        const cookie = signed.headers.get("set-cookie")!.split(";")[0]!;
        const { csrfToken } = (await signed.json()) as { csrfToken: string };
        const use = (r: TestRelay) =>
          Promise.all([
            fetch(`${r.url}/v1/admin/session`, { headers: { cookie } }).then((x) => x.status),
            fetch(`${r.url}/v1/admin/projects`, {
              method: "POST",
              headers: { cookie, "x-csrf-token": csrfToken, "content-type": "application/json" },
              body: JSON.stringify({ name: "with an old session" }),
            }).then((x) => x.status),
          ]);
        expect(await use(relay)).toEqual([200, 201]);
        await relay.stop({ keepData: true });
        relay = await startTestRelay({ ...relay.env, ADMIN_TOKEN: "second-admin-token-0123456789" });
        expect(await use(relay)).toEqual([401, 401]);
        await relay.stop({ keepData: true });
        relay = await startTestRelay({ ...relay.env, ADMIN_TOKEN: "first-admin-token-0123456789" });
        expect(await use(relay)).toEqual([200, 201]);
      } finally {
        await relay.stop();
        await clearPrefix(prefix);
      }
    },
    120_000,
  );

  test("without ADMIN_TOKEN the console page is served and the admin routes are 404 saying the admin API is off (the page says it is disabled)", async () => {
    const r2 = await startTestRelay({ ADMIN_TOKEN: "" });
    try {
      expect((await fetch(`${r2.url}/console`)).status).toBe(200);
      const res = await fetch(`${r2.url}/v1/admin/session`);
      expect(res.status).toBe(404);
      // every admin route says why: the admin API is off without ADMIN_TOKEN
      for (const [method, path] of [
        ["GET", "/v1/admin/session"],
        ["GET", "/v1/admin/projects"],
        ["POST", "/v1/admin/projects"],
        ["GET", "/v1/admin"],
      ] as const) {
        const off = await fetch(`${r2.url}${path}`, {
          method,
          headers: { authorization: "Bearer whatever-0123456789" },
        });
        expect(off.status).toBe(404);
        const err = ((await off.json()) as any).error;
        expect(err.code).toBe("NOT_FOUND");
        expect(err.message).toContain("ADMIN_TOKEN");
        expect(err.details).toEqual({ reason: "admin_api_disabled" });
      }
    } finally {
      await r2.stop();
    }
  });
});
