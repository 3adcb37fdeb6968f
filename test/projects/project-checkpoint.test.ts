/**
 * A project actor's checkpoint through ProjectActors: written without the open reservations,
 * restored with none (they died with the process) and usable at once, also from a checkpoint an
 * older version wrote (its holds a plain object, not a Map).
 */
import { expect, test } from "bun:test";
import { createLogger } from "../../src/kernel/log.ts";
import { ProjectActors } from "../../src/features/projects/project-actors.ts";
import { ANONYMOUS_POLICY_DEFAULTS, PROJECT_POLICY_DEFAULTS } from "../../src/features/projects/rules/policy.ts";
import { MemoryCheckpoints } from "../../src/store/checkpoints.ts";

const config = { anonymousPolicy: ANONYMOUS_POLICY_DEFAULTS, debounceMs: 0, maxAnonymousClients: 10 };
// a token an hour: none refills while the test runs
const policy = { ...PROJECT_POLICY_DEFAULTS, maxFee: 1000n, requestsPerSecond: 1 / 3600, burst: 3 };
const request = { operationTypes: ["payment"], contractIds: [], minFee: 100n, maxFee: 1000n };
const project = { id: "p", policy, status: "active" as const, balance: 10_000n, spent: 0n };

test("a restored project keeps its bucket, drops the holds of the process before, and reserves again", async () => {
  const store = new MemoryCheckpoints();
  const before = new ProjectActors(store, config, createLogger("silent"));
  const actor = await before.start(project);
  expect((await before.admit(actor)).ok).toBe(true);
  await before.payer(actor, "p", "project:p").reserve("r1", true, request);
  expect(actor.getSnapshot().context.holds.size).toBe(1);
  await before.stop(); // writes the checkpoint
  const saved = (await store.get("project:p")) as { context: Record<string, unknown> };
  expect(saved.context.held).toBe(0n);
  expect(Math.floor(saved.context.tokens as number)).toBe(2); // the bucket is kept beside the actor, written with it

  const after = new ProjectActors(store, config, createLogger("silent"));
  const restored = await after.start(project);
  const c = restored.getSnapshot().context;
  expect(c.holds).toBeInstanceOf(Map);
  expect([c.holds.size, c.held, c.balance]).toEqual([0, 0n, 10_000n]);
  const admitted = [];
  for (let i = 0; i < 3; i++) admitted.push((await after.admit(restored)).ok);
  expect(admitted).toEqual([true, true, false]); // one token taken before the restart
  expect(await after.payer(restored, "p", "project:p").reserve("r2", true, request)).toBe(1000n);
  expect(restored.getSnapshot().context.holds.get("r2")).toEqual({ amount: 1000n, credits: true });
  await after.stop();
});

test("a checkpoint with holds as a plain object (an older version's) restores with an empty Map", async () => {
  const store = new MemoryCheckpoints();
  const first = new ProjectActors(store, config, createLogger("silent"));
  await first.admit(await first.start(project)); // a change: a checkpoint is written
  await first.stop();
  const saved = (await store.get("project:p")) as { context: Record<string, unknown> };
  const old = { ...saved, context: { ...saved.context, holds: { r0: { amount: 500n, credits: true } }, held: 500n } };
  await store.set("project:p", old);

  const actors = new ProjectActors(store, config, createLogger("silent"));
  const actor = await actors.start(project);
  expect(actor.getSnapshot().context.holds).toBeInstanceOf(Map);
  expect(actor.getSnapshot().context.held).toBe(0n);
  const payer = actors.payer(actor, "p", "project:p");
  await payer.reserve("r1", true, request);
  payer.settle("r1", { charged: 100n, released: 1000n, journaled: true });
  await Bun.sleep(5); // settlements go out after the turn
  const c = actor.getSnapshot().context;
  expect([c.holds.size, c.held, c.balance]).toEqual([0, 0n, 9_900n]);
  await actors.stop();
});
