/**
 * The admin API's input at its limits: a top-up that would take a balance past what its column
 * holds (int8), crafted cursors and limits. Each is a 400 VALIDATION_ERROR naming the field, never
 * a 500, and changes nothing. On embedded PGlite, and on Postgres too when TEST_DATABASE_URL is set.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectError, expectOk } from "../support/harness.ts";
import { databaseEnv, databaseKinds, startTestRelay, type TestRelay } from "../support/relay.ts";

const INT8_MAX = 9_223_372_036_854_775_807n;
const BIG = "999999999999999999";
const cursorOf = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");

describe.each(databaseKinds)("admin input at its limits (%s)", (kind) => {
  let r: TestRelay;
  beforeAll(async () => {
    r = await startTestRelay(databaseEnv(kind));
  });
  afterAll(() => r.stop());

  test("a top-up past the largest balance is 400 (field amount), the balance unchanged; the actor too", async () => {
    const p = await r.project();
    const credits = (amount: string) => r.admin("POST", `/projects/${p.id}/credits`, { amount });
    for (let i = 1; i <= 9; i++)
      expect((await credits(BIG)).body).toEqual({ creditBalance: (BigInt(BIG) * BigInt(i)).toString() });
    const balance = BigInt(BIG) * 9n;
    const tenth = await credits(BIG);
    expectError(tenth, 400, "VALIDATION_ERROR");
    expect(tenth.body.error.details).toMatchObject({ field: "amount", reason: "out_of_range" });
    expect(tenth.body.error.message).toContain(INT8_MAX.toString());
    // exactly up to the most the balance holds is fine; one more is not
    const room = (INT8_MAX - balance).toString();
    expectError(await credits((INT8_MAX - balance + 1n).toString()), 400, "VALIDATION_ERROR");
    const full = await credits(room);
    expectOk(full);
    expect(full.body).toEqual({ creditBalance: INT8_MAX.toString() });
    expectError(await credits("1"), 400, "VALIDATION_ERROR");
    const view = await r.admin("GET", `/projects/${p.id}`);
    expect(view.body.creditBalance).toBe(INT8_MAX.toString());
    const journal = await r.admin("GET", `/projects/${p.id}/credits?limit=500`);
    expect(journal.body.entries).toHaveLength(10);
    // the in-memory balance follows the journal: an adjustment down works from the right figure
    const down = await r.admin("POST", `/projects/${p.id}/credits`, { amount: `-${BIG}`, reason: "test" });
    expect(down.body).toEqual({ creditBalance: (INT8_MAX - BigInt(BIG)).toString() });
  });

  test("GET /v1/admin/transactions: a crafted cursor is 400 (field cursor), never a 500", async () => {
    const bad = [
      cursorOf(["1", "x"]),
      cursorOf(["2026-02-31T00:00:00.000000Z", "x"]),
      cursorOf(["2026-13-01T00:00:00.000000Z", "x"]),
      cursorOf(["99999-01-01T00:00:00.000000Z", "x"]),
      cursorOf(["tomorrow", "x"]),
      cursorOf(["2026-01-01T00:00:00.000000Z"]),
      cursorOf({ a: 1 }),
      cursorOf(null),
      "not-base64-!!",
    ];
    for (const cursor of bad) {
      const res = await r.admin("GET", `/transactions?cursor=${encodeURIComponent(cursor)}`);
      expectError(res, 400, "VALIDATION_ERROR");
      expect(res.body.error.details.field).toBe("cursor");
    }
    expectOk(await r.admin("GET", `/transactions?cursor=${cursorOf(["2026-01-01T00:00:00.000000Z", "x"])}`));
  });

  test("admin limits and cursors out of range are 400 VALIDATION_ERROR, never a 500", async () => {
    // (which field a query's schema refused is said by the input checks: input.plugin.ts)
    const p = await r.project();
    for (const path of [
      "/transactions?limit=0",
      "/transactions?limit=201",
      "/transactions?limit=1.5",
      "/transactions?limit=abc",
      "/transactions?limit=99999999999999999999",
      `/projects/${p.id}/credits?limit=0`,
      `/projects/${p.id}/credits?limit=1.5`,
      `/projects/${p.id}/credits?cursor=-1`,
      `/projects/${p.id}/credits?cursor=99999999999999999999`,
      `/projects/${p.id}/webhooks/${crypto.randomUUID()}/deliveries?limit=501`,
      "/stats?minutes=0",
      "/stats?minutes=1.5",
      "/stats?minutes=99999999999999999999",
      "/channels?network=moon",
    ]) {
      const res = await r.admin("GET", path);
      if (res.status !== 400) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
      expectError(res, 400, "VALIDATION_ERROR");
    }
  });
});
