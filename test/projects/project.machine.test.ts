/** The project machine driven with events alone: policy, reservations, settlement, suspension, restore. */
import { describe, expect, test } from "bun:test";
import { createActor } from "xstate";
import fc from "fast-check";
import {
  type Answer,
  type EachReply,
  projectMachine,
  type ProjectReply,
  utcDay,
} from "../../actors/projects/project.machine.ts";
import { ask } from "../../actors/ask.ts";
import type { Policy, SpendRequest } from "../../actors/projects/policy.ts";
import { PROJECT_POLICY_DEFAULTS } from "../../src/features/projects/rules/policy.ts";

const T0 = Date.UTC(2026, 10, 22, 12);
const payment: SpendRequest = { operationTypes: ["payment"], contractIds: [], minFee: 200n, maxFee: 200_000n };

function start(policy: Partial<Policy> = {}, balance = 0n) {
  const actor = createActor(projectMachine, {
    input: { projectId: "p", policy: { ...PROJECT_POLICY_DEFAULTS, ...policy }, balance, spent: 0n, now: T0 },
  });
  actor.start();
  let n = 0;
  /** One request's event: a RESERVE of one (the answer), or another event's reply. */
  const send = async (e: Record<string, unknown> & { type: string }): Promise<Answer> => {
    const { type, now, credits, request, id = `r${n++}` } = e;
    if (type === "RESERVE") {
      const event = { type, id, now, asks: [{ id, credits, request }] };
      return (await ask<EachReply>(actor, event as never)).each[0]!;
    }
    return await ask<ProjectReply>(actor, { ...e, id } as never);
  };
  return { actor, send, ctx: () => actor.getSnapshot().context };
}

describe("RESERVE: policy and credits in one event", () => {
  test("each rule is a POLICY_VIOLATION naming it", async () => {
    const cases: [Partial<Policy>, SpendRequest, string][] = [
      [{ maxOperations: 1 }, { ...payment, operationTypes: ["payment", "payment"] }, "maxOperations"],
      [{ allowedOperations: ["createAccount"] }, payment, "allowedOperations"],
      [
        { allow: { contracts: [{ contract: "CA" }] } },
        { ...payment, operationTypes: ["invokeHostFunction"], contractIds: ["CB"] },
        "allow.contracts",
      ],
      [
        { allow: { contracts: [{ contract: "CA" }] } },
        { ...payment, operationTypes: ["invokeHostFunction"], contractIds: [null] },
        "allow.contracts",
      ],
      [
        { allow: { contracts: [{ contract: "CA", functions: ["swap"] }] } },
        { ...payment, operations: [{ type: "invokeHostFunction", contract: "CA", function: "drain" }] },
        "allow.contracts",
      ],
      [
        { allow: { destinations: ["GA"] } },
        { ...payment, operations: [{ type: "payment", destination: "GB", asset: "native" }] },
        "allow.destinations",
      ],
      [
        { allow: { assets: ["native"] } },
        { ...payment, operations: [{ type: "payment", destination: "GB", asset: "USD:GI" }] },
        "allow.assets",
      ],
      [{ activeFrom: T0 + 1 }, payment, "activeFrom"],
      [{ activeUntil: T0 }, payment, "activeUntil"],
      [{ maxFee: 199n }, payment, "maxFee"],
      [{ dailySpendLimit: 1000n }, payment, "dailySpendLimit"],
    ];
    for (const [policy, request, rule] of cases) {
      const r = await start(policy).send({ type: "RESERVE", now: T0, credits: false, request });
      expect(r.ok).toBe(false);
      if (!r.ok) expect([r.error.code, r.error.details?.rule]).toEqual(["POLICY_VIOLATION", rule]);
    }
  });

  test("the grant is the wanted maximum capped by the policy's maxFee", async () => {
    const r = await start({ maxFee: 5000n }).send({ type: "RESERVE", now: T0, credits: false, request: payment });
    expect(r.ok && r.grant).toBe(5000n);
  });

  test("a balance covering exactly N reservations grants N, then INSUFFICIENT_CREDITS with balance and required", async () => {
    const { send, ctx } = start({}, 3n * 200_000n);
    const replies = [];
    for (let i = 0; i < 5; i++) replies.push(await send({ type: "RESERVE", now: T0, credits: true, request: payment }));
    expect(replies.filter((r) => r.ok).length).toBe(3);
    const refused = replies[3]!;
    if (!refused.ok)
      expect(refused.error).toMatchObject({
        code: "INSUFFICIENT_CREDITS",
        details: { balance: "0", required: "200000" },
      });
    expect(ctx().balance).toBe(0n);
    expect(ctx().holds.size).toBe(3);
  });

  test("testnet holds count against the daily spend, not the balance", async () => {
    const { send, ctx } = start({ dailySpendLimit: 400_000n });
    expect((await send({ type: "RESERVE", now: T0, credits: false, request: payment })).ok).toBe(true);
    expect((await send({ type: "RESERVE", now: T0, credits: false, request: payment })).ok).toBe(true);
    expect((await send({ type: "RESERVE", now: T0, credits: false, request: payment })).ok).toBe(false);
    expect(ctx().balance).toBe(0n);
  });
});

