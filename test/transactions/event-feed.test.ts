/**
 * The event feed below HTTP. Its order (event-order.ts), fed rows: every event once and in id
 * order, never past a gap at once, a gap skipped only after the grace (a rolled-back insert), and,
 * for any commit order of concurrent inserts that commit within half the grace, every committed id
 * released once in order (fast-check). Then feeds on a real database: a resumed subscriber's backlog
 * and live events without a duplicate or a hole, a slow subscriber ended (and its SSE stream
 * disconnected), a stop that delivers what
 * was written first; on Postgres, two transactions committing out of id order delivered in order,
 * and two feeds (two instances' connection pools) on one database each seeing the other's writes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { sql } from "drizzle-orm";
import { tmpdir } from "node:os";
import { EventOrder } from "../../src/features/transactions/events/event-order.ts";
import { EventFeed, type FeedEvent, type Subscription } from "../../src/features/transactions/events/event-feed.ts";
import { EventsRepo } from "../../src/store/events.repo.ts";
import { sseStream } from "../../src/features/transactions/events/events.routes.ts";
import { events } from "../../src/store/schema.ts";
import { createLogger } from "../../src/kernel/log.ts";
import type { Database } from "../../src/store/db.ts";
import { openDatabase } from "../../src/store/db.ts";
import { rowsOf, storeDatabases, TEST_DATABASE_URL } from "../support/databases.ts";

const rows = (...ids: number[]) => ids.map((id) => ({ id: BigInt(id) }));
const ids = (rs: { id: bigint }[]) => rs.map((r) => Number(r.id));

describe("event order", () => {
  test("contiguous ids are released at once, in order; ids at or below the cursor and repeats are ignored", () => {
    const o = new EventOrder(0n, 2000);
    expect(ids(o.offer(rows(1, 2, 3), 0))).toEqual([1, 2, 3]);
    expect(ids(o.offer(rows(2, 3, 4, 4, 5), 10))).toEqual([4, 5]);
    expect(o.cursor).toBe(5n);
    expect(o.holding).toBe(0);
  });

  test("an id after a gap is held until the gap fills, then both go out in order", () => {
    const o = new EventOrder(10n, 2000);
    expect(ids(o.offer(rows(11, 13, 14), 0))).toEqual([11]);
    expect(o.holding).toBe(2);
    expect(ids(o.offer(rows(13, 14), 500))).toEqual([]);
    expect(ids(o.offer(rows(12, 13, 14, 15), 1000))).toEqual([12, 13, 14, 15]);
    expect(o.takeSkipped()).toEqual([]);
  });

  test("a gap that never fills (a rolled-back insert) is skipped once it has been open for the grace", () => {
    const o = new EventOrder(0n, 2000);
    expect(ids(o.offer(rows(1, 3), 1000))).toEqual([1]);
    expect(ids(o.offer(rows(3, 4), 2999))).toEqual([]);
    expect(ids(o.offer(rows(3, 4, 6), 3000))).toEqual([3, 4]); // 3 first seen at 1000; 6 first seen now
    expect(o.takeSkipped()).toEqual([{ from: 2n, to: 2n }]);
    expect(ids(o.offer(rows(6), 4999))).toEqual([]);
    expect(ids(o.offer(rows(6), 5000))).toEqual([6]);
    expect(o.takeSkipped()).toEqual([{ from: 5n, to: 5n }]);
    expect(o.takeSkipped()).toEqual([]);
  });

  test("the grace of a gap counts from when the first id after it was seen, not from the first read", () => {
    const o = new EventOrder(0n, 2000);
    expect(ids(o.offer(rows(1), 0))).toEqual([1]);
    expect(ids(o.offer(rows(3), 5000))).toEqual([]);
    expect(ids(o.offer(rows(3), 6999))).toEqual([]);
    expect(ids(o.offer(rows(3), 7000))).toEqual([3]);
  });

  test("any commit order within half the grace: every committed id once, in order; rolled-back ids skipped", () => {
    const grace = 200;
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            gapMs: fc.integer({ min: 0, max: 20 }),
            commitMs: fc.integer({ min: 0, max: grace / 2 - 1 }),
            rolledBack: fc.integer({ min: 0, max: 6 }).map((n) => n === 0),
          }),
          { minLength: 1, maxLength: 60 },
        ),
        fc.integer({ min: 1, max: 60 }),
        (inserts, pollMs) => {
          // id i+1 is taken at `at`, visible from `at + commitMs` unless rolled back
          let at = 0;
          const timeline = inserts.map((x, i) => {
            at += x.gapMs;
            return { id: BigInt(i + 1), visibleAt: x.rolledBack ? Number.POSITIVE_INFINITY : at + x.commitMs };
          });
          const o = new EventOrder<{ id: bigint }>(0n, grace);
          const out: number[] = [];
          for (let now = 0; now <= at + 100 + 3 * grace; now += pollMs) {
            const visible = timeline.filter((r) => r.visibleAt <= now && r.id > o.cursor);
            out.push(...ids(o.offer(visible, now)));
          }
          const committed = timeline.filter((r) => r.visibleAt !== Number.POSITIVE_INFINITY).map((r) => Number(r.id));
          expect(out).toEqual(committed);
        },
      ),
      { numRuns: 300 },
    );
  });
});

const open = storeDatabases("event-feed");
const silent = createLogger("silent");
const kinds: ("pglite" | "postgres")[] = TEST_DATABASE_URL ? ["pglite", "postgres"] : ["pglite"];
const ev = (projectId: string | null, n: number) => ({
  type: "transaction.status",
  projectId,
  network: "testnet",
  data: { n, status: "pending" },
});

/** Calls `sub.next()` until `count` events came (or `ms` passed). */
async function collect(sub: Subscription, count: number, ms = 5000): Promise<FeedEvent[]> {
  const got: FeedEvent[] = [];
  const deadline = Date.now() + ms;
  while (got.length < count && Date.now() < deadline) {
    const batch = await Promise.race([sub.next(), Bun.sleep(deadline - Date.now()).then(() => [] as FeedEvent[])]);
    if (batch === null) break;
    got.push(...batch);
  }
  return got;
}

