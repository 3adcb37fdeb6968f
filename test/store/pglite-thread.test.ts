/**
 * The embedded database in its own thread behaves as PGlite does in the relay's: values come back
 * typed, errors keep Postgres' fields, a transaction commits or rolls back as a whole and holds
 * the database while it is open, and a closed database refuses calls.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { PGliteThread } from "../../src/store/pglite-thread.ts";
import { seedPglite } from "../support/pglite.ts";

const dir = mkdtempSync(join(tmpdir(), "pglite-thread-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const db = await PGliteThread.open(join(dir, "db"));
afterAll(() => db.close());
await db.query("create table t (id int primary key, v text)");

test("values come back typed; a raw-text parser keeps a timestamp's text", async () => {
  const r = await db.query<{ n: number; b: bigint; j: { a: number[] }; ts: string }>(
    "select 1 as n, 9007199254740993::bigint as b, $1::jsonb as j, '2026-11-23 01:02:03+00'::timestamptz as ts",
    [JSON.stringify({ a: [1, 2] })],
    { parsers: { 1184: (v: string) => v } },
  );
  expect(r.rows[0]).toEqual({ n: 1, b: 9007199254740993n, j: { a: [1, 2] }, ts: "2026-11-23 01:02:03+00" });
  const a = await db.query<unknown[]>("select 1, 'x'", [], { rowMode: "array" });
  expect(a.rows[0]).toEqual([1, "x"]);
});

test("a parser that changes the value is refused, not silently dropped", () => {
  expect(() => db.query("select now()", [], { parsers: { 1184: (v: string) => new Date(v) } })).toThrow(
    /keep the text/,
  );
});

test("an error keeps Postgres' fields", async () => {
  await db.query("insert into t values (1, 'a')");
  const e = (await db.query("insert into t values (1, 'b')").catch((x) => x)) as Error & { code?: string };
  expect(e).toBeInstanceOf(Error);
  expect(e.code).toBe("23505");
  expect(e.message).toContain("duplicate key");
});

test("an error whose PGlite fields cannot be sent (the query's options) still answers, and the thread lives on", async () => {
  const e = (await db
    .query("select 1 / 0", [], { rowMode: "array", parsers: { 1184: (v: string) => v } })
    .catch((x) => x)) as Error & { code?: string };
  expect(e.code).toBe("22012");
  expect((await db.query<{ n: number }>("select 2 as n")).rows[0]!.n).toBe(2);
});

test("a transaction commits as a whole, or rolls back when its callback throws", async () => {
  await db.transaction(async (tx) => {
    await tx.query("insert into t values (2, 'b')");
    await tx.query("insert into t values (3, 'c')");
  });
  const boom = new Error("boom");
  const thrown = await db
    .transaction(async (tx) => {
      await tx.query("insert into t values (4, 'd')");
      throw boom;
    })
    .catch((x) => x);
  expect(thrown).toBe(boom);
  const ids = (await db.query<{ id: number }>("select id from t order by id")).rows.map((r) => r.id);
  expect(ids).toEqual([1, 2, 3]);
});

test("a query from outside waits until an open transaction ends", async () => {
  const order: string[] = [];
  let outside: Promise<unknown> | undefined;
  await db.transaction(async (tx) => {
    await tx.query("update t set v = 'in' where id = 1");
    outside = db
      .query<{ v: string }>("select v from t where id = 1")
      .then((r) => order.push(`outside:${r.rows[0]!.v}`));
    await Bun.sleep(50);
    await tx.query("update t set v = 'done' where id = 1");
    order.push("commit");
  });
  await outside;
  expect(order).toEqual(["commit", "outside:done"]);
});

test("a thread that ends on its own fails every call at once, none hangs", async () => {
  await seedPglite(join(dir, "ended"));
  const other = await PGliteThread.open(join(dir, "ended", "pglite"));
  (other as unknown as { worker: Worker }).worker.terminate();
  await expect(other.query("select 1")).rejects.toThrow(/thread failed: it ended/);
  await other.close();
});

test("a database that cannot be migrated is closed: the process that tried can exit", async () => {
  const dataDir = join(dir, "broken");
  await seedPglite(dataDir);
  const pg = new PGlite(join(dataDir, "pglite"));
  await pg.exec("drop schema drizzle cascade"); // the migrations run again and find the tables there
  await pg.close();
  const script = `import { openDatabase } from ${JSON.stringify(join(import.meta.dir, "../../src/store/db.ts"))};
    await openDatabase({ dataDir: ${JSON.stringify(dataDir)} }).then(() => console.log("opened"), () => console.log("refused"));`;
  const child = Bun.spawn(["bun", "-e", script], { stdout: "pipe", stderr: "ignore" });
  const exited = await Promise.race([child.exited, Bun.sleep(20_000).then(() => "still running")]);
  if (exited === "still running") child.kill();
  expect(exited).toBe(0);
  expect((await new Response(child.stdout).text()).trim()).toBe("refused");
}, 30_000);

test("a closed database refuses calls (the last test: it closes the one above)", async () => {
  await db.close();
  await expect(db.query("select 1")).rejects.toThrow(/closed/);
  await Promise.all([db.close(), db.close()]); // again, and twice at once: harmless
});
