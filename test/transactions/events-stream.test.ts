/**
 * GET /v1/events over a socket, against the whole relay: an API key is required (401 in the
 * envelope otherwise); a project's events on its key's network arrive in id order as
 * `event:`/`id:`/`data:`, another project's never; a client that disconnects is unsubscribed and, resuming with Last-Event-ID, gets
 * every later event once and in order; heartbeats; the relay's stop ends open streams instead of
 * waiting on them. Events are inserted through the events repository, but for one end to end: a
 * sponsored transaction's statuses, as the statements that change them write them. PGlite, and Postgres
 * too when TEST_DATABASE_URL is set.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { EventsRepo, type EventRow } from "../../src/store/events.repo.ts";
import { expectError, xdrOf } from "../support/harness.ts";
import { SseClient, type SseItem } from "../support/sse.ts";
import { databaseEnv, databaseKinds, startTestRelay, type TestRelay } from "../support/relay.ts";

const key = (k: string) => ({ "x-api-key": k });
const status = (projectId: string | null, n: number) => ({
  type: "transaction.status",
  projectId,
  network: "testnet",
  data: { hash: n.toString(16).padStart(64, "0"), status: "pending", network: "testnet", n },
});
/** What the stream should say of an event row. */
const asSse = (e: EventRow): SseItem => ({ event: e.type, id: String(e.id), data: JSON.stringify(e.data) });

