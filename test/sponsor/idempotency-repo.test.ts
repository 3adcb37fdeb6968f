/**
 * The idempotency keys' repository writes the claims and completions of requests that arrive
 * together in one statement each: every request still gets its own answer. Claims of new keys, of a
 * key taken (its record), of an expired key (claimed again), then completions and releases mixed in
 * one batch. PGlite, and Postgres (with and without prepared statements) when there is one.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { IdempotencyRepo } from "../../src/store/idempotency.repo.ts";
import type { Outcome } from "../../src/store/types.ts";
import { databaseEnv, storeKinds, startTestRelay, type TestRelay } from "../support/relay.ts";

const TTL = 60_000;
const ok = (n: number): Outcome => ({
  kind: "success",
  result: { hash: n.toString(16).padStart(64, "0"), feePaid: "200", ledger: n, resultXdr: "AAAA" },
});

describe.each(storeKinds)("idempotency keys written in batches (%s)", (kind) => {
  let r: TestRelay;
  beforeAll(async () => {
    r = await startTestRelay(databaseEnv(kind));
  });
  afterAll(() => r.stop());

  test("each claim, completion and release of one batch is answered and written as if alone", async () => {
    const repo = new IdempotencyRepo(r.database as never);
    const scope = `batch-${crypto.randomUUID()}`;
    const keys = Array.from({ length: 20 }, (_, i) => `k${i}`);
    await repo.claimKey(scope, "taken", "h-taken", TTL);
    await repo.complete(scope, "taken", ok(1));
    await repo.claimKey(scope, "expired", "h-old", TTL);
    await r.database.execute(
      sql`update idempotency_keys set expires_at = now() - interval '1 second' where scope = ${scope} and key = 'expired'`,
    );

    // one turn: a batch of 22 claims
    const claims = await Promise.all([
      ...keys.map((k) => repo.claimKey(scope, k, `h-${k}`, TTL)),
      repo.claimKey(scope, "taken", "h-other", TTL),
      repo.claimKey(scope, "expired", "h-new", TTL),
    ]);
    expect(claims.slice(0, 20)).toEqual(keys.map(() => null));
    expect(claims[20]).toEqual({ bodyHash: "h-taken", outcome: ok(1) });
    expect(claims[21]).toBeNull(); // an expired record gives way

    // one turn: even keys completed, odd ones released
    await Promise.all(keys.map((k, i) => (i % 2 ? repo.release(scope, k) : repo.complete(scope, k, ok(i + 10)))));
    const again = await Promise.all(keys.map((k) => repo.claimKey(scope, k, `h2-${k}`, TTL)));
    for (const [i, c] of again.entries())
      expect(c).toEqual(i % 2 ? null : { bodyHash: `h-k${i}`, outcome: ok(i + 10) });
    const rows = await r.database.execute(sql`select key, body_hash from idempotency_keys where scope = ${scope}`);
    const list = (Array.isArray(rows) ? rows : (rows as { rows: unknown[] }).rows) as {
      key: string;
      body_hash: string;
    }[];
    expect(list.length).toBe(22);
    expect(list.find((x) => x.key === "expired")?.body_hash).toBe("h-new");
  });
});
