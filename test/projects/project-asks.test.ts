/** A turn's reservations reach the project actor as one event, each request answered in order. */
import { describe, expect, test } from "bun:test";
import { createActor } from "xstate";
import { type ProjectEvent, projectMachine } from "../../actors/projects/project.machine.ts";
import type { SpendRequest } from "../../actors/projects/policy.ts";
import { ProjectAsks } from "../../src/features/projects/project-asks.ts";
import { PROJECT_POLICY_DEFAULTS } from "../../src/features/projects/rules/policy.ts";

const payment: SpendRequest = { operationTypes: ["payment"], contractIds: [], minFee: 100n, maxFee: 1_000n };

function actorWithLog(balance: bigint) {
  const policy = PROJECT_POLICY_DEFAULTS;
  const actor = createActor(projectMachine, {
    input: { projectId: "p", policy, balance, spent: 0n, now: Date.now() },
  }).start();
  const events: string[] = [];
  const send = actor.send.bind(actor);
  actor.send = (e: ProjectEvent) => {
    events.push(e.type === "RESERVE" ? `RESERVE ${e.asks.length}` : e.type);
    send(e);
  };
  return { actor, events };
}

describe("ProjectAsks", () => {
  test("the RESERVEs of one turn are one event; each sees the credits those before it took", async () => {
    const { actor, events } = actorWithLog(2_500n);
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
    const { actor, events } = actorWithLog(0n);
    let fail = true;
    const asks = new ProjectAsks(actor, () => {
      if (fail) throw new Error("the settlements could not be sent");
    });
    const reserve = (id: string) => asks.reserve({ id, credits: false, request: payment });
    const results = await Promise.allSettled([reserve("a"), reserve("b")]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect(events).toEqual([]);
    fail = false;
    expect((await reserve("c")).answer.ok).toBe(true);
    expect(events).toEqual(["RESERVE 1"]);
  });
});
