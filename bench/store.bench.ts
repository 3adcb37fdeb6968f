/**
 * `bun run bench:store`: what one ledger's worth of submissions costs the database. N intents with
 * credit reservations are written at once, then their N outcomes (release and charge journaled,
 * the project's totals kept) at once, as the relay does when a ledger holding them closes; each
 * answer waits for its batch. Prints the time to write the N intents, to record that the network
 * accepted them (each submission submitted: a status change, its event) and to settle the N
 * outcomes, per round. On Postgres when BENCH_DATABASE_URL (or TEST_DATABASE_URL) is set, else on
 * PGlite. BENCH_OUTCOMES (default 200,800), BENCH_ROUNDS (default 5).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { openDatabase } from "../src/store/db.ts";
import { SubmissionsRepo } from "../src/store/submissions.repo.ts";

const url = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
const sizes = (process.env.BENCH_OUTCOMES ?? "200,800").split(",").map(Number);
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const dataDir = mkdtempSync(join(tmpdir(), "bench-store-"));
const schema = `bench_store_${crypto.randomUUID().replaceAll("-", "").slice(0, 10)}`;
const d = await openDatabase({ url, dataDir, schema: url ? schema : undefined });
const RESULT = "AAAAAAAAAGQAAAAAAAAAAQAAAAAAAAABAAAAAAAAAAA=";
try {
  await d.db.execute(sql`insert into projects (id, name) values ('bench', 'bench')`);
  await d.db.execute(
    sql`insert into credit_journal (project_id, kind, amount) values ('bench', 'topup', ${10n ** 15n})`,
  );
  const repo = new SubmissionsRepo(d.db, url ? 3 : 1);
  console.log(`database: ${url ? "postgres" : "pglite"}`);
  for (const n of sizes) {
    const times: string[] = [];
    const intentTimes: string[] = [];
    const acceptTimes: string[] = [];
    for (let r = 0; r < rounds; r++) {
      const ids = Array.from({ length: n }, () => crypto.randomUUID());
      const i0 = performance.now();
      await Promise.all(
        ids.map((id) =>
          repo.recordIntent(
            {
              id,
              network: "mainnet",
              innerHash: `${id}:inner`,
              hash: `${id}:outer`,
              caller: "project:bench",
              projectId: "bench",
              maxFee: 20_000n,
              envelope: "x".repeat(300),
              sentLedger: 1,
              feeBid: 100n,
              channel: "GCHANNEL",
            },
            20_000n,
          ),
        ),
      );
      intentTimes.push((performance.now() - i0).toFixed(1));
      const a0 = performance.now();
      await Promise.all(ids.map((id) => repo.recordAccepted(id, `${id}:outer`, "PENDING")));
      acceptTimes.push((performance.now() - a0).toFixed(1));
      const t0 = performance.now();
      const result = { hash: "", feePaid: "100", ledger: 2, resultXdr: RESULT };
      await Promise.all(
        ids.map((id) => repo.recordOutcome(id, { kind: "success", result: { ...result, hash: id } }, 100n, true)),
      );
      times.push((performance.now() - t0).toFixed(1));
    }
    console.log(`${n} intents written in (ms, per round): ${intentTimes.join(", ")}`);
    console.log(`${n} acceptances recorded in (ms, per round): ${acceptTimes.join(", ")}`);
    console.log(`${n} outcomes settled in (ms, per round): ${times.join(", ")}`);
  }
} finally {
  if (url) await d.db.execute(sql.raw(`drop schema "${schema}" cascade`));
  await d.close();
  rmSync(dataDir, { recursive: true, force: true });
}
