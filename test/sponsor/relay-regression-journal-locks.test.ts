/**
 * Regression (found in review; the test failed before the fix): the journal statements of SubmissionsRepo (recordOutcome, release) read the submission's
 * journal in the statement's snapshot. Two of them for one submission at once (a request and
 * recovery) each see the reservation outstanding and no charge: on Postgres (READ COMMITTED) both
 * release it and both charge.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { sql } from "drizzle-orm";
import { openDatabase, type Database } from "../../src/store/db.ts";
import { SubmissionsRepo } from "../../src/store/submissions.repo.ts";
import type { Outcome } from "../../src/store/types.ts";

const URL = process.env.TEST_DATABASE_URL;
const schema = `review_${crypto.randomUUID().replace(/-/g, "").slice(0, 12)}`;
const dir = mkdtempSync(join(tmpdir(), "review-"));
let database: Database;
let repo: SubmissionsRepo;

beforeAll(async () => {
  if (!URL) return;
  database = await openDatabase({ url: URL, dataDir: dir, schema });
  repo = new SubmissionsRepo(database.db);
});
afterAll(async () => {
  if (database) await database.close();
  if (URL) {
    const c = postgres(URL, { max: 1, onnotice: () => {} });
    await c.unsafe(`drop schema if exists "${schema}" cascade`);
    await c.end();
  }
  rmSync(dir, { recursive: true, force: true });
});

async function journal(projectId: string): Promise<bigint> {
  const r = await database.db.execute(
    sql`select coalesce(sum(amount), 0)::text as s from credit_journal where project_id = ${projectId}`,
  );
  const rows = Array.isArray(r) ? r : (r as unknown as { rows: { s: string }[] }).rows;
  return BigInt((rows[0] as { s: string }).s);
}

async function intent(projectId: string): Promise<string> {
  const id = crypto.randomUUID();
  await repo.recordIntent(
    {
      id,
      network: "mainnet",
      innerHash: crypto.randomUUID(),
      hash: crypto.randomUUID(),
      caller: `project:${projectId}`,
      projectId,
      maxFee: 200_000n,
      envelope: "x",
      sentLedger: 1,
      feeBid: 100n,
      channel: "GCHANNEL",
    },
    200_000n,
  );
  return id;
}

const ok: Outcome = { kind: "success", result: { hash: "h", feePaid: "200", ledger: 1, resultXdr: "" } };

test.skipIf(!URL)(
  "two settlements of one submission at once (request + recovery) journal the release and the charge once",
  async () => {
    const projectId = crypto.randomUUID();
    await database.db.execute(sql`insert into projects (id, name) values (${projectId}, 'review')`);
    const trials = 20;
    for (let i = 0; i < trials; i++) {
      const id = await intent(projectId);
      await Promise.all([repo.recordOutcome(id, ok, 200n, true), repo.recordOutcome(id, ok, 200n, true)]);
    }
    // each submission: reserve -200000, release +200000, charge -200 => net -200
    expect(await journal(projectId)).toBe(-200n * BigInt(trials));
  },
);

test.skipIf(!URL)("recovery's release racing a request's settlement gives the reservation back once", async () => {
  const projectId = crypto.randomUUID();
  await database.db.execute(sql`insert into projects (id, name) values (${projectId}, 'review')`);
  const trials = 20;
  for (let i = 0; i < trials; i++) {
    const id = await intent(projectId);
    await Promise.all([repo.recordOutcome(id, ok, 200n, true), repo.release(id)]);
  }
  expect(await journal(projectId)).toBe(-200n * BigInt(trials));
});
