/**
 * `credits.low`: the credit journal's trigger writes one event when a project's balance falls below
 * its policy's lowBalanceAlert, none while it stays below, and one again only after a top-up has
 * lifted it back to or above the alert. The balance is driven with the admin credits API; the
 * events are read from the table and received by a webhook (verified with standardwebhooks).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { expectError, expectOk, until } from "../support/harness.ts";
import { mainnetOf, sqlRows } from "../support/mainnet.ts";
import { databaseEnv, databaseKinds, startTestRelay, type TestRelay } from "../support/relay.ts";
import { type Receiver, startReceiver } from "../support/webhook-receiver.ts";

describe.each(databaseKinds)("credits.low (%s)", (kind) => {
  let r: TestRelay;
  const receivers: Receiver[] = [];
  beforeAll(async () => {
    r = await startTestRelay({ ...databaseEnv(kind), WEBHOOK_ALLOW_PRIVATE: "true", WEBHOOK_POLL_MS: "50" });
  });
  afterAll(async () => {
    await r.stop();
    for (const x of receivers) x.stop();
  });

  const credit = async (projectId: string, amount: string, reason?: string) => {
    const res = await r.admin("POST", `/projects/${projectId}/credits`, { amount, ...(reason ? { reason } : {}) });
    expectOk(res);
    return res.body.creditBalance as string;
  };
  const spend = (projectId: string, amount: number) => credit(projectId, `-${amount}`, "spent");
  const lowEvents = (projectId: string) =>
    sqlRows<{ data: string; network: string }>(
      r,
      sql`select data::text as data, network from events where type = 'credits.low' and project_id = ${projectId} order by id`,
    ).then((rows) => rows.map((x) => ({ ...JSON.parse(x.data), network: x.network })));

  test("the policy field: shown, validated, removable", async () => {
    const p = await r.project();
    const set = await r.admin("PATCH", `/projects/${p.id}`, { policy: { lowBalanceAlert: "500000" } });
    expectOk(set);
    expect(set.body.policy.lowBalanceAlert).toBe("500000");
    const bad = await r.admin("PATCH", `/projects/${p.id}`, { policy: { lowBalanceAlert: "5.5" } });
    expectError(bad, 400, "VALIDATION_ERROR");
    expect(bad.body.error.details.field).toBe("policy.lowBalanceAlert");
    const unset = await r.admin("PATCH", `/projects/${p.id}`, { policy: { lowBalanceAlert: null } });
    expect(unset.body.policy.lowBalanceAlert).toBeNull();
    // the anonymous relay has no credits: ANONYMOUS_POLICY does not take it (config.test.ts checks the others)
  });

  test("once below, not again while below, again after a top-up above and a new fall", async () => {
    const rx = startReceiver();
    receivers.push(rx);
    const p = await r.project({ policy: { lowBalanceAlert: "500000" } });
    const hook = await r.admin("POST", `/projects/${p.id}/webhooks`, { url: rx.url, events: ["credits.low"] });
    expectOk(hook, 201);
    rx.secret = hook.body.secret;

    expect(await credit(p.id, "1000000")).toBe("1000000");
    expect(await lowEvents(p.id)).toEqual([]);
    expect(await spend(p.id, 400_000)).toBe("600000");
    expect(await lowEvents(p.id)).toEqual([]);
    expect(await spend(p.id, 200_000)).toBe("400000"); // below: the event
    const first = { projectId: p.id, balance: "400000", lowBalanceAlert: "500000", network: "mainnet" };
    expect(await lowEvents(p.id)).toEqual([first]);
    await spend(p.id, 100_000); // further spending: nothing
    await credit(p.id, "50000"); // a top-up that leaves it below: nothing, and no re-arming
    await spend(p.id, 10_000);
    expect(await lowEvents(p.id)).toEqual([first]);
    expect(await credit(p.id, "160000")).toBe("500000"); // back to the alert exactly: re-armed
    expect(await lowEvents(p.id)).toEqual([first]);
    expect(await spend(p.id, 1)).toBe("499999"); // a new fall
    const second = { projectId: p.id, balance: "499999", lowBalanceAlert: "500000", network: "mainnet" };
    expect(await lowEvents(p.id)).toEqual([first, second]);

    await until("both delivered", () => rx.received.length >= 2);
    await Bun.sleep(300);
    expect(rx.received).toHaveLength(2);
    for (const x of rx.received) expect(x.error).toBeNull();
    expect(rx.received.map((x) => x.verified?.type)).toEqual(["credits.low", "credits.low"]);
    expect(rx.received.map((x) => x.verified?.data)).toEqual([
      { projectId: p.id, balance: "400000", lowBalanceAlert: "500000" },
      { projectId: p.id, balance: "499999", lowBalanceAlert: "500000" },
    ]);
  });

  test("concurrent spending across the alert: exactly one event", async () => {
    const p = await r.project({ policy: { lowBalanceAlert: "500000" } });
    await credit(p.id, "600000");
    await Promise.all(Array.from({ length: 20 }, () => spend(p.id, 10_000)));
    const got = await lowEvents(p.id);
    expect(got).toHaveLength(1);
    expect(BigInt(got[0].balance) < 500_000n).toBe(true);
    expect(BigInt(got[0].balance) >= 400_000n).toBe(true);
  });

  test("mainnet sponsoring: a reservation that takes the balance below alerts once; its release does not re-arm", async () => {
    const main = mainnetOf(r);
    // a 1-operation payment reserves 200,000 (MAX_FEE_RATE x 2), then is charged its fee (300 here)
    const p = await r.project({ policy: { lowBalanceAlert: "250000" }, credits: 400_000n });
    const [a, b] = await main.fund(2);
    expectOk(await main.sponsor(p.liveKey, await main.payment(a!)));
    let got = await lowEvents(p.id);
    expect(got).toEqual([{ projectId: p.id, balance: "200000", lowBalanceAlert: "250000", network: "mainnet" }]);
    expectOk(await main.sponsor(p.liveKey, await main.payment(b!))); // below again while reserved: no event
    got = await lowEvents(p.id);
    expect(got).toHaveLength(1);
  });

  test("a project without an alert: no event, whatever its balance", async () => {
    const p = await r.project();
    await credit(p.id, "1000");
    await spend(p.id, 1000);
    expect(await lowEvents(p.id)).toEqual([]);
  });

  test("a new alert is checked afresh: the next entry under it alerts", async () => {
    const p = await r.project({ policy: { lowBalanceAlert: "500" } });
    await credit(p.id, "1000");
    await spend(p.id, 600); // 400 < 500
    expect(await lowEvents(p.id)).toHaveLength(1);
    expectOk(await r.admin("PATCH", `/projects/${p.id}`, { policy: { lowBalanceAlert: "300" } }));
    await spend(p.id, 50); // 350: above the new alert
    expect(await lowEvents(p.id)).toHaveLength(1);
    await spend(p.id, 100); // 250 < 300
    const got = await lowEvents(p.id);
    expect(got).toHaveLength(2);
    expect(got[1]).toMatchObject({ balance: "250", lowBalanceAlert: "300" });
  });
});
