/**
 * The end of an event-loop turn (src/http/turn.ts): the /v1 requests of one turn wait for it and
 * go on together, in arrival order.
 */
import { expect, test } from "bun:test";
import { endOfTurn } from "../../src/http/turn.ts";

test("callers of one turn share one wait and resume in the order they came; a later turn waits anew", async () => {
  const order: string[] = [];
  const first = endOfTurn();
  const waits = ["a", "b", "c"].map(async (name) => {
    await endOfTurn();
    order.push(name);
    await Promise.resolve(); // each one's next stage runs after every one's first
    order.push(`${name}2`);
  });
  expect(endOfTurn()).toBe(first);
  let immediate = false;
  setImmediate(() => {
    immediate = true;
  });
  await first;
  expect(immediate).toBe(false); // resolved by the setImmediate queued before any other of this turn
  await Promise.all(waits);
  expect(order).toEqual(["a", "b", "c", "a2", "b2", "c2"]);
  const next = endOfTurn();
  expect(next).not.toBe(first);
  await next;
});
