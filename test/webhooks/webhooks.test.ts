/**
 * Webhooks: registration through the admin API (URL rules, the secret shown once), and deliveries
 * signed the Standard Webhooks way, verified by a receiver with the standardwebhooks library:
 * retried with the same webhook-id until a 2xx, one slow endpoint delaying no other, the
 * deliveries list. Events are written into `events` directly here (the relay writes them with the
 * changes they record). On embedded PGlite, and on Postgres too when TEST_DATABASE_URL is set.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { events } from "../../src/store/schema.ts";
import { resolveWebhookTarget, UrlRefused } from "../../src/features/webhooks/url-guard.ts";
import { WebhookWorker } from "../../src/features/webhooks/deliveries.ts";
import { expectError, expectOk, HASH, UUID, until, xdrOf } from "../support/harness.ts";
import { capturingLogger, databaseEnv, databaseKinds, startTestRelay, type TestRelay } from "../support/relay.ts";
import { type Receiver, startReceiver } from "../support/webhook-receiver.ts";

const WHSEC = /^whsec_[A-Za-z0-9+/]{43}=$/;
const FAST = { WEBHOOK_ALLOW_PRIVATE: "true", WEBHOOK_POLL_MS: "50", WEBHOOK_RETRY_BASE_MS: "200" };

/** Registers a webhook for `receiver` (its secret handed to the receiver). */
async function register(r: TestRelay, projectId: string, receiver: Receiver, events?: string[]) {
  const res = await r.admin("POST", `/projects/${projectId}/webhooks`, {
    url: receiver.url,
    ...(events ? { events } : {}),
  });
  expectOk(res, 201);
  receiver.secret = res.body.secret;
  return res.body as { id: string; secret: string };
}

/** Writes a transaction.status event for a project, as the sponsor path does; its id. */
async function statusEvent(r: TestRelay, projectId: string, status = "success"): Promise<bigint> {
  const data = { hash: "ab".repeat(32), innerHash: "cd".repeat(32), status, network: "testnet", ledger: 7 };
  const [row] = await r.database
    .insert(events)
    .values({ type: "transaction.status", projectId, network: "testnet", data })
    .returning({ id: events.id });
  return row!.id;
}

describe("webhook registration refuses non-public URLs (WEBHOOK_ALLOW_PRIVATE unset)", () => {
  let r: TestRelay;
  let projectId: string;
  beforeAll(async () => {
    r = await startTestRelay();
    projectId = (await r.project()).id;
  });
  afterAll(() => r.stop());

  const refused: [string, string, string][] = [
    ["http://127.0.0.1:8080/hook", "private_address", "loopback"],
    ["http://localhost:8080/hook", "private_address", "loopback"],
    ["http://169.254.169.254/latest/meta-data/", "private_address", "linkLocal"],
    ["http://10.1.2.3/hook", "private_address", "private"],
    ["https://192.168.1.10/hook", "private_address", "private"],
    ["http://172.16.0.1/hook", "private_address", "private"],
    ["http://100.64.0.1/hook", "private_address", "carrierGradeNat"],
    ["http://0.0.0.0/hook", "private_address", "unspecified"],
    ["http://2130706433/hook", "private_address", "loopback"],
    ["http://[::1]/hook", "private_address", "loopback"],
    ["http://[fd00::1]/hook", "private_address", "uniqueLocal"],
    ["http://[fe80::1]/hook", "private_address", "linkLocal"],
    ["http://[::ffff:10.0.0.1]/hook", "private_address", "private"],
    // IPv6 outside 2000::/3 (IPv4-compatible ::a.b.c.d, which a URL writes ::7f00:1), or reserved in it
    ["http://[::127.0.0.1]/", "private_address", "notGlobalUnicast"],
    ["http://[::8.8.8.8]/hook", "private_address", "notGlobalUnicast"],
    ["http://[::ffff:127.0.0.1]/", "private_address", "loopback"],
    ["http://[fc00::1]/hook", "private_address", "uniqueLocal"],
    ["http://[64:ff9b::a00:1]/hook", "private_address", "rfc6052"],
    ["http://[2001:db8::1]/hook", "private_address", "reserved"],
    ["ftp://example.com/hook", "unsupported_scheme", ""],
    ["file:///etc/passwd", "unsupported_scheme", ""],
    ["javascript:alert(1)", "unsupported_scheme", ""],
    ["not a url", "invalid_url", ""],
  ];
  test.each(refused)("%s: 400 %s", async (url, reason, range) => {
    const res = await r.admin("POST", `/projects/${projectId}/webhooks`, { url });
    expectError(res, 400, "VALIDATION_ERROR");
    expect(res.body.error.details).toMatchObject({ field: "url", reason, ...(range ? { range } : {}) });
    expect(res.body.error.message).toContain("url");
    // a private address's refusal says how a receiver on the relay's own network is allowed
    if (reason === "private_address") expect(res.body.error.message).toContain("WEBHOOK_ALLOW_PRIVATE=true");
  });

  test("a public address is registered (an IP literal: no DNS needed), IPv6 in 2000::/3 too", async () => {
    const res = await r.admin("POST", `/projects/${projectId}/webhooks`, { url: "https://93.184.215.14/hook" });
    expectOk(res, 201);
    expectOk(await r.admin("POST", `/projects/${projectId}/webhooks`, { url: "https://[2606:4700::1]/hook" }), 201);
    const list = await r.admin("GET", `/projects/${projectId}/webhooks`);
    expect(list.body.webhooks.map((w: { url: string }) => w.url).sort()).toEqual([
      "https://93.184.215.14/hook",
      "https://[2606:4700::1]/hook",
    ]);
  });

  test("a delivery's look-up is judged the same: an IPv6 outside 2000::/3 is refused, a global one passes", async () => {
    const to = (addresses: string[]) => resolveWebhookTarget("https://hook.example/x", false, async () => addresses);
    for (const [address, range] of [
      ["::127.0.0.1", "loopback"], // ipaddr.js reads the dotted form as the IPv4 address
      ["::7f00:1", "notGlobalUnicast"],
      ["::808:808", "notGlobalUnicast"],
      ["::ffff:127.0.0.1", "loopback"],
      ["fc00::1", "uniqueLocal"],
      ["2001:db8::1", "reserved"],
    ]) {
      const refused = await to([address!]).catch((e) => e);
      expect(refused).toBeInstanceOf(UrlRefused);
      expect(refused).toMatchObject({ reason: "private_address", details: { address, range } });
    }
    expect((await to(["2606:4700::1"])).address).toBe("2606:4700::1");
    expect((await to(["::ffff:93.184.215.14"])).address).toBe("::ffff:93.184.215.14");
  });
});

