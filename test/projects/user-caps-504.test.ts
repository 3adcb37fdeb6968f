/**
 * A transaction answered 504 (its outcome not known yet) counts against its end user's day until it
 * is known to have failed: the user at the cap is refused meanwhile, the landed transaction stays
 * counted with what the network charged, and a retry of it is answered from its record.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { expectError, until, xdrOf } from "../support/harness.ts";
import { AFTER_504_ENV, startTestRelay, type TestRelay } from "../support/relay.ts";

let r: TestRelay;
beforeAll(async () => {
  r = await startTestRelay(AFTER_504_ENV);
});
afterAll(() => r?.stop());

const usage = async (projectId: string, account: string) =>
  (await r.admin("GET", `/projects/${projectId}/users/${account}`)).body;
const capDay = async (projectId: string, account: string) =>
  (await r.database.execute(
    `select transactions, fee_held::text as held, fee_charged::text as charged from user_days
     where project_id = '${projectId}' and account = '${account}'`,
  )) as unknown;

test("a 504'd transaction keeps its user's count: the next is 429; landed, it stays counted once, charged what the network charged", async () => {
  const p = await r.project({ policy: { perUser: { maxTransactionsPerDay: 1 } } });
  const user = await r.funded();
  const headers = { "x-api-key": p.testKey };
  const first = { transaction: xdrOf(await r.payment(user)), network: "testnet" };
  const answered = await r.post("/v1/sponsor", first, headers);
  expectError(answered, 504, "SUBMISSION_TIMEOUT"); // no ledger closes by itself
  // still counted: another transaction of the user's is over the cap
  const second = await r.post(
    "/v1/sponsor",
    { transaction: xdrOf(await r.payment(user, { seqOffset: 1n })), network: "testnet" },
    headers,
  );
  expectError(second, 429, "USER_LIMIT_EXCEEDED");
  expect((await usage(p.id, user.publicKey())).transactions).toBe(1); // in flight
  r.close(); // it lands; recovery records and settles it
  await until("recovery recorded it", async () => (await usage(p.id, user.publicKey())).feeCharged !== "0", 20_000, 50);
  const day = await usage(p.id, user.publicKey());
  expect(day.transactions).toBe(1);
  // a retry is answered from its record (not refused by the cap), and counts nothing more
  const retry = await r.post("/v1/sponsor", first, headers);
  expect(retry.status).toBe(200);
  expect(retry.body.feePaid).toBe(day.feeCharged);
  await Bun.sleep(300);
  expect(await usage(p.id, user.publicKey())).toMatchObject({ transactions: 1, feeCharged: day.feeCharged });
  const cap = (await capDay(p.id, user.publicKey())) as { rows?: unknown[] } | unknown[];
  const row = (Array.isArray(cap) ? cap : (cap as { rows: unknown[] }).rows)[0] as Record<string, unknown>;
  expect(Number(row.transactions)).toBe(1);
  expect(row.held).toBe("0");
  expect(row.charged).toBe(day.feeCharged);
});
