/**
 * The webhooks' outbox (src/store/webhooks.repo.ts): events become deliveries once each, for the
 * webhooks of their project that take their type; the cursor moves past settled events only, so
 * that an event whose transaction commits after a higher id's is not stepped over (Postgres); a
 * due delivery is leased to one claimer at a time. On PGlite, and on Postgres when TEST_DATABASE_URL is set.
 */
import { expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import type { Database } from "../../src/store/db.ts";
import { events, webhookDeliveries } from "../../src/store/schema.ts";
import { ProjectsRepo } from "../../src/store/projects.repo.ts";
import { WebhooksRepo } from "../../src/store/webhooks.repo.ts";
import { rowsOf, storeDatabases, TEST_DATABASE_URL } from "../support/databases.ts";

const open = storeDatabases("webhooks-fanout");

async function setup(d: Database) {
  const repo = new WebhooksRepo(d.db);
  const projectId = crypto.randomUUID();
  await new ProjectsRepo(d.db).create({ id: projectId, name: "p", policy: {} });
  const hook = (types: string[]) =>
    repo.create({ id: crypto.randomUUID(), projectId, url: "http://x", events: types, description: null, secret: "s" });
  const event = async (type = "transaction.status", agoMs = 0, db = d.db) => {
    const [row] = await db
      .insert(events)
      .values({
        type,
        projectId,
        network: "testnet",
        data: { n: 1 },
        ...(agoMs ? { createdAt: new Date(Date.now() - agoMs) } : {}),
      })
      .returning({ id: events.id });
    return row!.id;
  };
  const delivered = async (webhookId: string) =>
    (await d.db.select().from(webhookDeliveries).where(sql`webhook_id = ${webhookId}`)).map((r) => r.eventId).sort();
  const cursor = async (webhookId: string) =>
    BigInt(
      rowsOf<{ c: string }>(await d.db.execute(sql`select cursor::text as c from webhooks where id = ${webhookId}`))[0]!
        .c,
    );
  return { repo, projectId, hook, event, delivered, cursor };
}

for (const kind of ["pglite", "postgres"] as const)
  test.skipIf(kind === "postgres" && !TEST_DATABASE_URL)(`${kind}: fan-out and cursor`, async () => {
    const d = await open(kind);
    const { repo, hook, event, delivered, cursor } = await setup(d);
    const before = await event("transaction.status", 60_000); // before the webhook: not its
    const all = await hook(["transaction.status", "credits.low"]);
    const low = await hook(["credits.low"]);
    expect(await cursor(all.id)).toBe(before);
    const old = [await event("transaction.status", 60_000), await event("credits.low", 60_000)];
    const fresh = await event();
    expect(await repo.fanOut(1000, 5000)).toBe(4);
    expect(await delivered(all.id)).toEqual([...old, fresh]);
    expect(await delivered(low.id)).toEqual([old[1]!]);
    // past the settled events only; a pass again makes nothing twice
    expect(await cursor(all.id)).toBe(old[1]!);
    expect(await cursor(low.id)).toBe(old[1]!);
    expect(await repo.fanOut(1000, 5000)).toBe(0);
    // a full batch: the cursor stops at its last, the next pass goes on
    const many = [];
    for (let i = 0; i < 5; i++) many.push(await event("transaction.status", 60_000));
    expect(await repo.fanOut(2, 5000)).toBe(2); // `all`'s first 2 (`low` takes none of them)
    expect(await repo.fanOut(2, 5000)).toBe(2);
    expect(await repo.fanOut(2, 5000)).toBe(1);
    expect(await repo.fanOut(2, 5000)).toBe(0);
    expect(await delivered(all.id)).toEqual([...old, fresh, ...many].sort());
    // the newest settled event (visible events before it, settled or not, have their deliveries)
    expect(await cursor(all.id)).toBe(many[4]!);
    // claims: leased once, due again only after the lease
    const claimed = await repo.claim(all.id, 100, 60_000);
    expect(claimed.map((c) => c.eventId).sort()).toEqual([...old, fresh, ...many].sort());
    expect(JSON.parse(claimed[0]!.data!)).toEqual({ n: 1 });
    expect(await repo.claim(all.id, 100, 60_000)).toEqual([]);
    expect(await repo.dueWebhooks([])).toEqual([low.id]);
    await d.close();
  });

test.skipIf(!TEST_DATABASE_URL)("postgres: an event committed after a higher id's is still delivered", async () => {
  const d = await open("postgres");
  const { repo, hook, event, delivered } = await setup(d);
  const w = await hook(["transaction.status"]);
  let commit = () => {};
  const held = new Promise<void>((resolve) => {
    commit = resolve;
  });
  let lateId = 0n;
  const late = d.db.transaction(async (tx) => {
    lateId = await event("transaction.status", 0, tx as never);
    await held;
  });
  while (lateId === 0n) await Bun.sleep(5);
  const later = await event(); // a higher id, committed first
  expect(later > lateId).toBe(true);
  await repo.fanOut(1000, 5000);
  expect(await delivered(w.id)).toEqual([later]);
  expect(await repo.fanOut(1000, 5000)).toBe(0);
  commit();
  await late;
  await repo.fanOut(1000, 5000);
  expect(await delivered(w.id)).toEqual([lateId, later]);
  await d.close();
});

test.skipIf(!TEST_DATABASE_URL)("postgres: concurrent claimers never lease the same delivery", async () => {
  const d = await open("postgres");
  const { repo, hook, event } = await setup(d);
  const w = await hook(["transaction.status"]);
  for (let i = 0; i < 40; i++) await event();
  await repo.fanOut(1000, 5000);
  const claims = await Promise.all(Array.from({ length: 8 }, () => repo.claim(w.id, 10, 60_000)));
  const ids = claims.flat().map((c) => c.id);
  expect(ids).toHaveLength(40);
  expect(new Set(ids).size).toBe(40);
  await d.close();
});