describe("RESERVE: the testnet daily spend (testnetDailySpendLimit)", () => {
  const testnet: SpendRequest = { ...payment, network: "testnet" };
  const mainnet: SpendRequest = { ...payment, network: "mainnet" };

  test("a project's default caps its testnet fees at 100 XLM a day", () => {
    expect(PROJECT_POLICY_DEFAULTS.testnetDailySpendLimit).toBe(1_000_000_000n);
  });

  test("testnet reservations and charges count against it; mainnet ones do not; a new UTC day starts at zero", async () => {
    const { actor, send, ctx } = start({ testnetDailySpendLimit: 500_000n }, 10_000_000n);
    expect((await send({ type: "RESERVE", id: "a", now: T0, credits: false, request: testnet })).ok).toBe(true);
    expect((await send({ type: "RESERVE", id: "b", now: T0, credits: false, request: testnet })).ok).toBe(true);
    const third = await send({ type: "RESERVE", now: T0, credits: false, request: testnet });
    expect(third.ok).toBe(false);
    if (!third.ok)
      expect(third.error).toMatchObject({
        code: "POLICY_VIOLATION",
        details: {
          rule: "testnetDailySpendLimit",
          limit: "500000",
          spent: "0",
          reserved: "400000",
          required: "200000",
        },
      });
    // mainnet is not held to it
    for (let i = 0; i < 5; i++)
      expect((await send({ type: "RESERVE", now: T0, credits: true, request: mainnet })).ok).toBe(true);
    // settled: what was charged stays counted, the rest is free again
    actor.send({
      type: "SETTLE",
      now: T0,
      settlements: [
        { id: "a", charged: 150_000n, released: 0n, journaled: false },
        { id: "b", charged: 150_000n, released: 0n, journaled: false },
      ],
    });
    expect([ctx().testnetSpent, ctx().testnetHeld]).toEqual([300_000n, 0n]);
    expect((await send({ type: "RESERVE", id: "c", now: T0, credits: false, request: testnet })).ok).toBe(true);
    expect((await send({ type: "RESERVE", now: T0, credits: false, request: testnet })).ok).toBe(false);
    const tomorrow = T0 + 86_400_000;
    actor.send({
      type: "SETTLE",
      now: tomorrow,
      settlements: [{ id: "c", charged: 0n, released: 0n, journaled: false }],
    });
    expect((await send({ type: "RESERVE", now: tomorrow, credits: false, request: testnet })).ok).toBe(true);
  });

  test("null: no testnet cap of its own (dailySpendLimit still counts both networks)", async () => {
    const { send } = start({ testnetDailySpendLimit: null, dailySpendLimit: 400_000n });
    expect((await send({ type: "RESERVE", now: T0, credits: false, request: testnet })).ok).toBe(true);
    expect((await send({ type: "RESERVE", now: T0, credits: false, request: testnet })).ok).toBe(true);
    const r = await send({ type: "RESERVE", now: T0, credits: false, request: testnet });
    expect(!r.ok && r.error.details?.rule).toBe("dailySpendLimit");
  });
});

