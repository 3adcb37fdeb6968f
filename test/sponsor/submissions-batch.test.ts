/**
 * SubmissionsRepo's batch statements answer each item of a batch for itself: intents and outcomes
 * sent in one event-loop turn are written by one statement, and each caller gets what that
 * statement did for its submission (journaled or not; released, charged, and whose project). On
 * PGlite, and on Postgres when TEST_DATABASE_URL is set.
 */
import { expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { rowsOf, storeDatabases, TEST_DATABASE_URL } from "../support/databases.ts";
import { SubmissionsRepo } from "../../src/store/submissions.repo.ts";
import { sentIntent } from "../support/intents.ts";
import type { Outcome } from "../../src/store/types.ts";

const open = storeDatabases("submissions-batch");
const ok = (fee: string): Outcome => ({
  kind: "success",
  result: { hash: "h", feePaid: fee, ledger: 2, resultXdr: "" },
});
const failed: Outcome = { kind: "failure", error: { code: "TX_FAILED", message: "x" } } as never;

for (const kind of ["pglite", "postgres"] as const)
  test.skipIf(kind === "postgres" && !TEST_DATABASE_URL)(
    `${kind}: each item of a batch gets its own answer`,
    async () => {
      const d = await open(kind);
      try {
        const repo = new SubmissionsRepo(d.db, kind === "postgres" ? 3 : 1);
        await d.db.execute(sql`insert into projects (id, name) values ('p', 'p'), ('q', 'q')`);
        const intent = (id: string, projectId: string | null, hold: bigint, fresh = true) =>
          repo.recordIntent(sentIntent(id, `${id}-inner`, projectId, hold), hold, fresh);
        // settled before the batch: its second outcome releases and charges nothing
        expect(await intent("settled", "q", 700n)).toBe(true);
        expect(await repo.recordOutcome("settled", ok("70"), 70n, true)).toEqual({
          projectId: "q",
          released: 700n,
          charged: 70n,
        });
        // reserved before the batch: sent again, its reservation is not journaled twice
        expect(await intent("resumed", "p", 900n)).toBe(true);

        // one batch of intents (one event-loop turn)
        expect(
          await Promise.all([
            intent("a", "p", 1_000n),
            intent("b", "q", 500n),
            intent("c", null, 0n),
            intent("f", "p", 300n),
            intent("resumed", "p", 900n, false),
          ]),
        ).toEqual([true, true, false, true, false]);

        // one batch of outcomes
        expect(
          await Promise.all([
            repo.recordOutcome("a", ok("100"), 100n, true),
            repo.recordOutcome("b", failed, null, true),
            repo.recordOutcome("c", ok("100"), 100n, false),
            repo.recordOutcome("unknown", ok("100"), 100n, true),
            repo.recordOutcome("settled", ok("70"), 70n, true),
            repo.recordOutcome("f", ok("0"), 0n, true),
            repo.recordOutcome("resumed", ok("90"), 90n, true),
          ]),
        ).toEqual([
          { projectId: "p", released: 1_000n, charged: 100n },
          { projectId: "q", released: 500n, charged: 0n },
          { projectId: null, released: 0n, charged: 0n },
          { projectId: null, released: 0n, charged: 0n },
          { projectId: "q", released: 0n, charged: 0n },
          { projectId: "p", released: 300n, charged: 0n },
          { projectId: "p", released: 900n, charged: 90n },
        ]);

        // the journal: every reservation given back, each fee charged once
        const sums = rowsOf<{ project_id: string; reserved: string; charged: string }>(
          await d.db.execute(sql`select project_id,
            coalesce(sum(amount) filter (where kind in ('reserve', 'release')), 0)::text as reserved,
            coalesce(-sum(amount) filter (where kind = 'charge'), 0)::text as charged
          from credit_journal group by project_id order by project_id`),
        );
        expect(sums).toEqual([
          { project_id: "p", reserved: "0", charged: "190" },
          { project_id: "q", reserved: "0", charged: "70" },
        ]);
      } finally {
        await d.close();
      }
    },
  );

for (const kind of ["pglite", "postgres"] as const)
  test.skipIf(kind === "postgres" && !TEST_DATABASE_URL)(
    `${kind}: settlements of one submission at once (a request, recovery) release and charge it once`,
    async () => {
      const d = await open(kind);
      try {
        // on PGlite as the relay opens it: one session, no row locks
        const repo = new SubmissionsRepo(d.db, kind === "postgres" ? 3 : 1, false, kind === "pglite");
        await d.db.execute(sql`insert into projects (id, name) values ('p', 'p')`);
        const ids = Array.from({ length: 10 }, () => crypto.randomUUID());
        await Promise.all(ids.map((id) => repo.recordIntent(sentIntent(id, `${id}-inner`, "p", 1_000n), 1_000n, true)));
        const settled = await Promise.all(
          ids.flatMap((id) => [
            repo.recordOutcome(id, ok("100"), 100n, true),
            repo.recordOutcome(id, ok("100"), 100n, true),
            repo.release(id),
          ]),
        );
        const released = settled.reduce((a, s) => a + s.released, 0n);
        const charged = settled.reduce((a, s) => a + s.charged, 0n);
        expect({ released, charged }).toEqual({ released: 10_000n, charged: 1_000n });
        const [sum] = rowsOf<{ s: string }>(
          await d.db.execute(sql`select coalesce(sum(amount), 0)::text as s from credit_journal`),
        );
        expect(sum!.s).toBe("-1000");
      } finally {
        await d.close();
      }
    },
  );

for (const kind of ["pglite", "postgres"] as const)
  test.skipIf(kind === "postgres" && !TEST_DATABASE_URL)(
    `${kind}: a refusal keeps an inner hash's first row; a fresh intent meeting it fails in a way the relay recognizes`,
    async () => {
      const { innerHashTaken } = await import("../../src/store/write-errors.ts");
      const d = await open(kind);
      try {
        const repo = new SubmissionsRepo(d.db, kind === "postgres" ? 3 : 1);
        const refusal: Outcome = { kind: "failure", error: { code: "POLICY_VIOLATION", message: "no" } };
        await repo.recordRefusal({
          network: "testnet",
          innerHash: "h1",
          caller: "ip:x",
          projectId: null,
          outcome: refusal,
        });
        // a second refusal of the same inner hash leaves the first as it is
        await repo.recordRefusal({
          network: "testnet",
          innerHash: "h1",
          caller: "ip:y",
          projectId: null,
          outcome: refusal,
        });
        const row = await repo.byInnerHash("testnet", "h1");
        expect(row?.caller).toBe("ip:x");
        // a fresh intent for it (a request that read no row before the refusal was written)
        const error = await repo
          .recordIntent(
            {
              id: crypto.randomUUID(),
              network: "testnet",
              innerHash: "h1",
              hash: "h1-outer",
              caller: "ip:z",
              projectId: null,
              maxFee: 200n,
              envelope: "x",
              sentLedger: 1,
              feeBid: 100n,
              channel: "GCHANNEL",
            },
            0n,
            true,
          )
          .then(
            () => null,
            (e: unknown) => e,
          );
        expect(error).not.toBeNull();
        expect(innerHashTaken(error)).toBe(true);
        expect(innerHashTaken(new Error("something else"))).toBe(false);
      } finally {
        await d.close();
      }
    },
  );
