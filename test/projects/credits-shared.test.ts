/**
 * Several instances reserve one project's credits (SubmissionsRepo with `checkBalance`, as cluster
 * mode runs it): each instance's project actor sees only its own reservations, so the journal is
 * the judge. Three repos on three connection pools (three instances) record intents concurrently
 * for a balance that covers exactly N holds: N are journaled, the others refused with
 * INSUFFICIENT_CREDITS and not written; released again, the journal equals the balance.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { sql } from "drizzle-orm";
import type { RelayError } from "../../src/kernel/errors.ts";
import { openDatabase, type Database } from "../../src/store/db.ts";
import { SubmissionsRepo } from "../../src/store/submissions.repo.ts";

const URL = process.env.TEST_DATABASE_URL;
const schema = `shared_${crypto.randomUUID().replace(/-/g, "").slice(0, 12)}`;
const dir = mkdtempSync(join(tmpdir(), "shared-credits-"));
const databases: Database[] = [];

beforeAll(async () => {
  if (!URL) return;
  for (let i = 0; i < 3; i++) databases.push(await openDatabase({ url: URL, dataDir: dir, schema }));
});
afterAll(async () => {
  for (const d of databases) await d.close();
  if (URL) {
    const c = postgres(URL, { max: 1, onnotice: () => {} });
    await c.unsafe(`drop schema if exists "${schema}" cascade`);
    await c.end();
  }
  rmSync(dir, { recursive: true, force: true });
});

const rows = <T>(r: unknown): T[] => (Array.isArray(r) ? r : (r as { rows: T[] }).rows);

async function balance(projectId: string): Promise<bigint> {
  const r = await databases[0]!.db.execute(
    sql`select coalesce(sum(amount), 0)::text as s from credit_journal where project_id = ${projectId}`,
  );
  return BigInt(rows<{ s: string }>(r)[0]!.s);
}

test.skipIf(!URL)(
  "a balance that covers N holds: N of 60 concurrent intents over 3 instances are journaled",
  async () => {
    const HOLD = 200_000n;
    const N = 17;
    const projectId = crypto.randomUUID();
    const db = databases[0]!.db;
    await db.execute(sql`insert into projects (id, name) values (${projectId}, 'shared')`);
    await db.execute(
      sql`insert into credit_journal (project_id, kind, amount) values (${projectId}, 'topup', ${
        HOLD * BigInt(N) + HOLD / 2n
      })`,
    );
    const repos = databases.map((d) => new SubmissionsRepo(d.db, 3, true));
    const ids = Array.from({ length: 60 }, () => crypto.randomUUID());
    const results = await Promise.all(
      ids.map((id, i) =>
        repos[i % 3]!.recordIntent(
          {
            id,
            network: "mainnet",
            innerHash: crypto.randomUUID(),
            hash: crypto.randomUUID(),
            caller: `project:${projectId}`,
            projectId,
            maxFee: HOLD,
            envelope: "x",
            sentLedger: 1,
            feeBid: 100n,
            channel: "GCHANNEL",
          },
          HOLD,
        ).then(
          (journaled) => ({ id, journaled, error: null as RelayError | null }),
          (e: unknown) => ({ id, journaled: false, error: e as RelayError }),
        ),
      ),
    );
    const journaled = results.filter((r) => r.journaled);
    const refused = results.filter((r) => r.error);
    expect(journaled).toHaveLength(N);
    expect(refused).toHaveLength(60 - N);
    for (const r of refused) expect(r.error).toMatchObject({ code: "INSUFFICIENT_CREDITS" });
    expect(await balance(projectId)).toBe(HOLD / 2n);
    // a refused intent was not written: nothing of it can be sent or recovered
    const written = rows<{ n: number }>(
      await db.execute(sql`select count(*)::int as n from submissions where project_id = ${projectId}`),
    )[0]!.n;
    expect(written).toBe(N);
    for (const r of journaled) await repos[0]!.release(r.id);
    expect(await balance(projectId)).toBe(HOLD * BigInt(N) + HOLD / 2n);
  },
);
