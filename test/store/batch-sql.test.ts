/**
 * A batch statement's columns go to the database as array literals built by the relay
 * (batch-sql.ts): whatever a value holds (quotes, backslashes, commas, braces, the word NULL,
 * spaces, other scripts), the statement reads back exactly the values sent, and a null as null. On
 * PGlite, and on Postgres when TEST_DATABASE_URL is set.
 */
import { expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import fc from "fast-check";
import { BatchStatement, rowsOf } from "../../src/store/batch-sql.ts";
import { storeDatabases, TEST_DATABASE_URL } from "../support/databases.ts";

const open = storeDatabases("batch-sql");
const echo = new BatchStatement<"texts" | "numbers">(
  "test_batch_echo",
  (col) => sql`select t.text, t.number::text as number, t.n::int as n
    from unnest(${col("texts", "text")}, ${col("numbers", "bigint")}) with ordinality as t (text, number, n)
    order by n`,
);
// text as Postgres keeps it: anything but NUL, which it refuses in text
const text = fc.string({ unit: "binary", maxLength: 40 }).map((s) => s.replaceAll("\0", ""));
const tricky = fc.constantFrom('"', "\\", ",", "{", "}", "NULL", "null", " a ", "", '\\"', "{1,2}", "é😀");

for (const kind of ["pglite", "postgres"] as const)
  test.skipIf(kind === "postgres" && !TEST_DATABASE_URL)(
    `${kind}: a batch's values come back exactly as sent`,
    async () => {
      const d = await open(kind);
      try {
        await fc.assert(
          fc.asyncProperty(
            fc.array(fc.tuple(fc.option(fc.oneof(text, tricky)), fc.option(fc.bigInt())), { maxLength: 12 }),
            async (rows) => {
              const numbers = rows.map(([, n]) => (n === null ? null : BigInt.asIntN(64, n)));
              const r = rowsOf<{ text: string | null; number: string | null }>(
                await echo.run(d.db, { texts: rows.map(([t]) => t), numbers }),
              );
              expect(r.map((x) => x.text)).toEqual(rows.map(([t]) => t));
              expect(r.map((x) => x.number)).toEqual(numbers.map((n) => (n === null ? null : String(n))));
            },
          ),
          { numRuns: 60 },
        );
      } finally {
        await d.close();
      }
    },
    60_000,
  );
