/**
 * API keys with scopes, an expiry and rotation: what a key outside its scopes is refused (403
 * SCOPE_REQUIRED, details.scope), an expired key (401 KEY_EXPIRED), a rotation's overlap, the list's
 * scopes, expiresAt and lastUsedAt, and the compat endpoint's answers in its own shape.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectError, expectOk, type Res, until, xdrOf } from "../support/harness.ts";
import { databaseEnv, databaseKinds, startTestRelay, type TestRelay } from "../support/relay.ts";
import { SseClient } from "../support/sse.ts";

const key = (k: string) => ({ "x-api-key": k });
const ALL = ["sponsor", "simulate", "estimate", "read"];
/**
 * Waiting for a key to expire polls with it every 50 ms, not 10: each poll takes a token from the project's
 * bucket (50 a second, burst 100), which the tests of a describe share; polling faster emptied it on a fast
 * database, and a later test's request was 429.
 */
const POLL = [10_000, 50] as const;

describe.each(databaseKinds)("scoped keys (%s)", (kind) => {
  let r: TestRelay;
  let project: { id: string; testKey: string };
  beforeAll(
    async () => {
      r = await startTestRelay(databaseEnv(kind));
      project = await r.project();
    },
    { timeout: 120_000 },
  );
  afterAll(() => r.stop());

  const newKey = async (body: Record<string, unknown>): Promise<Res> => {
    const res = await r.admin("POST", `/projects/${project.id}/keys`, { environment: "test", ...body });
    expectOk(res, 201);
    return res;
  };
  const sponsored = async (k: string) => {
    const res = await r.post(
      "/v1/sponsor",
      { transaction: xdrOf(await r.payment(await r.funded())), network: "testnet" },
      key(k),
    );
    return res;
  };
  /** A look-up of an unknown hash: 404 once the key is authenticated (cheap: what "the key works" needs). */
  const works = async (k: string) =>
    expectError(await r.http.get(`/v1/transactions/${"0".repeat(64)}`, key(k)), 404, "NOT_FOUND");
  /** A look-up with key `k`, polled (POLL) until it is 401: that answer. */
  const expired = async (what: string, k: string): Promise<Res> => {
    let last: Res | undefined;
    await until(
      what,
      async () => {
        last = await r.http.get("/v1/transactions/unknown", key(k));
        return last.status === 401;
      },
      ...POLL,
    );
    return last!;
  };
  const listed = async (id: string) =>
    (await r.admin("GET", `/projects/${project.id}/keys`)).body.keys.find((k: { id: string }) => k.id === id);

  test("a read-only key: 403 SCOPE_REQUIRED naming the scope on sponsor, simulate, estimate; 200 on a look-up", async () => {
    const read = await newKey({ scopes: ["read"], label: "dashboard" });
    expect(read.body.scopes).toEqual(["read"]);
    const ok = await sponsored(project.testKey);
    expectOk(ok);
    const refused = await sponsored(read.body.key);
    expectError(refused, 403, "SCOPE_REQUIRED");
    expect(refused.body.error.details.scope).toBe("sponsor");
    const tx = { transaction: xdrOf(await r.payment(await r.funded())) };
    for (const scope of ["simulate", "estimate"]) {
      const res = await r.post(`/v1/${scope}`, tx, key(read.body.key));
      expectError(res, 403, "SCOPE_REQUIRED");
      expect(res.body.error.details.scope).toBe(scope);
    }
    const lookup = await r.http.get(`/v1/transactions/${ok.body.hash}`, key(read.body.key));
    expectOk(lookup);
    expect(lookup.body.hash).toBe(ok.body.hash);
    // a sponsor-only key cannot look up
    const writer = await newKey({ scopes: ["sponsor"] });
    expectOk(await sponsored(writer.body.key));
    const denied = await r.http.get(`/v1/transactions/${ok.body.hash}`, key(writer.body.key));
    expectError(denied, 403, "SCOPE_REQUIRED");
    expect(denied.body.error.details.scope).toBe("read");
    const events = await r.http.get("/v1/events", key(writer.body.key));
    expectError(events, 403, "SCOPE_REQUIRED");
    expect(events.body.error.details.scope).toBe("read");
  });

  test("bad scopes or expiresAt are 400; default scopes are all", async () => {
    for (const body of [
      { scopes: [] },
      { scopes: ["admin"] },
      { expiresAt: new Date(Date.now() - 1000).toISOString() },
      { expiresAt: "tomorrow" },
    ]) {
      const res = await r.admin("POST", `/projects/${project.id}/keys`, { environment: "test", ...body });
      expectError(res, 400, "VALIDATION_ERROR");
    }
    expect((await newKey({})).body.scopes).toEqual(ALL);
  });

  test("an expired key: 401 KEY_EXPIRED once its expiresAt passes", async () => {
    const expiresAt = new Date(Date.now() + 1000).toISOString();
    const k = await newKey({ expiresAt });
    expect(k.body.expiresAt).toBe(expiresAt);
    await works(k.body.key);
    const last = await expired("the key expired", k.body.key);
    expectError(last, 401, "KEY_EXPIRED");
    expect(last.body.error.details.expiresAt).toBe(expiresAt);
    expectError(await sponsored(k.body.key), 401, "KEY_EXPIRED");
  });

  test("rotate with overlapSeconds 1: both keys work at once, then the old one is 401 KEY_EXPIRED", async () => {
    const old = await newKey({ label: "backend", scopes: ["sponsor", "read"] });
    const rotated = await r.admin("POST", `/projects/${project.id}/keys/${old.body.id}/rotate`, { overlapSeconds: 1 });
    expectOk(rotated, 201);
    expect(rotated.body).toMatchObject({ environment: "test", label: "backend", scopes: ["sponsor", "read"] });
    expect(rotated.body.key).toMatch(/^sr_test_/);
    expect(rotated.body.id).not.toBe(old.body.id);
    await works(old.body.key);
    await works(rotated.body.key);
    const oldListed = await listed(old.body.id);
    expect(Date.parse(oldListed.expiresAt)).toBeGreaterThan(Date.now() - 2000);
    expectError(await expired("the old key expired", old.body.key), 401, "KEY_EXPIRED");
    expectOk(await sponsored(rotated.body.key));
    // the list: the new key shown without its secret; a revoked or unknown key cannot be rotated
    expect("key" in (await listed(rotated.body.id))).toBe(false);
    await r.admin("DELETE", `/projects/${project.id}/keys/${rotated.body.id}`);
    const again = await r.admin("POST", `/projects/${project.id}/keys/${rotated.body.id}/rotate`, {
      overlapSeconds: 60,
    });
    expectError(again, 404, "NOT_FOUND");
    const bad = await r.admin("POST", `/projects/${project.id}/keys/${old.body.id}/rotate`, { overlapSeconds: -1 });
    expectError(bad, 400, "VALIDATION_ERROR");
    // a number is never taken from a string (docs/api.md)
    const text = await r.admin("POST", `/projects/${project.id}/keys/${old.body.id}/rotate`, { overlapSeconds: "60" });
    expectError(text, 400, "VALIDATION_ERROR");
    expect(text.body.error.details.field).toBe("overlapSeconds");
  });

  test("GET keys shows scopes, expiresAt and lastUsedAt (set on use), never the secret", async () => {
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const k = await newKey({ scopes: ["estimate", "simulate"], expiresAt, label: "fees" });
    expect(await listed(k.body.id)).toMatchObject({
      label: "fees",
      scopes: ["simulate", "estimate"],
      expiresAt,
      lastUsedAt: null,
    });
    const before = Date.now();
    expectOk(await r.post("/v1/estimate", { transaction: xdrOf(await r.payment(await r.funded())) }, key(k.body.key)));
    await until("lastUsedAt written", async () => (await listed(k.body.id)).lastUsedAt !== null);
    const used = await listed(k.body.id);
    expect(Date.parse(used.lastUsedAt)).toBeGreaterThanOrEqual(before - 5000);
    const text = JSON.stringify((await r.admin("GET", `/projects/${project.id}/keys`)).body);
    expect(text).not.toContain(k.body.key);
  });

  test("an event stream ends when its key expires, and when a rotation's overlap ends", async () => {
    const open = async (k: string) => {
      const s = await SseClient.open(r.url, key(k));
      expect(s.res.status).toBe(200);
      await s.until((items) => (items.some((x) => x.comment === "connected") ? true : undefined));
      return s;
    };
    const short = await newKey({ expiresAt: new Date(Date.now() + 3000).toISOString() });
    const rotating = await newKey({});
    const lasting = await newKey({});
    const streams = [await open(short.body.key), await open(rotating.body.key), await open(lasting.body.key)];
    const rotated = await r.admin("POST", `/projects/${project.id}/keys/${rotating.body.id}/rotate`, {
      overlapSeconds: 1,
    });
    expectOk(rotated, 201);
    for (const s of streams.slice(0, 2)) {
      await s.done();
      expect(s.items.at(-1)).toEqual({ comment: "ended: the API key expired" });
    }
    expect(streams[2]!.ended).toBe(false); // another key's stream goes on
    streams[2]!.close();
  });

  test("compat endpoint: a read-only key cannot submit, but can getTransaction; an expired key is UNAUTHORIZED", async () => {
    const read = await newKey({ scopes: ["read"] });
    const channels = (k: string, params: unknown) =>
      r.tcp.post("/compat/channels/testnet", { params }, { authorization: `Bearer ${k}` });
    const submit = await channels(read.body.key, { xdr: xdrOf(await r.payment(await r.funded())) });
    expect(submit.status).toBe(403);
    expect(submit.body).toMatchObject({
      success: false,
      data: { code: "FORBIDDEN", details: { scope: "sponsor", relayCode: "SCOPE_REQUIRED" } },
    });
    const ok = await sponsored(project.testKey);
    expectOk(ok);
    const got = await channels(read.body.key, { getTransaction: { transactionId: ok.body.innerHash } });
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ success: true, data: { transactionId: ok.body.innerHash, hash: ok.body.hash } });
    const short = await newKey({ expiresAt: new Date(Date.now() + 500).toISOString() });
    let last: Res | undefined;
    await until(
      "the key expired",
      async () => {
        last = await channels(short.body.key, { getTransaction: { transactionId: ok.body.innerHash } });
        return last.status === 401;
      },
      ...POLL,
    );
    expect(last!.body).toMatchObject({
      success: false,
      data: { code: "UNAUTHORIZED", details: { relayCode: "KEY_EXPIRED" } },
    });
  });
});

