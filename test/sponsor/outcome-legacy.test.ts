/**
 * Outcomes stored before they were domain data (`{ status, body }`, the HTTP answer) replay
 * exactly as they were first answered: through an idempotency key and through the inner-hash rule;
 * and migration 0005 turns such a row's outcome_status into outcome_kind.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/pglite";
import { migrate } from "drizzle-orm/pglite/migrator";
import { PGlite } from "@electric-sql/pglite";
import { readOutcome } from "../../src/store/outcome-codec.ts";
import { bodyHash } from "../../src/features/sponsor/idempotency.ts";
import { SubmissionsRepo } from "../../src/store/submissions.repo.ts";
import { emptyPglite } from "../support/pglite.ts";
import { startTestRelay, type TestRelay } from "../support/relay.ts";

const failed = {
  status: 422,
  body: {
    code: "SUBMISSION_FAILED",
    message: "the network rejected the transaction: tx_bad_seq",
    details: { result_codes: { transaction: "tx_bad_seq" }, hash: "ab".repeat(32) },
    headers: {},
  },
};

test("an old-shape outcome reads as the same success or failure", () => {
  const result = { hash: "cd".repeat(32), feePaid: "200", ledger: 7, resultXdr: "AAAA" };
  expect(readOutcome({ status: 200, body: result })).toEqual({ kind: "success", result });
  expect(readOutcome(failed)).toEqual({
    kind: "failure",
    error: { code: "SUBMISSION_FAILED", message: failed.body.message, details: failed.body.details },
  });
  const limited = { status: 503, body: { code: "NETWORK_UNAVAILABLE", message: "m", headers: { "Retry-After": "5" } } };
  expect(readOutcome(limited)).toEqual({
    kind: "failure",
    error: { code: "NETWORK_UNAVAILABLE", message: "m", retryAfter: 5 },
  });
  const current = { kind: "success", result } as const;
  expect(readOutcome(current)).toEqual(current);
  expect(readOutcome(null)).toBeNull();
});

let r: TestRelay;
beforeAll(async () => {
  r = await startTestRelay();
});
afterAll(() => r.stop());

test("an old-shape idempotency record replays with its status and body", async () => {
  const tx = (await r.payment(await r.funded())).toEnvelope().toXDR("base64");
  const project = await r.project();
  const key = `legacy-${crypto.randomUUID()}`;
  const hash = bodyHash({ transaction: tx, operation: undefined, network: "testnet" });
  await r.database.execute(
    sql`insert into idempotency_keys (scope, key, body_hash, outcome, expires_at)
        values (${`project:${project.id}`}, ${key}, ${hash}, ${JSON.stringify(failed)}::jsonb, now() + interval '1 day')`,
  );
  const res = await r.post(
    "/v1/sponsor",
    { transaction: tx, network: "testnet" },
    {
      "X-Idempotency-Key": key,
      "X-API-Key": project.testKey,
    },
  );
  expect(res.status).toBe(422);
  expect(res.headers.get("idempotent-replayed")).toBe("true");
  const { headers: _, ...body } = failed.body;
  expect(res.body).toEqual({ error: { ...body, requestId: res.headers.get("x-request-id") } });
});

test("an old-shape submission outcome answers a request for the same inner transaction", async () => {
  const tx = await r.payment(await r.funded());
  const innerHash = Buffer.from(tx.hash()).toString("hex");
  const result = {
    hash: "ef".repeat(32),
    feePaid: "200",
    ledger: 3,
    resultXdr: "AAAAAAAAAMgAAAAAAAAAAQAAAAAAAAABAAAAAAAAAAA=",
  };
  await r.database.execute(
    sql`insert into submissions (id, network, inner_hash, hash, caller, max_fee, outcome_kind, outcome, fee_charged)
        values (${crypto.randomUUID()}, 'testnet', ${innerHash}, ${result.hash}, 'ip:127.0.0.1', 200, 'success',
                ${JSON.stringify({ status: 200, body: result })}::jsonb, 200)`,
  );
  const res = await r.post("/v1/sponsor", { transaction: tx.toEnvelope().toXDR("base64"), network: "testnet" });
  // answered as it was, with the identity every answer now carries
  expect([res.status, res.body]).toEqual([200, { ...result, innerHash, status: "success" }]);
});

test("migration 0005 keeps an old row's outcome: outcome_status 200 becomes outcome_kind success", async () => {
  const dir = mkdtempSync(join(tmpdir(), "legacy-"));
  try {
    const before = join(dir, "before");
    cpSync(join(import.meta.dir, "../../drizzle"), before, { recursive: true });
    const journalPath = join(before, "meta/_journal.json");
    const journal = JSON.parse(readFileSync(journalPath, "utf8")) as { entries: { tag: string }[] };
    journal.entries = journal.entries.filter((e) => e.tag < "0005");
    writeFileSync(journalPath, JSON.stringify(journal));
    await emptyPglite(join(dir, "db")); // a new database (initdb), copied
    const client = new PGlite(join(dir, "db"));
    const db = drizzle(client);
    await migrate(db, { migrationsFolder: before });
    const id = crypto.randomUUID();
    await db.execute(
      sql`insert into submissions (id, network, inner_hash, hash, caller, max_fee, outcome_status, outcome, fee_charged)
          values (${id}, 'testnet', 'inner', 'outer', 'ip:1', 200, 422, ${JSON.stringify(failed)}::jsonb, 100)`,
    );
    await migrate(db, { migrationsFolder: join(import.meta.dir, "../../drizzle") });
    const row = await new SubmissionsRepo(db).byInnerHash("testnet", "inner");
    expect(row?.outcome).toEqual(readOutcome(failed));
    const kinds = await db.execute(sql`select outcome_kind from submissions where id = ${id}`);
    expect((kinds as unknown as { rows: { outcome_kind: string }[] }).rows[0]?.outcome_kind).toBe("failure");
    await client.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