describe("SETTLE", () => {
  test("a journaled hold: the balance moves by release - charge, and the spend by the charge", async () => {
    const { actor, send, ctx } = start({}, 1_000_000n);
    await send({ type: "RESERVE", id: "h", now: T0, credits: true, request: payment });
    expect(ctx().balance).toBe(800_000n);
    actor.send({
      type: "SETTLE",
      now: T0,
      settlements: [{ id: "h", released: 200_000n, charged: 200n, journaled: true }],
    });
    expect(ctx().balance).toBe(999_800n);
    expect(ctx().spent).toBe(200n);
    expect(ctx().holds.size).toBe(0);
  });

  test("a hold that never reached the journal is dropped (nothing charged)", async () => {
    const { actor, send, ctx } = start({}, 1_000_000n);
    await send({ type: "RESERVE", id: "h", now: T0, credits: true, request: payment });
    actor.send({ type: "SETTLE", now: T0, settlements: [{ id: "h", released: 0n, charged: 0n, journaled: false }] });
    expect(ctx().balance).toBe(1_000_000n);
  });

  test("a journaled hold left open (no outcome yet) stays off the balance until the journal releases it", async () => {
    const { actor, send, ctx } = start({}, 1_000_000n);
    await send({ type: "RESERVE", id: "h", now: T0, credits: true, request: payment });
    actor.send({ type: "SETTLE", now: T0, settlements: [{ id: "h", released: 0n, charged: 0n, journaled: true }] });
    expect(ctx().balance).toBe(800_000n);
    actor.send({
      type: "SETTLE",
      now: T0,
      settlements: [{ id: "later", released: 200_000n, charged: 300n, journaled: true }],
    });
    expect(ctx().balance).toBe(999_700n);
  });

  test("a testnet hold's charge counts toward the spend, never the balance", async () => {
    const { actor, send, ctx } = start({}, 1_000n);
    await send({ type: "RESERVE", id: "t", now: T0, credits: false, request: payment });
    actor.send({ type: "SETTLE", now: T0, settlements: [{ id: "t", released: 0n, charged: 200n, journaled: false }] });
    expect(ctx().balance).toBe(1_000n);
    expect(ctx().spent).toBe(200n);
  });

  test("settlements sent together leave the actor as one by one would", async () => {
    const one = start({}, 1_000_000n);
    const all = start({}, 1_000_000n);
    const settlements = [
      { id: "a", released: 200_000n, charged: 200n, journaled: true },
      { id: "b", released: 0n, charged: 0n, journaled: false }, // never journaled: dropped
      { id: "c", released: 0n, charged: 300n, journaled: false }, // testnet: the spend only
    ];
    for (const x of [one, all]) {
      await x.send({ type: "RESERVE", id: "a", now: T0, credits: true, request: payment });
      await x.send({ type: "RESERVE", id: "b", now: T0, credits: true, request: payment });
      await x.send({ type: "RESERVE", id: "c", now: T0, credits: false, request: payment });
    }
    for (const s of settlements) one.actor.send({ type: "SETTLE", now: T0, settlements: [s] });
    all.actor.send({ type: "SETTLE", now: T0, settlements });
    const view = (c: ReturnType<typeof one.ctx>) => [c.balance, c.held, c.spent, c.holds.size];
    expect(view(all.ctx())).toEqual(view(one.ctx()));
    expect(view(all.ctx())).toEqual([999_800n, 0n, 500n, 0]);
  });

  test("the daily spend starts again on a new UTC day", async () => {
    const { actor, send, ctx } = start({ dailySpendLimit: 200_100n });
    await send({ type: "RESERVE", id: "h", now: T0, credits: false, request: payment });
    actor.send({ type: "SETTLE", now: T0, settlements: [{ id: "h", released: 0n, charged: 200n, journaled: false }] });
    expect((await send({ type: "RESERVE", now: T0, credits: false, request: payment })).ok).toBe(false);
    expect((await send({ type: "RESERVE", now: T0 + 24 * 3600_000, credits: false, request: payment })).ok).toBe(true);
    expect(ctx().spent).toBe(0n);
  });
});

describe("a turn's requests in one event", () => {
  /** The answers an event's reply carries (the actor answers while it is sent). */
  function each(actor: ReturnType<typeof start>["actor"], event: Record<string, unknown>): Answer[] {
    let got: Answer[] = [];
    const sub = actor.on("reply", (r) => {
      if ("each" in r) got = r.each;
    });
    actor.send(event as never);
    sub.unsubscribe();
    return got;
  }
  const state = (c: ReturnType<ReturnType<typeof start>["ctx"]>) => ({
    balance: c.balance,
    held: c.held,
    spent: c.spent,
    spentDay: c.spentDay,
    testnetSpent: c.testnetSpent,
    testnetHeld: c.testnetHeld,
    holds: [...c.holds.entries()],
  });

  test("RESERVE of several answers and holds as one RESERVE each: each sees what those before it reserved", () => {
    const ask = fc.record({
      credits: fc.boolean(),
      network: fc.constantFrom("mainnet", "testnet"),
      maxFee: fc.bigInt({ min: 100n, max: 300_000n }),
    });
    const arb = fc.record({
      balance: fc.bigInt({ min: 0n, max: 1_000_000n }),
      daily: fc.option(fc.bigInt({ min: 0n, max: 1_000_000n })),
      testnetDaily: fc.option(fc.bigInt({ min: 0n, max: 500_000n })),
      asks: fc.array(ask, { minLength: 1, maxLength: 8 }),
      // spent the day before (a testnet charge), and the asks on that day or just past its midnight
      spentBefore: fc.bigInt({ min: 0n, max: 400_000n }),
      now: fc.constantFrom(T0, T0 + 12 * 3_600_000, T0 + 12 * 3_600_000 - 1),
    });
    fc.assert(
      fc.property(arb, ({ balance, daily, testnetDaily, asks, spentBefore, now }) => {
        const policy = { dailySpendLimit: daily, testnetDailySpendLimit: testnetDaily };
        const together = start(policy, balance);
        const apart = start(policy, balance);
        for (const p of [together, apart]) {
          const settlement = { id: "before", charged: spentBefore, released: 0n, journaled: false };
          p.actor.send({ type: "SETTLE", now: T0, settlements: [settlement] });
        }
        const spends = asks.map((a, i) => ({
          id: `h${i}`,
          credits: a.credits,
          request: { ...payment, minFee: 100n, maxFee: a.maxFee, network: a.network },
        }));
        const one = each(together.actor, { type: "RESERVE", id: "t", now, asks: spends });
        const many = spends.map((a) => each(apart.actor, { type: "RESERVE", id: "a", now, asks: [a] })[0]);
        expect(one).toEqual(many as Answer[]);
        expect(state(together.ctx())).toEqual(state(apart.ctx()));
      }),
    );
  });

  test("a suspended project refuses each request of the event", () => {
    const { actor } = start();
    actor.send({ type: "CONFIGURE", policy: PROJECT_POLICY_DEFAULTS, status: "suspended" });
    const asks = ["a", "b", "c"].map((id) => ({ id, credits: false, request: payment }));
    const answers = each(actor, { type: "RESERVE", id: "s", now: T0, asks });
    expect(answers.map((a) => !a.ok && a.error.code)).toEqual(["FORBIDDEN", "FORBIDDEN", "FORBIDDEN"]);
  });
});

