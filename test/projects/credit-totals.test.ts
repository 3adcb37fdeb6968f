/**
 * A project's row keeps its credit balance and reserved amount (a trigger on the journal's
 * inserts): after any mix of top-ups, adjustments, reservations, outcomes and releases, written
 * concurrently, they equal the journal's sums. On PGlite, and on Postgres when TEST_DATABASE_URL
 * is set.
 */
import { expect, test } from "bun:test";
import fc from "fast-check";
import { sql } from "drizzle-orm";
import { CreditsRepo } from "../../src/store/credits.repo.ts";
import type { Database } from "../../src/store/db.ts";
import { rowsOf, storeDatabases, TEST_DATABASE_URL } from "../support/databases.ts";
import { SubmissionsRepo } from "../../src/store/submissions.repo.ts";

const open = storeDatabases("credit-totals");

/** What the journal sums to, and what the project's row says, per project. */
async function totals(d: Database): Promise<{ journal: string[]; kept: string[] }> {
  const journal = rowsOf<{ v: string }>(
    await d.db.execute(sql`select p.id || ':' || coalesce(sum(c.amount), 0) || ':' ||
      -coalesce(sum(c.amount) filter (where c.kind in ('reserve', 'release')), 0) as v
      from projects p left join credit_journal c on c.project_id = p.id group by p.id order by p.id`),
  ).map((r) => r.v);
  const kept = rowsOf<{ v: string }>(
    await d.db.execute(
      sql`select id || ':' || credit_balance || ':' || credit_reserved as v from projects order by id`,
    ),
  ).map((r) => r.v);
  return { journal, kept };
}

const step = fc.oneof(
  fc.record({ op: fc.constant("topup" as const), amount: fc.bigInt(1n, 10n ** 9n) }),
  fc.record({ op: fc.constant("adjustment" as const), amount: fc.bigInt(-1000n, -1n) }),
  fc.record({ op: fc.constant("reserve" as const), hold: fc.bigInt(100n, 10n ** 6n) }),
  fc.record({ op: fc.constant("settle" as const), fee: fc.option(fc.bigInt(0n, 1000n)) }),
  fc.record({ op: fc.constant("release" as const) }),
);

for (const kind of ["pglite", "postgres"] as const)
  test.skipIf(kind === "postgres" && !TEST_DATABASE_URL)(
    `${kind}: the project's kept balance and reserved amount equal the journal's sums`,
    async () => {
      const d = await open(kind);
      try {
        const credits = new CreditsRepo(d.db);
        const repo = new SubmissionsRepo(d.db, kind === "postgres" ? 3 : 1);
        const projects = ["p1", "p2"];
        for (const id of projects) await d.db.execute(sql`insert into projects (id, name) values (${id}, ${id})`);
        await fc.assert(
          fc.asyncProperty(fc.array(fc.tuple(fc.nat(1), step), { minLength: 1, maxLength: 12 }), async (steps) => {
            const open: string[] = [];
            // every step of a run at once: reservations, settlements and top-ups race on one row
            await Promise.all(
              steps.map(async ([p, s], i) => {
                const projectId = projects[p]!;
                if (s.op === "topup" || s.op === "adjustment")
                  return await credits.append({ projectId, kind: s.op, amount: s.amount });
                const id = crypto.randomUUID();
                const hold = s.op === "reserve" ? s.hold : 500n;
                await repo.recordIntent(
                  {
                    id,
                    network: "mainnet",
                    innerHash: `${id}-inner`,
                    hash: `${id}-${i}`,
                    caller: `project:${projectId}`,
                    projectId,
                    maxFee: hold,
                    envelope: "x",
                    sentLedger: 1,
                    feeBid: 100n,
                    channel: "GCHANNEL",
                  },
                  hold,
                );
                if (s.op === "reserve") return open.push(id);
                if (s.op === "release") return await repo.release(id);
                const outcome = { kind: "failure" as const, error: { code: "TX_FAILED", message: "x" } };
                return await repo.recordOutcome(id, outcome as never, s.fee, true);
              }),
            );
            const { journal, kept } = await totals(d);
            expect(kept).toEqual(journal);
          }),
          { numRuns: 25 },
        );
        expect((await credits.summary("p1")).balance).toBe(
          BigInt((await totals(d)).journal.find((v) => v.startsWith("p1:"))!.split(":")[1]!),
        );
      } finally {
        await d.close();
      }
    },
  );
