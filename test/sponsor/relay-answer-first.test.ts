/**
 * A sponsored transaction is answered once the network has applied it; its outcome is written to
 * the database right after. Here that write fails (a trigger refuses it): the client still gets the
 * network's answer, the project's view keeps the reservation counted (as the journal does), and
 * recovery, once the write goes through again, settles the submission from the network exactly
 * once: one release, one charge of what the network charged. A retry answers the same.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { expectSettled, journal, projectView } from "../support/credits.ts";
import { HASH, sum, until } from "../support/harness.ts";
import { mainnetOf } from "../support/mainnet.ts";
import { databaseEnv, databaseKinds, startTestRelay, type TestRelay } from "../support/relay.ts";

/** MAX_FEE_RATE (100,000) x (1 operation + the fee-bump). */
const ONE_OP_RESERVATION = 200_000n;
const TOPUP = 1_000_000n;

describe.each(databaseKinds)("answered before the outcome is written (%s)", (kind) => {
  let r: TestRelay;
  beforeAll(async () => {
    // recovery looks at submissions without an outcome 1 s after they were last touched
    r = await startTestRelay({ ...databaseEnv(kind), SUBMISSION_TIMEOUT_MS: "1000", RECOVERY_INTERVAL_MS: "100" });
  });
  afterAll(() => r.stop());

  const refuseOutcomes = async () => {
    await r.database.execute(sql`create or replace function refuse_outcome() returns trigger language plpgsql
      as $$ begin raise exception 'test: outcome writes refused'; end $$`);
    await r.database.execute(sql`create trigger refuse_outcome before update on submissions
      for each row when (new.outcome_kind is not null) execute function refuse_outcome()`);
  };
  const allowOutcomes = () => r.database.execute(sql`drop trigger refuse_outcome on submissions`);

  test("a failed outcome write: the answer stands, recovery settles it once, a retry answers the same", async () => {
    const main = mainnetOf(r);
    const p = await r.project({ credits: TOPUP });
    const [user] = await main.fund(1);
    const tx = await main.payment(user!);

    await refuseOutcomes();
    let first: Awaited<ReturnType<typeof main.sponsor>>;
    try {
      first = await main.sponsor(p.liveKey, tx);
      expect(first.status).toBe(200);
      expect(first.body.hash).toMatch(HASH);
      const fee = await main.feeCharged(first.body.hash);
      expect(fee).toBe(BigInt(first.body.feePaid));

      // not written: the journal still holds the reservation, and so does the view (no charge is counted yet;
      // reserved until recovery settles it)
      const entries = await journal(r, p.id);
      expect(entries.map((e) => e.kind).sort()).toEqual(["reserve", "topup"]);
      const view = await projectView(r, p.id);
      expect(view.creditBalance).toBe((TOPUP - ONE_OP_RESERVATION).toString());
      expect(view.creditBalance).toBe(sum(entries.map((e) => BigInt(e.amount))).toString());
      expect(view.creditReserved).toBe(ONE_OP_RESERVATION.toString());
    } finally {
      await allowOutcomes();
    }

    // recovery finds the transaction on the network and settles it: one release, one charge
    await until("recovery charges it", async () => (await journal(r, p.id)).some((e) => e.kind === "charge"));
    const { entries, balance } = await expectSettled(r, p.id);
    const charged = BigInt(first.body.feePaid);
    expect(balance).toBe(TOPUP - charged);
    expect(entries.map((e) => e.kind).sort()).toEqual(["charge", "release", "reserve", "topup"]);
    expect(entries.find((e) => e.kind === "charge")).toMatchObject({
      amount: (-charged).toString(),
      txHash: first.body.hash,
    });

    // a retry of the same transaction answers what the network did and pays nothing more
    const again = await main.sponsor(p.liveKey, tx);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect((await expectSettled(r, p.id)).balance).toBe(TOPUP - charged);
  });
});
