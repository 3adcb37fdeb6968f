/**
 * Credits on mainnet (sr_live_ keys): the journal (topup, adjustment, reserve, release, charge) is
 * the balance, and reservations stop concurrent overspending. On embedded PGlite always, and on
 * Postgres too (with and without prepared statements) when TEST_DATABASE_URL is set. That credits
 * survive a restart: relay-restart.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectSettled, journal, projectView } from "../support/credits.ts";
import { expectError, HASH, type Res, sum, until, xdrOf } from "../support/harness.ts";
import { mainnetOf } from "../support/mainnet.ts";
import { databaseEnv, storeKinds, startTestRelay, type TestRelay } from "../support/relay.ts";

/** The reservation of a 1-operation classic transaction: MAX_FEE_RATE (100,000) x (1 op + the fee-bump). */
const ONE_OP_RESERVATION = 200_000n;

describe.each(storeKinds)("credits (%s)", (kind) => {
  let r: TestRelay;
  let main: ReturnType<typeof mainnetOf>;
  beforeAll(async () => {
    r = await startTestRelay(databaseEnv(kind));
    main = mainnetOf(r);
  });
  afterAll(() => r.stop());

  test("exact accounting: balance = journal = top-ups less what the network charged", async () => {
    const p = await r.project();
    const topup = await r.admin("POST", `/projects/${p.id}/credits`, { amount: "1000000", reference: "inv-1" });
    expect(topup.status).toBe(200);
    expect(topup.body).toEqual({ creditBalance: "1000000" });

    const [a, b, c, poor, early] = await main.fund(5);
    // three payments that succeed (concurrently: 3 x 200,000 reserved out of 1,000,000)
    const ok = await Promise.all([a!, b!, c!].map(async (kp) => main.sponsor(p.liveKey, await main.payment(kp))));
    for (const res of ok) {
      expect(res.status).toBe(200);
      expect(res.body.hash).toMatch(HASH);
    }
    // applied and failed: more than the account has; the network charges the fee
    const failed = await main.sponsor(p.liveKey, await main.payment(poor!, { amount: "20000" }));
    expectError(failed, 422, "SUBMISSION_FAILED");
    expect(failed.body.error.details.result_codes).toEqual({
      transaction: "tx_failed",
      operations: ["op_underfunded"],
    });
    expect(BigInt(failed.body.error.details.feePaid) > 0n).toBe(true);
    // rejected before inclusion: a future sequence number; nothing is charged
    const rejected = await main.sponsor(p.liveKey, await main.payment(early!, { seqOffset: -1n }));
    expectError(rejected, 422, "SUBMISSION_FAILED");
    expect(rejected.body.error.details.result_codes).toEqual({ transaction: "tx_bad_seq" });
    expect(rejected.body.error.details.feePaid).toBeUndefined();
    const rejectedHash: string = rejected.body.error.details.hash;
    expect(rejectedHash).toMatch(HASH);
    expect(await main.feeCharged(rejectedHash)).toBeNull();

    // what the network charged, from each transaction's result
    const charged = new Map<string, bigint>();
    for (const res of ok) {
      const fee = await main.feeCharged(res.body.hash);
      expect(fee).toBe(BigInt(res.body.feePaid));
      charged.set(res.body.hash, fee!);
    }
    const failedFee = await main.feeCharged(failed.body.error.details.hash);
    expect(failedFee).toBe(BigInt(failed.body.error.details.feePaid));
    charged.set(failed.body.error.details.hash, failedFee!);

    const { entries, balance } = await expectSettled(r, p.id);
    expect(balance).toBe(1_000_000n - sum([...charged.values()]));
    expect(entries).toHaveLength(1 + 5 + 5 + 4); // topup, 5 reserves and releases, 4 charges
    const top = entries.filter((e) => e.kind === "topup");
    expect(top).toHaveLength(1);
    expect(top[0]).toMatchObject({ amount: "1000000", reference: "inv-1", reason: null, txHash: null });
    expect(entries[entries.length - 1]!.kind).toBe("topup"); // the oldest
    // every reservation is the 1-operation maximum
    for (const e of entries.filter((e) => e.kind === "reserve"))
      expect(e.amount).toBe((-ONE_OP_RESERVATION).toString());
    // one charge per transaction in the ledger, with its hash and the fee it was charged
    const charges = entries.filter((e) => e.kind === "charge");
    expect(new Set(charges.map((e) => e.txHash))).toEqual(new Set(charged.keys()));
    for (const e of charges) expect(BigInt(e.amount)).toBe(-charged.get(e.txHash!)!);
    // the rejected transaction: reserved and released, never charged
    expect(
      entries
        .filter((e) => e.txHash === rejectedHash)
        .map((e) => e.kind)
        .sort(),
    ).toEqual(["release", "reserve"]);
  });

  test("a transaction one project's submission was rejected for stays that project's: another's is refused, paying nothing", async () => {
    const [kp] = await main.fund(1);
    const a = await r.project({ credits: 1_000_000n });
    const b = await r.project({ credits: 1_000_000n });
    const tx1 = await main.payment(kp!);
    const tx2 = await main.payment(kp!, { seqOffset: 1n }); // not valid until tx1 is in
    expectError(await main.sponsor(a.liveKey, tx2), 422, "SUBMISSION_FAILED"); // rejected before inclusion: A pays nothing
    const first = await main.sponsor(a.liveKey, tx1);
    expect(first.status).toBe(200);
    // the same inner transaction, now valid, through B: its record is A's, so B does not send it
    const other = await main.sponsor(b.liveKey, tx2);
    expectError(other, 403, "FORBIDDEN");
    expect(other.body.error.details.reason).toBe("another_project");
    const second = await main.sponsor(a.liveKey, tx2); // A sends it again: its own, now valid
    expect(second.status).toBe(200);
    // A's journal: its submissions' reserves all released, the two landed ones charged; B's: nothing
    await expectSettled(r, b.id);
    const entries = await journal(r, a.id, 100);
    const charges = entries.filter((e) => e.kind === "charge").map((e) => [e.txHash, e.amount]);
    expect(charges.sort()).toEqual(
      [
        [first.body.hash, `-${first.body.feePaid}`],
        [second.body.hash, `-${second.body.feePaid}`],
      ].sort(),
    );
    expect(sum(entries.filter((e) => e.kind !== "charge" && e.kind !== "topup").map((e) => BigInt(e.amount)))).toBe(0n);
    expect((await journal(r, b.id, 100)).filter((e) => e.kind !== "topup")).toEqual([]);
    const spent = BigInt(first.body.feePaid) + BigInt(second.body.feePaid);
    expect((await projectView(r, a.id)).creditBalance).toBe((1_000_000n - spent).toString());
    expect((await projectView(r, b.id)).creditBalance).toBe("1000000");
  });

  test("INSUFFICIENT_CREDITS on mainnet without credits; testnet needs none", async () => {
    const p = await r.project();
    const [user] = await main.fund(1);
    const tx = await main.payment(user!);
    const res = await main.sponsor(p.liveKey, tx);
    expectError(res, 402, "INSUFFICIENT_CREDITS");
    expect(res.body.error.details).toEqual({ balance: "0", required: ONE_OP_RESERVATION.toString() });

    // one stroop short of the reservation is not enough either
    const short = await r.admin("POST", `/projects/${p.id}/credits`, { amount: (ONE_OP_RESERVATION - 1n).toString() });
    expect(short.status).toBe(200);
    const again = await main.sponsor(p.liveKey, tx);
    expectError(again, 402, "INSUFFICIENT_CREDITS");
    expect(again.body.error.details).toEqual({
      balance: (ONE_OP_RESERVATION - 1n).toString(),
      required: ONE_OP_RESERVATION.toString(),
    });
    expect(await main.feeCharged(Buffer.from(tx.hash()).toString("hex"))).toBeNull(); // never sent

    // the same project's sr_test_ key on testnet: no credits involved
    const testUser = await r.funded();
    const ok = await r.post(
      "/v1/sponsor",
      { transaction: xdrOf(await r.payment(testUser)), network: "testnet" },
      { "x-api-key": p.testKey },
    );
    expect(ok.status).toBe(200);
    const journalOnly = await expectSettled(r, p.id); // the testnet fee touched no credits
    expect(journalOnly.balance).toBe(ONE_OP_RESERVATION - 1n);
    expect(journalOnly.entries.map((e) => e.kind)).toEqual(["topup"]);

    // one more stroop and the mainnet payment is covered
    const last = await r.admin("POST", `/projects/${p.id}/credits`, { amount: "1" });
    expect(last.body).toEqual({ creditBalance: ONE_OP_RESERVATION.toString() });
    const paid = await main.sponsor(p.liveKey, tx);
    expect(paid.status).toBe(200);
    const { entries, balance } = await expectSettled(r, p.id);
    expect(balance).toBe(ONE_OP_RESERVATION - BigInt(paid.body.feePaid));
    expect(entries.map((e) => e.kind)).toEqual(["charge", "release", "reserve", "topup", "topup"]);
  });

  test("adjustments: negative ones need a reason and may not overdraw; zero and non-numbers are invalid", async () => {
    const p = await r.project({ credits: 500_000n });
    const credits = (body: unknown) => r.admin("POST", `/projects/${p.id}/credits`, body);

    const noReason = await credits({ amount: "-1000" });
    expectError(noReason, 400, "VALIDATION_ERROR");
    expect(noReason.body.error.details.field).toBe("reason");

    const down = await credits({ amount: "-1000", reason: "refund of a duplicate top-up" });
    expect(down.status).toBe(200);
    expect(down.body).toEqual({ creditBalance: "499000" });

    const overdraw = await credits({ amount: "-499001", reason: "too much" });
    expectError(overdraw, 402, "INSUFFICIENT_CREDITS");
    expect(overdraw.body.error.details).toEqual({ balance: "499000", required: "499001" });

    for (const amount of ["0", "abc", "-0", "1.5", "", "9999999999999999999", "-9999999999999999999"]) {
      const bad = await credits({ amount, reason: "invalid" });
      expectError(bad, 400, "VALIDATION_ERROR");
      expect(bad.body.error.details.field).toBe("amount");
    }
    expectError(await credits({ amount: 5 }), 400, "VALIDATION_ERROR"); // a number, not a string
    expectError(await r.admin("GET", `/projects/${p.id}/credits?cursor=99999999999999999999`), 400, "VALIDATION_ERROR"); // beyond bigint: no 500

    const up = await credits({ amount: "2500", reason: "goodwill" });
    expect(up.status).toBe(200);
    expect(up.body).toEqual({ creditBalance: "501500" });
    const all = await credits({ amount: "-501500", reason: "closing the account" }); // exactly the balance
    expect(all.status).toBe(200);
    expect(all.body).toEqual({ creditBalance: "0" });

    const { entries, balance } = await expectSettled(r, p.id);
    expect(balance).toBe(0n);
    expect(entries.map((e) => [e.kind, e.amount, e.reason])).toEqual([
      ["adjustment", "-501500", "closing the account"],
      ["adjustment", "2500", "goodwill"],
      ["adjustment", "-1000", "refund of a duplicate top-up"],
      ["topup", "500000", null],
    ]);
  });

  test("concurrent requests cannot overspend: exactly N of M are sponsored", async () => {
    const N = 4;
    const M = 12;
    const p = await r.project();
    const users = await main.fund(M);
    const txs = await Promise.all(users.map((u) => main.payment(u)));

    // learn what one payment reserves
    const probe = await main.sponsor(p.liveKey, txs[0]!);
    expectError(probe, 402, "INSUFFICIENT_CREDITS");
    const required = BigInt(probe.body.error.details.required);
    expect(required).toBe(ONE_OP_RESERVATION);
    const topup = await r.admin("POST", `/projects/${p.id}/credits`, { amount: (BigInt(N) * required).toString() });
    expect(topup.status).toBe(200);

    // no ledger closes while the requests come in: no reservation can be settled (and its rest
    // released) before every request has either reserved or been refused
    const results: (Res | undefined)[] = new Array(M);
    let refused = 0;
    main.net.stop();
    let pending: Promise<Res>[];
    try {
      pending = txs.map((tx, i) =>
        main.sponsor(p.liveKey, tx).then((res) => {
          results[i] = res;
          if (res.status === 402) refused++;
          return res;
        }),
      );
      await until("the refusals and the queued reservations", () => refused >= M - N && main.net.queue.size >= N, 5000);
      // in flight: the N reservations are the whole balance, journaled
      const view = await projectView(r, p.id);
      expect(view.creditReserved).toBe((BigInt(N) * required).toString());
      expect(view.creditBalance).toBe("0");
      expect(sum((await journal(r, p.id)).map((e) => BigInt(e.amount)))).toBe(0n);
    } finally {
      main.net.start();
    }
    await Promise.all(pending);

    const statuses = results.map((res) => res!.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(N);
    expect(statuses.filter((s) => s === 402)).toHaveLength(M - N);
    for (const res of results) {
      if (res!.status !== 402) continue;
      expectError(res!, 402, "INSUFFICIENT_CREDITS");
      expect(res!.body.error.details.required).toBe(required.toString());
      expect(BigInt(res!.body.error.details.balance) < required).toBe(true);
    }
    const hashes = results.filter((res) => res!.status === 200).map((res) => res!.body.hash as string);
    const fees = await Promise.all(hashes.map(async (h) => (await main.feeCharged(h))!));
    const { entries, balance } = await expectSettled(r, p.id);
    expect(balance).toBe(BigInt(N) * required - sum(fees));
    expect(entries.filter((e) => e.kind === "reserve")).toHaveLength(N); // refusals journal nothing
    expect(new Set(entries.filter((e) => e.kind === "charge").map((e) => e.txHash))).toEqual(new Set(hashes));
  });
});