describe("an expired key counts against its caller's IP like a revoked one", () => {
  let r: TestRelay;
  beforeAll(
    async () => {
      r = await startTestRelay({
        ANONYMOUS_POLICY: JSON.stringify({ requestsPerSecond: 0.01, burst: 2 }),
        TRUST_PROXY: "true",
      });
    },
    { timeout: 120_000 },
  );
  afterAll(() => r.stop());

  test("two KEY_EXPIRED from one IP empty its anonymous bucket: the third is 429", async () => {
    const p = await r.project();
    const k = await r.admin("POST", `/projects/${p.id}/keys`, {
      environment: "test",
      expiresAt: new Date(Date.now() + 500).toISOString(),
    });
    expectOk(k, 201);
    const lookup = (ip: string) =>
      r.http.get(`/v1/transactions/${"0".repeat(64)}`, { ...key(k.body.key), "x-forwarded-for": ip });
    let n = 1;
    // each poll from an IP of its own (its anonymous bucket is full)
    await until("the key expired", async () => (await lookup(`198.51.100.${n++ % 250}`)).status === 401);
    const ip = "203.0.113.77";
    expectError(await lookup(ip), 401, "KEY_EXPIRED");
    expectError(await lookup(ip), 401, "KEY_EXPIRED");
    expectError(await lookup(ip), 429, "RATE_LIMIT_EXCEEDED");
    // the project's own bucket is not the one that emptied: its other key still works from that IP
    expectError(
      await r.http.get(`/v1/transactions/${"0".repeat(64)}`, { ...key(p.testKey), "x-forwarded-for": ip }),
      404,
      "NOT_FOUND",
    );
  });
});
