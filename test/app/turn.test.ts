/**
 * Requests that arrive close together go on together (src/http/turn.ts): the /v1 requests of one
 * wait resume together, in arrival order; an idle relay waits for the end of the turn only, a busy
 * one for its window.
 */
import { expect, test } from "bun:test";
import fc from "fast-check";
import { arrive, Gathering, idleArrivals } from "../../src/http/turn.ts";

test("callers of one wait share it and resume in the order they came; a later wait is a new one", async () => {
  const gathering = new Gathering(0);
  const order: string[] = [];
  const first = gathering.wait();
  const waits = ["a", "b", "c"].map(async (name) => {
    await gathering.wait();
    order.push(name);
    await Promise.resolve(); // each one's next stage runs after every one's first
    order.push(`${name}2`);
  });
  expect(gathering.wait()).toBe(first);
  let immediate = false;
  setImmediate(() => {
    immediate = true;
  });
  await first;
  expect(immediate).toBe(false); // resolved by the setImmediate queued before any other of this turn
  await Promise.all(waits);
  expect(order).toEqual(["a", "b", "c", "a2", "b2", "c2"]);
  const next = gathering.wait();
  expect(next).not.toBe(first);
  await next;
});

/** The arrivals after one request every `gapMs` for `n` requests, from idle. */
function steady(n: number, gapMs: number, windowMs: number) {
  let a = idleArrivals(windowMs);
  let busy = false;
  for (let i = 0; i < n; i++) ({ arrivals: a, busy } = arrive(a, 1_000 + i * gapMs, windowMs));
  return { arrivals: a, busy };
}

test("an idle relay does not wait: the first request, and one after a pause, go at the end of the turn", () => {
  expect(arrive(idleArrivals(10), 5, 10).busy).toBe(false);
  const { arrivals } = steady(200, 1, 10);
  expect(arrive(arrivals, 1_000 + 199 + 1, 10).busy).toBe(true); // still busy
  expect(arrive(arrivals, 1_000 + 199 + 1_000, 10).busy).toBe(false); // a second's pause: idle again
});

test("a busy relay waits its window: at 1,000 requests a second within tens of requests, never at 100 a second", () => {
  expect(steady(30, 1, 10).busy).toBe(false); // not yet: one burst of a few does not make it busy
  expect(steady(60, 1, 10).busy).toBe(true);
  expect(steady(10_000, 10, 10).busy).toBe(false); // 100 a second: a window would gather one
  expect(steady(10_000, 1, 0).busy).toBe(false); // a window of 0: never
});

test("busy only when a window is expected to gather four requests or more", () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 50 }), fc.double({ min: 0.1, max: 100, noNaN: true }), (windowMs, gapMs) => {
      const { busy } = steady(2_000, gapMs, windowMs);
      if (gapMs * 4 > windowMs * 1.01) expect(busy).toBe(false);
      if (gapMs * 4 < windowMs * 0.99) expect(busy).toBe(true);
    }),
  );
});

test("a busy relay's batch goes on after its window, not at the end of the turn", async () => {
  let now = 0;
  const gathering = new Gathering(15, () => now);
  const waits: Promise<void>[] = [];
  for (let i = 0; i < 60; i++) {
    now += 1; // arrivals 1 ms apart (on this clock), all while the first batch forms
    waits.push(gathering.wait());
  }
  await Promise.all(waits);
  now += 1;
  const started = performance.now();
  let turnEnded = false;
  setImmediate(() => {
    turnEnded = true;
  });
  const batch = gathering.wait();
  now += 1;
  expect(gathering.wait()).toBe(batch); // a request during the window joins it
  await batch;
  expect(turnEnded).toBe(true);
  expect(performance.now() - started).toBeGreaterThanOrEqual(14);
});

/** Whether `p` settles before a timer of `ms` set now (timers never fire early; a busy machine only delays both). */
async function before(p: Promise<void>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const first = await Promise.race([p.then(() => true as const), late]);
  clearTimeout(timer);
  return first;
}

test("a read of a busy relay goes on at the end of its turn, not after the window, and is no arrival", async () => {
  let now = 0;
  const gathering = new Gathering(15, () => now);
  const warm: Promise<void>[] = [];
  for (let i = 0; i < 60; i++) {
    now += 1;
    warm.push(gathering.wait());
  }
  await Promise.all(warm);
  now += 1;
  const batch = gathering.wait(); // busy: this batch waits its window
  const read = gathering.endOfTurn();
  expect(gathering.endOfTurn()).toBe(read); // the turn's reads share one wait
  expect(await before(read, 15)).toBe(true);
  now += 1_000; // reads do not count: after a second's pause with reads only, the next write is idle
  for (let i = 0; i < 100; i++) await gathering.endOfTurn();
  await batch;
  expect(await before(gathering.wait(), 15)).toBe(true);
});