test("WEBHOOK_ALLOW_PRIVATE=true: one warning when the delivery worker starts; none without it", async () => {
  const warnings = async (allowPrivate: boolean) => {
    const { log, lines } = capturingLogger("info");
    const config = { pollMs: 60_000, retryBaseMs: 1000, timeoutMs: 1000, allowPrivate };
    const worker = new WebhookWorker({ repo: {} as never, secrets: {} as never, log, config });
    worker.start();
    await worker.stop(); // before its first poll: nothing else is logged
    return lines.filter((l) => l.level === "warn" || l.level === 40).map((l) => String(l.msg));
  };
  const on = await warnings(true);
  expect(on).toHaveLength(1);
  expect(on[0]).toContain("WEBHOOK_ALLOW_PRIVATE=true");
  expect(on[0]).toContain("never in production");
  expect(await warnings(false)).toEqual([]);
});

describe.each(databaseKinds)("webhooks (%s)", (kind) => {
  let r: TestRelay;
  const receivers: Receiver[] = [];
  const receiver = () => {
    const x = startReceiver();
    receivers.push(x);
    return x;
  };
  beforeAll(async () => {
    r = await startTestRelay({ ...databaseEnv(kind), ...FAST });
  });
  afterAll(async () => {
    await r.stop();
    for (const x of receivers) x.stop();
  });

  test("admin API: create (secret once), list (no secrets), delete; unknown ids 404; bad input 400", async () => {
    const p = await r.project();
    const created = await r.admin("POST", `/projects/${p.id}/webhooks`, {
      url: "http://127.0.0.1:9/hook",
      description: "orders",
    });
    expectOk(created, 201);
    expect(created.body).toEqual({
      id: expect.stringMatching(UUID),
      url: "http://127.0.0.1:9/hook",
      events: ["transaction.status", "credits.low"],
      description: "orders",
      secret: expect.stringMatching(WHSEC),
      createdAt: expect.any(String),
    });
    const only = await r.admin("POST", `/projects/${p.id}/webhooks`, {
      url: "https://example.com/h",
      events: ["credits.low"],
    });
    expect(only.body.events).toEqual(["credits.low"]);
    expect(only.body.secret).not.toBe(created.body.secret);

    const list = await r.admin("GET", `/projects/${p.id}/webhooks`);
    expectOk(list);
    expect(list.body.webhooks).toHaveLength(2);
    expect(JSON.stringify(list.body)).not.toContain("whsec_");
    expect(list.body.webhooks[0]).toEqual({ ...created.body, secret: undefined });
    // at rest the secret is sealed, not the one shown
    const stored = await r.database.execute(`select secret from webhooks where id = '${created.body.id}'`);
    expect(JSON.stringify(stored)).not.toContain(created.body.secret.slice(6));

    expectOk(await r.admin("DELETE", `/projects/${p.id}/webhooks/${created.body.id}`));
    expect((await r.admin("GET", `/projects/${p.id}/webhooks`)).body.webhooks.map((w: { id: string }) => w.id)).toEqual(
      [only.body.id],
    );
    expectError(await r.admin("DELETE", `/projects/${p.id}/webhooks/${created.body.id}`), 404, "NOT_FOUND");
    expectError(await r.admin("GET", `/projects/${p.id}/webhooks/${created.body.id}/deliveries`), 404, "NOT_FOUND");
    expectError(await r.admin("GET", `/projects/nope/webhooks`), 404, "NOT_FOUND");
    expectError(await r.admin("POST", `/projects/nope/webhooks`, { url: "https://example.com/h" }), 404, "NOT_FOUND");

    const bad = [
      [{}, "url"],
      [{ url: "https://example.com/h", events: ["transaction.created"] }, "events.0"],
      [{ url: "https://example.com/h", extra: 1 }, undefined],
      [{ url: 42 }, "url"],
    ] as const;
    for (const [body, field] of bad) {
      const res = await r.admin("POST", `/projects/${p.id}/webhooks`, body);
      expectError(res, 400, "VALIDATION_ERROR");
      if (field) expect(res.body.error.details.field).toBe(field);
      expect(res.body.error.details.reason).toBeString();
    }
    const noAuth = await r.http.request("GET", `/v1/admin/projects/${p.id}/webhooks`);
    expectError(noAuth, 401, "UNAUTHORIZED");
  });

  test("a delivery: POST, Standard Webhooks headers verified by the library, body { type, timestamp, data }", async () => {
    const p = await r.project();
    const rx = receiver();
    await register(r, p.id, rx);
    const other = await r.project(); // another project's events are not this webhook's
    await statusEvent(r, other.id);
    const id = await statusEvent(r, p.id);
    await until("delivered", () => rx.received.length >= 1, 10_000);
    await Bun.sleep(300);
    expect(rx.received).toHaveLength(1);
    const got = rx.received[0]!;
    expect(got.error).toBeNull();
    expect(got.id).toBe(`evt_${id}`);
    expect(Math.abs(Number(got.timestamp) - Date.now() / 1000)).toBeLessThan(30);
    expect(got.signature).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(got.contentType).toBe("application/json");
    expect(got.verified).toEqual({
      type: "transaction.status",
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      data: { hash: "ab".repeat(32), innerHash: "cd".repeat(32), status: "success", network: "testnet", ledger: 7 },
    });
    // a tampered body does not verify
    const { Webhook } = await import("standardwebhooks");
    const headers = { "webhook-id": got.id, "webhook-timestamp": got.timestamp, "webhook-signature": got.signature };
    expect(() => new Webhook(rx.secret!).verify(got.body.replace("success", "failed"), headers)).toThrow();
  });

  test("subscriptions: a webhook gets only the types it asked for", async () => {
    const p = await r.project();
    const all = receiver();
    const low = receiver();
    await register(r, p.id, all);
    await register(r, p.id, low, ["credits.low"]);
    await statusEvent(r, p.id);
    await until("delivered", () => all.received.length >= 1);
    await Bun.sleep(500);
    expect(low.received).toHaveLength(0);
  });

  test("503, 503, then 200: retried with backoff, the same webhook-id, then delivered; the list shows each attempt", async () => {
    const p = await r.project();
    const rx = receiver();
    rx.answer = (n) => new Response("no", { status: n < 2 ? 503 : 200 });
    const hook = await register(r, p.id, rx);
    const id = await statusEvent(r, p.id, "failed");
    await until("retried until a 200", () => rx.received.length >= 3, 15_000);
    expect(new Set(rx.received.map((x) => x.id))).toEqual(new Set([`evt_${id}`]));
    for (const x of rx.received) expect(x.error).toBeNull();
    // 200 ms, then 1,200 ms (the base and 6 times it) between attempts
    expect(rx.received[1]!.at - rx.received[0]!.at).toBeGreaterThanOrEqual(150);
    expect(rx.received[2]!.at - rx.received[1]!.at).toBeGreaterThanOrEqual(1100);
    await until("recorded", async () => {
      const d = await r.admin("GET", `/projects/${p.id}/webhooks/${hook.id}/deliveries`);
      return d.body.deliveries[0]?.state === "delivered";
    });
    const d = await r.admin("GET", `/projects/${p.id}/webhooks/${hook.id}/deliveries`);
    expect(d.body.deliveries).toEqual([
      {
        id: expect.any(String),
        eventId: id.toString(),
        type: "transaction.status",
        state: "delivered",
        attempts: 3,
        responseStatus: 200,
        lastError: null,
        attemptLog: [
          { at: expect.any(String), status: 503, error: "HTTP 503", durationMs: expect.any(Number) },
          { at: expect.any(String), status: 503, error: "HTTP 503", durationMs: expect.any(Number) },
          { at: expect.any(String), status: 200, error: null, durationMs: expect.any(Number) },
        ],
        createdAt: expect.any(String),
        lastAttemptAt: expect.any(String),
        nextAttemptAt: null,
      },
    ]);
    // in order, each started when the receiver saw it (within the attempt's duration)
    const log = d.body.deliveries[0].attemptLog as { at: string; durationMs: number }[];
    for (let i = 0; i < 3; i++) {
      const at = Date.parse(log[i]!.at);
      expect(rx.received[i]!.at).toBeGreaterThanOrEqual(at - 5);
      expect(rx.received[i]!.at).toBeLessThanOrEqual(at + log[i]!.durationMs + 5);
      expect(log[i]!.durationMs).toBeGreaterThanOrEqual(0);
    }
    await Bun.sleep(500);
    expect(rx.received).toHaveLength(3); // delivered: never again
  });

  test("an endpoint that keeps failing: pending with its attempts, status and error, newest first", async () => {
    const p = await r.project();
    const rx = receiver();
    rx.answer = () => new Response("down", { status: 503 });
    const hook = await register(r, p.id, rx);
    const first = await statusEvent(r, p.id, "submitted");
    const second = await statusEvent(r, p.id, "success");
    await until("two attempts each", () => rx.received.length >= 4, 10_000);
    const d = await r.admin("GET", `/projects/${p.id}/webhooks/${hook.id}/deliveries?limit=10`);
    expect(d.body.deliveries.map((x: { eventId: string }) => x.eventId)).toEqual([`${second}`, `${first}`]);
    for (const x of d.body.deliveries) {
      expect(x).toMatchObject({ state: "pending", responseStatus: 503, lastError: "HTTP 503" });
      expect(x.attempts).toBeGreaterThanOrEqual(1);
      expect(x.attemptLog).toHaveLength(x.attempts);
      for (const a of x.attemptLog) expect(a).toMatchObject({ status: 503, error: "HTTP 503" });
      expect(Date.parse(x.nextAttemptAt)).toBeGreaterThan(Date.parse(x.lastAttemptAt));
    }
    // deleted: its pending deliveries are given up, and nothing more is sent
    expectOk(await r.admin("DELETE", `/projects/${p.id}/webhooks/${hook.id}`));
    const count = rx.received.length;
    await statusEvent(r, p.id);
    await Bun.sleep(1500);
    expect(rx.received.length).toBeLessThanOrEqual(count + 1); // at most one request already under way
  });

  test("end to end: a sponsored transaction's statuses arrive by webhook, up to its final one", async () => {
    const p = await r.project();
    const rx = receiver();
    await register(r, p.id, rx, ["transaction.status"]);
    const user = await r.funded();
    const res = await r.post(
      "/v1/sponsor",
      { transaction: xdrOf(await r.payment(user)), network: "testnet" },
      { "x-api-key": p.testKey },
    );
    expectOk(res);
    type Status = { hash: string; innerHash: string; status: string; network: string; ledger?: number };
    const statuses = () => rx.received.map((x) => x.verified?.data as Status);
    await until("the final status", () => statuses().some((s) => s?.status === "success"), 10_000);
    for (const x of rx.received) {
      expect(x.error).toBeNull();
      expect(x.verified?.type).toBe("transaction.status");
    }
    const final = statuses().find((s) => s.status === "success")!;
    expect(final).toMatchObject({ hash: res.body.hash, network: "testnet", ledger: res.body.ledger });
    expect(final.innerHash).toMatch(HASH);
    expect(new Set(rx.received.map((x) => x.id)).size).toBe(rx.received.length); // one event each
  });

  test("an endpoint that never answers delays no other webhook", async () => {
    const p = await r.project();
    const dead = receiver();
    dead.answer = () => new Promise<Response>(() => {});
    const live = receiver();
    await register(r, p.id, dead);
    await register(r, p.id, live);
    const ids: bigint[] = [];
    for (let i = 0; i < 6; i++) ids.push(await statusEvent(r, p.id));
    await until("the live endpoint has every event", () => live.received.length >= 6, 5000);
    expect(new Set(live.received.map((x) => x.id))).toEqual(new Set(ids.map((i) => `evt_${i}`)));
    await until("the dead one was called", () => dead.received.length >= 1, 5000);
    // and the relay answers meanwhile
    expectOk(await r.admin("GET", `/projects/${p.id}/webhooks`));
    const t0 = Date.now();
    ids.push(await statusEvent(r, p.id));
    await until("a later event too", () => live.received.length >= 7, 5000);
    expect(Date.now() - t0).toBeLessThan(3000);
  });
});