describe.each(kinds)("the event feed on a database (%s)", (kind) => {
  const feeds: EventFeed[] = [];
  const dbs: Database[] = [];
  afterAll(async () => {
    for (const f of feeds) await f.stop();
    for (const d of dbs) await d.close();
  });
  const feedOn = async (db: Database, opts: Partial<ConstructorParameters<typeof EventFeed>[2]> = {}) => {
    const f = new EventFeed(new EventsRepo(db.db), silent, { pollMs: 20, ...opts });
    await f.start();
    feeds.push(f);
    return f;
  };
  let db: Database;
  let repo: EventsRepo;
  beforeAll(async () => {
    db = await open(kind);
    dbs.push(db);
    repo = new EventsRepo(db.db);
  });

  test("events are read only while a client is subscribed; without one the cursor skips ahead", async () => {
    const reads = { n: 0 };
    const counting = new EventsRepo(db.db);
    const after = counting.after.bind(counting);
    counting.after = (id, limit, o) => {
      if (!o?.projectId) reads.n++;
      return after(id, limit, o);
    };
    const f = new EventFeed(counting, silent, { pollMs: 20, graceMs: 0 });
    await f.start();
    feeds.push(f);
    const [written] = await repo.append(ev("p-poke", 1));
    for (let i = 0; i < 5; i++) {
      f.poke();
      await Bun.sleep(10);
    }
    // periodic reads too: the cursor moves past it all the same (as soon as a read comes, on a busy machine)
    for (let t = 0; t < 200 && f.cursor < written!.id; t++) await Bun.sleep(10);
    expect(f.cursor).toBeGreaterThanOrEqual(written!.id);
    expect(reads.n).toBe(0); // nobody listening: no event is read
    const sub = f.subscribe({ projectId: "p-poke", network: "testnet" }, null);
    const before = reads.n;
    f.poke();
    for (let t = 0; t < 200 && reads.n === before; t++) await Bun.sleep(10);
    expect(reads.n).toBeGreaterThan(before); // a listener: its events are read
    const [later] = await repo.append(ev("p-poke", 2));
    f.poke();
    expect((await collect(sub, 1, 2000)).map((e) => e.id)).toEqual([later!.id]); // from the skipped-to cursor on
    sub.end("stopped");
  });

  test("a resumed subscriber gets its backlog, then the live events: each once, in order, its project's only", async () => {
    const feed = await feedOn(db);
    const p = `p-${crypto.randomUUID()}`;
    const before = await repo.append(...Array.from({ length: 25 }, (_, i) => ev(i % 5 === 0 ? "other" : p, i)));
    const mine = before.filter((e) => e.projectId === p);
    while (feed.cursor < before.at(-1)!.id) await Bun.sleep(5);
    const resumeAfter = mine[4]!.id;
    const sub = feed.subscribe({ projectId: p, network: "testnet" }, resumeAfter);
    const live = feed.subscribe({ projectId: p, network: "testnet" }, null); // from now on
    const later = await repo.append(ev(p, 100), ev("other", 101), ev(null, 102), ev(p, 103));
    feed.poke();
    const expected = [...mine.slice(5), later[0]!, later[3]!].map((e) => e.id);
    expect((await collect(sub, expected.length)).map((e) => e.id)).toEqual(expected);
    const got = await collect(live, 2);
    expect(got.map((e) => e.id)).toEqual([later[0]!.id, later[3]!.id]);
    expect(got[0]!.data).toEqual({ n: 100, status: "pending" });
    expect(got[0]!.type).toBe("transaction.status");
    expect(feed.size).toBe(2);
    sub.close();
    live.close();
    expect(feed.size).toBe(0);
    expect(await sub.next()).toBeNull();
  });

  test("cutOff: a revoked key's subscriptions end (nothing after, not even what waits), a late one ends at once; a project's all", async () => {
    const feed = await feedOn(db);
    const p = `p-${crypto.randomUUID()}`;
    const [k1, k2] = [
      feed.subscribe({ projectId: p, network: "testnet", keyId: "k1" }, null),
      feed.subscribe({ projectId: p, network: "testnet", keyId: "k2" }, null),
    ];
    await repo.append(ev(p, 1));
    feed.poke();
    expect(await collect(k2, 1)).toHaveLength(1);
    expect(await collect(k1, 1)).toHaveLength(1);
    await repo.append(ev(p, 2)); // waiting in k1's queue, unread, when the key is revoked
    feed.poke();
    await collect(k2, 1);
    expect(feed.cutOff({ keyId: "k1" })).toBe(1);
    expect(k1.endedBy).toBe("revoked");
    expect(await collect(k1, 1, 200)).toEqual([]); // not the event waiting
    expect(k2.endedBy).toBeNull();
    const late = feed.subscribe({ projectId: p, network: "testnet", keyId: "k1" }, null);
    expect(late.endedBy).toBe("revoked");
    expect(feed.cutOff({ projectId: p, reason: "suspended" })).toBe(1);
    expect(k2.endedBy).toBe("suspended");
    expect(feed.size).toBe(0);
  });

  test("maxPerProject: one more subscription is RATE_LIMIT_EXCEEDED; another project's is not", async () => {
    const feed = await feedOn(db, { maxPerProject: 2 });
    const p = `p-${crypto.randomUUID()}`;
    const subs = [0, 1].map(() => feed.subscribe({ projectId: p, network: "testnet" }, null));
    expect(() => feed.subscribe({ projectId: p, network: "mainnet" }, null)).toThrow(
      expect.objectContaining({
        code: "RATE_LIMIT_EXCEEDED",
        details: { limit: "EVENTS_STREAMS_PER_PROJECT", max: 2 },
      }),
    );
    feed.subscribe({ projectId: `${p}-other`, network: "testnet" }, null).close();
    subs[0]!.close();
    feed.subscribe({ projectId: p, network: "testnet" }, null).close();
    subs[1]!.close();
  });

  test("watchHashes: told of each transaction.status event of its hashes, any project's; a watcher is a listener", async () => {
    const feed = await feedOn(db, { pollMs: 60_000 }); // only pokes read
    const hash = crypto.randomUUID().replace(/-/g, "");
    const told: unknown[] = [];
    const unwatch = feed.watchHashes([hash], (e) => told.push(e.data));
    const status = (h: string, st: string) => ({
      type: "transaction.status",
      projectId: null,
      network: "testnet",
      data: { hash: "x", innerHash: h, status: st },
    });
    await repo.append(status("other", "success"), status(hash, "success"));
    feed.poke();
    for (let i = 0; i < 200 && !told.length; i++) await Bun.sleep(10);
    expect(told).toEqual([{ hash: "x", innerHash: hash, status: "success" }]);
    unwatch();
    await repo.append(status(hash, "failed"));
    feed.poke();
    await Bun.sleep(100);
    expect(told).toHaveLength(1);
  });

  test("a subscriber whose live events pile up unread is ended (it resumes with its last id)", async () => {
    const feed = await feedOn(db, { bufferLimit: 5 });
    const p = `p-${crypto.randomUUID()}`;
    const sub = feed.subscribe({ projectId: p, network: "testnet" }, null);
    await repo.append(...Array.from({ length: 8 }, (_, i) => ev(p, i)));
    feed.poke();
    for (let i = 0; i < 200 && sub.endedBy === null; i++) await Bun.sleep(5);
    expect(sub.endedBy).toBe("overflow");
    expect(await sub.next()).toBeNull();
    expect(feed.size).toBe(0);
  });

  test("its SSE stream: a reader that stops reading is disconnected once its buffer overflows; a cancel unsubscribes", async () => {
    const feed = await feedOn(db, { bufferLimit: 5 });
    const p = `p-${crypto.randomUUID()}`;
    const reader = sseStream(
      feed.subscribe({ projectId: p, network: "testnet" }, null),
      60_000,
      new AbortController().signal,
    ).getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe(": connected\n\n");
    const [first] = await repo.append(ev(p, 0));
    feed.poke();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe(
      `event: transaction.status\nid: ${first!.id}\ndata: {"n":0,"status":"pending"}\n\n`,
    );
    await repo.append(...Array.from({ length: 8 }, (_, i) => ev(p, i + 1))); // not read
    feed.poke();
    for (let i = 0; i < 200 && feed.size; i++) await Bun.sleep(5);
    expect(feed.size).toBe(0);
    await expect(reader.read()).rejects.toThrow("the client reads too slowly");

    const cancelled = sseStream(
      feed.subscribe({ projectId: p, network: "testnet" }, null),
      60_000,
      new AbortController().signal,
    );
    expect(feed.size).toBe(1);
    await cancelled.cancel();
    expect(feed.size).toBe(0);
  });

  test("stop: what was written before goes out, then every subscription ends; later subscriptions are ended", async () => {
    const feed = await feedOn(db, { pollMs: 60_000 });
    const p = `p-${crypto.randomUUID()}`;
    const sub = feed.subscribe({ projectId: p, network: "testnet" }, null);
    const written = await repo.append(ev(p, 1), ev(p, 2));
    await feed.stop();
    expect(sub.endedBy).toBe("stopped");
    expect((await sub.next())?.map((e) => e.id)).toEqual(written.map((e) => e.id));
    expect(await sub.next()).toBeNull();
    const late = feed.subscribe({ projectId: p, network: "testnet" }, null);
    expect(await late.next()).toBeNull();
    feed.poke(); // no effect after stop
  });

  test("prune deletes the events older than the given time only", async () => {
    const p = `p-${crypto.randomUUID()}`;
    const [old, recent] = await repo.append(ev(p, 1), ev(p, 2));
    await db.db.execute(sql`update ${events} set created_at = now() - interval '49 hours' where id = ${old!.id}`);
    expect(await repo.prune(new Date(Date.now() - 48 * 3600_000))).toBe(1);
    expect((await repo.after(0n, 100, { projectId: p })).map((e) => e.id)).toEqual([recent!.id]);
  });

  test.skipIf(kind !== "postgres")(
    "two transactions committing out of id order: the later id waits, both go out in id order",
    async () => {
      const feed = await feedOn(db);
      const p = `p-${crypto.randomUUID()}`;
      const sub = feed.subscribe({ projectId: p, network: "testnet" }, null);
      let commit!: () => void;
      const gate = new Promise<void>((resolve) => (commit = resolve));
      let firstId = 0n;
      let inserted!: () => void;
      const insertedFirst = new Promise<void>((resolve) => (inserted = resolve));
      const slow = db.db.transaction(async (tx) => {
        const [row] = await tx.insert(events).values(ev(p, 1)).returning();
        firstId = row!.id;
        inserted();
        await gate;
      });
      await insertedFirst;
      const [second] = await repo.append(ev(p, 2)); // id firstId + 1, visible first
      expect(second!.id).toBeGreaterThan(firstId);
      feed.poke();
      await Bun.sleep(300); // several reads: the second is held back
      expect(await Promise.race([sub.next(), Bun.sleep(50).then(() => "nothing")])).toBe("nothing");
      commit();
      await slow;
      feed.poke();
      expect((await collect(sub, 2)).map((e) => e.id)).toEqual([firstId, second!.id]);
    },
  );

  test.skipIf(kind !== "postgres")(
    "two feeds on one database (two instances): each sees the events written through the other",
    async () => {
      // a second connection pool on the first's schema: another instance
      const [{ s: schema }] = rowsOf<{ s: string }>(await db.db.execute(sql`select current_schema() as s`)) as [
        { s: string },
      ];
      const second = await openDatabase({ url: TEST_DATABASE_URL, dataDir: tmpdir(), schema });
      dbs.push(second);
      const [a, b] = [await feedOn(db), await feedOn(second)];
      const p = `p-${crypto.randomUUID()}`;
      const [subA, subB] = [
        a.subscribe({ projectId: p, network: "testnet" }, null),
        b.subscribe({ projectId: p, network: "testnet" }, null),
      ];
      const [viaA] = await new EventsRepo(db.db).append(ev(p, 1));
      a.poke();
      const [viaB] = await new EventsRepo(second.db).append(ev(p, 2));
      b.poke();
      const want = [viaA!.id, viaB!.id];
      expect((await collect(subA, 2)).map((e) => e.id)).toEqual(want);
      expect((await collect(subB, 2)).map((e) => e.id)).toEqual(want);
    },
  );
});