describe.each(databaseKinds)("GET /v1/events (%s)", (kind) => {
  let r: TestRelay;
  let repo: EventsRepo;
  let stopped = false;
  const clients: SseClient[] = [];
  beforeAll(
    async () => {
      r = await startTestRelay({ ...databaseEnv(kind), EVENTS_POLL_MS: "50", EVENTS_HEARTBEAT_MS: "200" });
      repo = new EventsRepo(r.database);
    },
    { timeout: 30_000 },
  );
  afterAll(async () => {
    for (const c of clients) c.close();
    if (!stopped) await r.stop();
  });
  const open = async (headers: Record<string, string>) => {
    const c = await SseClient.open(r.url, headers);
    clients.push(c);
    return c;
  };

  test("an API key is required: anonymous and unknown keys are 401 UNAUTHORIZED in the envelope; a bad Last-Event-ID is 400", async () => {
    const anonymous = await r.http.get("/v1/events");
    expectError(anonymous, 401, "UNAUTHORIZED");
    expect(anonymous.body.error.message).toContain("X-API-Key");
    expectError(await r.http.get("/v1/events", key(`sr_test_${"x".repeat(40)}`)), 401, "UNAUTHORIZED");
    const p = await r.project();
    const bad = await r.http.get("/v1/events", { ...key(p.testKey), "last-event-id": "12abc" });
    expectError(bad, 400, "VALIDATION_ERROR");
    expect(bad.body.error.details.field).toBe("Last-Event-ID");
  });

  test("a project's events in id order as event/id/data, another project's never; headers of the relay", async () => {
    const [a, b] = [await r.project(), await r.project()];
    const c = await open({ ...key(a.testKey), "x-request-id": "sse-1" });
    expect(c.res.status).toBe(200);
    expect(c.res.headers.get("content-type")).toBe("text/event-stream");
    expect(c.res.headers.get("x-request-id")).toBe("sse-1");
    expect(c.res.headers.get("ratelimit-limit")).not.toBeNull();
    await c.until((items) => (items.some((i) => i.comment === "connected") ? true : undefined));
    const written = await repo.append(status(a.id, 1), status(b.id, 2), status(null, 3), status(a.id, 4));
    written.push(
      ...(await repo.append({ type: "credits.low", projectId: a.id, network: "mainnet", data: { projectId: a.id } })),
    );
    // the test key's stream: a's testnet events; credits.low (mainnet credits) is the live key's
    const mine = written.filter((e) => e.projectId === a.id && e.network === "testnet");
    expect(await c.events(2)).toEqual(mine.map(asSse));
    const live = await open({ ...key(a.liveKey), "last-event-id": String(written[0]!.id - 1n) });
    expect(await live.events(1)).toEqual([asSse(written.at(-1)!)]);
    await Bun.sleep(300);
    expect(await c.until((items) => items.filter((i) => i.comment === undefined).length)).toBe(2); // nothing of b's
    expect(await live.until((items) => items.filter((i) => i.comment === undefined).length)).toBe(1);
    const ids = mine.map((e) => e.id);
    expect([...ids].sort((x, y) => (x < y ? -1 : 1))).toEqual(ids);
  });

  test("a client that disconnects is unsubscribed; resuming with Last-Event-ID it gets every later event once, in order", async () => {
    const p = await r.project();
    const before = r.events.size;
    const first = await open(key(p.testKey));
    await first.until((items) => (items.length ? true : undefined));
    const early = await repo.append(status(p.id, 1), status(p.id, 2), status(p.id, 3));
    const got = await first.events(3);
    expect(got).toEqual(early.map(asSse));
    expect(r.events.size).toBe(before + 1);
    first.close();
    for (let i = 0; i < 100 && r.events.size > before; i++) await Bun.sleep(10);
    expect(r.events.size).toBe(before); // unsubscribed
    // written while it is away, and while it reconnects
    const away = await repo.append(status(p.id, 4), status(p.id, 5));
    const reconnecting = open({ ...key(p.testKey), "last-event-id": got[1]!.id! });
    const during = await repo.append(status(p.id, 6), status(p.id, 7));
    const second = await reconnecting;
    const after = await repo.append(status(p.id, 8));
    const expected = [early[2]!, ...away, ...during, ...after].map(asSse);
    expect(await second.events(expected.length)).toEqual(expected);
    await Bun.sleep(300); // nothing twice
    expect(await second.until((items) => items.filter((i) => i.comment === undefined).length)).toBe(expected.length);
  });

  test("a heartbeat comment line comes every EVENTS_HEARTBEAT_MS", async () => {
    const p = await r.project();
    const c = await open(key(p.testKey));
    const t0 = Date.now();
    const beats = await c.until((items) => {
      const n = items.filter((i) => i.comment === "heartbeat").length;
      return n >= 2 ? n : undefined;
    }, 3000);
    expect(beats).toBe(2);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(300);
  });

  test("end to end: a transaction sponsored with the project's key streams its status changes, submitted then success", async () => {
    const p = await r.project();
    const c = await open(key(p.testKey));
    await c.until((items) => (items.length ? true : undefined));
    const user = await r.funded();
    const tx = await r.payment(user);
    const innerHash = Buffer.from(tx.hash()).toString("hex");
    const res = await r.post("/v1/sponsor", { transaction: xdrOf(tx), network: "testnet" }, key(p.testKey));
    expect(res.status).toBe(200);
    const events = await c.until((items) => {
      const mine = items.filter((i) => i.event === "transaction.status");
      return mine.some((i) => JSON.parse(i.data!).status === "success") ? mine : undefined;
    });
    const data = events.map((e) => JSON.parse(e.data!));
    expect(data.map((d) => d.status)).toEqual(["submitted", "success"]);
    for (const d of data) expect(d).toMatchObject({ innerHash, network: "testnet" });
    expect(data[1]).toMatchObject({
      hash: res.body.hash,
      ledger: res.body.ledger,
      feeCharged: res.body.feePaid,
      resultXdr: res.body.resultXdr,
    });
    const ids = events.map((e) => BigInt(e.id!));
    expect(ids[0]! < ids[1]!).toBe(true);
  });

  test("the README's curl -N lines stream, and resume after Last-Event-ID, as written", async () => {
    const p = await r.project();
    const [first, second] = await repo.append(status(p.id, 1), status(p.id, 2));
    while (r.events.cursor < second!.id) await Bun.sleep(10); // read by the feed: in the past
    const readme = await Bun.file(new URL("../../README.md", import.meta.url)).text();
    const lines = readme.split("\n").filter((l) => l.startsWith("curl -N http://localhost:3000/v1/events"));
    expect(lines).toHaveLength(2);
    const run = async (line: string) => {
      const cmd = `${line
        .replace(/\s+#.*$/, "")
        .replaceAll("http://localhost:3000", r.url)
        .replace("1042", String(first!.id))} --max-time 1`;
      const proc = Bun.spawn(["bash", "-c", cmd], {
        env: { ...process.env, KEY: p.testKey },
        stdout: "pipe",
        stderr: "ignore",
      });
      const out = await new Response(proc.stdout).text();
      expect(await proc.exited).toBe(28); // curl: the time limit ended it
      return out;
    };
    const live = await run(lines[0]!); // from now on: nothing yet
    expect(live).toStartWith(": connected\n\n");
    expect(live).not.toContain("event:");
    expect(await run(lines[1]!)).toContain(
      `event: transaction.status\nid: ${second!.id}\ndata: ${JSON.stringify(second!.data)}\n\n`,
    );
  });

  test("the relay's stop ends every open stream (after what was written before it) instead of waiting on them", async () => {
    const p = await r.project();
    const c = await open(key(p.testKey));
    await c.until((items) => (items.length ? true : undefined));
    const [last] = await repo.append(status(p.id, 1));
    const t0 = Date.now();
    stopped = true;
    await r.stop();
    expect(Date.now() - t0).toBeLessThan(5000);
    await c.done();
    const events = await c.until((items) => items.filter((i) => i.comment === undefined));
    expect(events).toEqual([asSse(last!)]);
  });
});
