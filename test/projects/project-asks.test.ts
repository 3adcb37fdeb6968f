/** A turn's asks of a project actor reach it as one event each kind, each request answered in order. */
import { describe, expect, test } from "bun:test";
import { createActor } from "xstate";
import { type ProjectEvent, projectMachine } from "../../actors/projects/project.machine.ts";
import type { SpendRequest } from "../../actors/projects/policy.ts";
import { ProjectAsks } from "../../src/features/projects/project-asks.ts";
import { PROJECT_POLICY_DEFAULTS } from "../../src/features/projects/rules/policy.ts";

const payment: SpendRequest = { operationTypes: ["payment"], contractIds: [], minFee: 100n, maxFee: 1_000n };

function actorWithLog(burst: number, balance: bigint) {
  const policy = { ...PROJECT_POLICY_DEFAULTS, burst, requestsPerSecond: 1 };
  const actor = createActor(projectMachine, {
    input: { projectId: "p", policy, balance, spent: 0n, now: Date.now() },
  }).start();
  const events: string[] = [];
  const send = actor.send.bind(actor);
  actor.send = (e: ProjectEvent) => {
    events.push(e.type === "ADMIT" ? `ADMIT ${e.count}` : e.type === "RESERVE" ? `RESERVE ${e.asks.length}` : e.type);
    send(e);
  };
  return { actor, events };
}

describe("ProjectAsks", () => {
  test("the ADMITs of one turn are one event; each request gets its own token or refusal, in order", async () => {
    const { actor, events } = actorWithLog(3, 0n);
    let before = 0;
    const asks = new ProjectAsks(actor, () => before++);
    const answers = await Promise.all(Array.from({ length: 5 }, () => asks.admit()));
    expect(events).toEqual(["ADMIT 5"]);
    expect(before).toBe(1);
    expect(answers.map((a) => a.ok)).toEqual([true, true, true, false, false]);
    expect(answers.map((a) => a.rate?.remaining)).toEqual([2, 1, 0, 0, 0]);
    const refused = answers[4]!;
    expect(!refused.ok && refused.error.code).toBe("RATE_LIMIT_EXCEEDED");
    // asked in another turn: another event
    await asks.admit();
    expect(events).toEqual(["ADMIT 5", "ADMIT 1"]);
  });

  test("the RESERVEs of one turn are one event; each sees the credits those before it took", async () => {
    const { actor, events } = actorWithLog(10, 2_500n);
    const asks = new ProjectAsks(actor, () => {});
    const answers = await Promise.all(
      ["a", "b", "c"].map(async (id, i) => {
        await Promise.resolve(); // asked a job later than the first: still this turn's
        if (i === 2) await Promise.resolve();
        return asks.reserve({ id, credits: true, request: payment });
      }),
    );
    expect(events).toEqual(["RESERVE 3"]);
    expect(answers.map(({ answer: a }) => (a.ok ? a.grant : a.error.code))).toEqual([
      1_000n,
      1_000n,
      "INSUFFICIENT_CREDITS",
    ]);
    // one time for the turn's reservations: the day a shared daily spend counts them in
    expect(new Set(answers.map((a) => a.now)).size).toBe(1);
    expect([...actor.getSnapshot().context.holds.keys()]).toEqual(["a", "b"]);
    expect(actor.getSnapshot().context.balance).toBe(500n);
  });

  test("a turn's event that fails fails each of its requests, and the next turn asks again", async () => {
    const { actor, events } = actorWithLog(3, 0n);
    let fail = true;
    const asks = new ProjectAsks(actor, () => {
      if (fail) throw new Error("the settlements could not be sent");
    });
    const results = await Promise.allSettled([asks.admit(), asks.admit()]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect(events).toEqual([]);
    fail = false;
    expect((await asks.admit()).ok).toBe(true);
    expect(events).toEqual(["ADMIT 1"]);
  });
});
