/**
 * A project's testnet fees have a daily cap of their own by default (testnetDailySpendLimit: 100
 * XLM, PROJECT_TESTNET_DAILY_SPEND_LIMIT), beside dailySpendLimit (both networks, none by default):
 * a test key cannot spend the relay's testnet channels without limit. The project's policy
 * overrides it; null in a patch goes back to the default.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { loadConfig } from "../../src/config.ts";
import { expectError, expectOk, xdrOf } from "../support/harness.ts";
import { startTestRelay, type TestRelay } from "../support/relay.ts";

test("PROJECT_TESTNET_DAILY_SPEND_LIMIT: 100 XLM by default, stroops or none", () => {
  expect(loadConfig({}).PROJECT_TESTNET_DAILY_SPEND_LIMIT).toBe("1000000000");
  expect(loadConfig({ PROJECT_TESTNET_DAILY_SPEND_LIMIT: "none" }).PROJECT_TESTNET_DAILY_SPEND_LIMIT).toBe("none");
  expect(() => loadConfig({ PROJECT_TESTNET_DAILY_SPEND_LIMIT: "1.5" })).toThrow("PROJECT_TESTNET_DAILY_SPEND_LIMIT");
});

describe("the testnet daily spend of a project", () => {
  let r: TestRelay;
  beforeAll(async () => {
    // below one reservation (a 1-operation payment reserves 200,000 stroops): the cap shows at once
    r = await startTestRelay({ PROJECT_TESTNET_DAILY_SPEND_LIMIT: "150000" });
  });
  afterAll(() => r.stop());

  const sponsor = async (testKey: string) =>
    r.post(
      "/v1/sponsor",
      { transaction: xdrOf(await r.payment(await r.funded())), network: "testnet" },
      { "x-api-key": testKey },
    );

  test("the default applies to a test key's testnet transactions: 403 POLICY_VIOLATION testnetDailySpendLimit", async () => {
    const p = await r.project();
    expect((await r.admin("GET", `/projects/${p.id}`)).body.policy).toMatchObject({
      dailySpendLimit: null,
      testnetDailySpendLimit: "150000",
    });
    const res = await sponsor(p.testKey);
    expectError(res, 403, "POLICY_VIOLATION");
    expect(res.body.error.details).toMatchObject({ rule: "testnetDailySpendLimit", limit: "150000", spent: "0" });
    expect(res.body.error.message).toContain("testnet daily spend limit");
  });

  test("the project's policy overrides it; null goes back to the default", async () => {
    const p = await r.project({ policy: { testnetDailySpendLimit: "10000000" } });
    expect((await r.admin("GET", `/projects/${p.id}`)).body.policy.testnetDailySpendLimit).toBe("10000000");
    expectOk(await sponsor(p.testKey));
    const reset = await r.admin("PATCH", `/projects/${p.id}`, { policy: { testnetDailySpendLimit: null } });
    expectOk(reset);
    expect(reset.body.policy.testnetDailySpendLimit).toBe("150000");
    expectError(await sponsor(p.testKey), 403, "POLICY_VIOLATION");
    const bad = await r.admin("PATCH", `/projects/${p.id}`, { policy: { testnetDailySpendLimit: "-1" } });
    expectError(bad, 400, "VALIDATION_ERROR");
  });

  test("the anonymous relay keeps its own dailySpendLimit and has no testnet cap of its own", async () => {
    const res = await r.post("/v1/sponsor", {
      transaction: xdrOf(await r.payment(await r.funded())),
      network: "testnet",
    });
    expectOk(res);
  });
});