describe("credits, configuration and restore", () => {
  test("DEBIT refuses to overdraw; CREDIT adds", async () => {
    const { actor, send, ctx } = start({}, 100n);
    const r = await send({ type: "DEBIT", amount: 101n });
    expect(!r.ok && r.error.code).toBe("INSUFFICIENT_CREDITS");
    expect((await send({ type: "DEBIT", amount: 100n })).ok).toBe(true);
    actor.send({ type: "CREDIT", amount: 50n });
    expect(ctx().balance).toBe(50n);
  });

  test("suspension refuses RESERVE until reactivated; CONFIGURE sets the policy", async () => {
    const { actor, send, ctx } = start({ burst: 10 });
    actor.send({ type: "CONFIGURE", policy: { ...PROJECT_POLICY_DEFAULTS, burst: 4 }, status: "suspended" });
    expect(actor.getSnapshot().value).toBe("suspended");
    expect(ctx().policy.burst).toBe(4);
    const r = await send({ type: "RESERVE", now: T0, credits: false, request: payment });
    expect(!r.ok && r.error).toMatchObject({ code: "FORBIDDEN", details: { reason: "project_suspended" } });
    actor.send({ type: "CONFIGURE", policy: PROJECT_POLICY_DEFAULTS, status: "active" });
    expect((await send({ type: "RESERVE", now: T0, credits: false, request: payment })).ok).toBe(true);
  });

  test("a persisted snapshot restores; SYNC puts back the durable balance and drops holds", async () => {
    const first = start({ requestsPerSecond: 1, burst: 2 }, 1_000_000n);
    await first.send({ type: "RESERVE", now: T0, credits: true, request: payment });
    const saved = JSON.parse(
      JSON.stringify(first.actor.getPersistedSnapshot(), (_k, v) =>
        typeof v === "bigint" ? { $bigint: v.toString() } : v,
      ),
      (_k, v) => (v && typeof v.$bigint === "string" ? BigInt(v.$bigint) : v),
    );
    const restored = createActor(projectMachine, {
      snapshot: saved,
      input: { projectId: "p", policy: PROJECT_POLICY_DEFAULTS, balance: 0n, spent: 0n, now: T0 },
    });
    restored.start();
    restored.send({
      type: "SYNC",
      now: T0,
      balance: 1_000_000n,
      spent: 0n,
      policy: { ...PROJECT_POLICY_DEFAULTS, requestsPerSecond: 1, burst: 2 },
      status: "active",
    });
    expect(restored.getSnapshot().context.balance).toBe(1_000_000n);
    expect(restored.getSnapshot().context.holds.size).toBe(0);
    expect(restored.getSnapshot().context.spent).toBe(0n);
  });
});

test("utcDay (remembers the last day) is the ISO date of any instant, in any order, across midnights", () => {
  const instant = fc.oneof(
    fc.integer({ min: -8.64e15, max: 8.64e15 }),
    fc.integer({ min: -3, max: 3 }).map((d) => Date.UTC(2026, 10, 22 + d) + (d % 2)), // midnight and 1 ms past
    fc.integer({ min: -3, max: 3 }).map((d) => Date.UTC(2026, 10, 22 + d) - 1), // 1 ms before midnight
  );
  fc.assert(
    fc.property(fc.array(instant, { minLength: 1, maxLength: 30 }), (xs) =>
      xs.every((x) => utcDay(x) === new Date(x).toISOString().slice(0, 10)),
    ),
    { numRuns: 2000 },
  );
});
