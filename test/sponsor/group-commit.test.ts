/** GroupCommit: calls of one event-loop turn share a batch, keys never repeat in one, a failed batch fails per call. */
import { expect, test } from "bun:test";
import { GroupCommit } from "../../src/store/group-commit.ts";

test("calls made together are written in one batch, each gets its own answer", async () => {
  const batches: number[][] = [];
  const g = new GroupCommit(async (items: number[]) => {
    batches.push(items);
    return items.map((i) => i * 10);
  });
  expect(await Promise.all([1, 2, 3].map((i) => g.run(i)))).toEqual([10, 20, 30]);
  expect(batches).toEqual([[1, 2, 3]]);
});

test("calls that arrive while a batch is written wait and go together in the next one", async () => {
  const batches: number[][] = [];
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const g = new GroupCommit(async (items: number[]) => {
    batches.push(items);
    if (batches.length === 1) await gate;
    return items;
  });
  const first = g.run(0);
  await new Promise((r) => setImmediate(r));
  const later = [1, 2, 3, 4].map((i) => g.run(i));
  await new Promise((r) => setTimeout(r, 5));
  expect(batches).toEqual([[0]]);
  release();
  expect(await Promise.all([first, ...later])).toEqual([0, 1, 2, 3, 4]);
  expect(batches).toEqual([[0], [1, 2, 3, 4]]);
});

test("two calls with the same key are never in one batch; maxBatch bounds a batch", async () => {
  const batches: string[][] = [];
  const g = new GroupCommit(
    async (items: { id: string }[]) => {
      batches.push(items.map((i) => i.id));
      return items.map(() => true);
    },
    { key: (i) => i.id, maxBatch: 2 },
  );
  await Promise.all(["a", "a", "b", "c"].map((id) => g.run({ id })));
  expect(batches).toEqual([
    ["a", "b"],
    ["a", "c"],
  ]);
});

test("a failed batch is written again one call at a time: only the bad call fails", async () => {
  const g = new GroupCommit(async (items: number[]) => {
    if (items.includes(13)) throw new Error("bad row 13");
    return items.map((i) => i + 1);
  });
  const results = await Promise.allSettled([1, 13, 2].map((i) => g.run(i)));
  expect(results.map((r) => (r.status === "fulfilled" ? r.value : (r.reason as Error).message))).toEqual([
    2,
    "bad row 13",
    3,
  ]);
});

test("a lower-priority writer waits while another is busy, at most maxDeferMs, then writes what waited in one batch", async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const first = new GroupCommit(async (items: number[]) => {
    await gate;
    return items;
  });
  const batches: number[][] = [];
  const after = new GroupCommit(
    async (items: number[]) => {
      batches.push(items);
      return items;
    },
    { deferWhile: () => first.busy, maxDeferMs: 5_000 },
  );
  const hot = first.run(0);
  const waiting = [1, 2].map((i) => after.run(i));
  await new Promise((r) => setTimeout(r, 20));
  expect(batches).toEqual([]); // the other writer is busy: nothing yet
  waiting.push(after.run(3));
  release();
  await hot;
  expect(await Promise.all(waiting)).toEqual([1, 2, 3]);
  expect(batches).toEqual([[1, 2, 3]]); // went as soon as the other was idle

  // the other writer busy for good: the wait ends after maxDeferMs all the same
  const stuck = new GroupCommit(async (items: number[]) => {
    await new Promise(() => {});
    return items;
  });
  void stuck.run(0);
  const t0 = Date.now();
  const late = new GroupCommit(async (items: number[]) => items, { deferWhile: () => stuck.busy, maxDeferMs: 60 });
  expect(await late.run(7)).toBe(7);
  expect(Date.now() - t0).toBeGreaterThanOrEqual(55);
});
