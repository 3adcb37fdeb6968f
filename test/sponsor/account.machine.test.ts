/** The source account's order (actors/sponsor/account.machine.ts): what it lets go, holds and refuses, event by event. */
import { describe, expect, test } from "bun:test";
import { createActor } from "xstate";
import { type AccountEvent, accountMachine, idle } from "../../actors/sponsor/account.machine.ts";

function account() {
  const a = createActor(accountMachine, { input: { account: "GA" } }).start();
  const step = (e: AccountEvent) => {
    a.send(e);
    const c = a.getSnapshot().context;
    return { go: c.go.map((t) => t.id), refused: c.refused.map((r) => r.id), c };
  };
  return { step };
}

describe("account order", () => {
  test("nothing known: the first to arrive goes; the rest wait for it, then go one at a time in order", () => {
    const { step } = account();
    expect(step({ type: "ARRIVE", id: "a", seq: 11n }).go).toEqual(["a"]);
    expect(step({ type: "ARRIVE", id: "c", seq: 13n }).go).toEqual([]);
    expect(step({ type: "ARRIVE", id: "b", seq: 12n }).go).toEqual([]);
    expect(step({ type: "APPLIED", id: "a", seq: 11n }).go).toEqual(["b"]);
    expect(step({ type: "APPLIED", id: "b", seq: 12n }).go).toEqual(["c"]);
    const last = step({ type: "APPLIED", id: "c", seq: 13n });
    expect(last.go).toEqual([]);
    expect(idle(last.c)).toBe(true);
  });

  test("out of order: the network's number is read, the one ahead waits and the next goes", () => {
    const { step } = account();
    expect(step({ type: "ARRIVE", id: "c", seq: 13n }).go).toEqual(["c"]); // nothing known: tried
    expect(step({ type: "ARRIVE", id: "a", seq: 11n }).go).toEqual([]);
    const gap = step({ type: "GAP", id: "c", seq: 13n, chainSeq: 10n });
    expect(gap.go).toEqual(["a"]);
    expect(gap.c.held.map((h) => h.id)).toEqual(["c"]);
    expect(step({ type: "APPLIED", id: "a", seq: 11n }).go).toEqual([]); // 12 is missing
    expect(step({ type: "CHAIN", seq: 12n }).go).toEqual(["c"]); // another instance sent 12
  });

  test("a predecessor refused before any ledger: its successors are refused, one before it goes", () => {
    const { step } = account();
    step({ type: "ARRIVE", id: "b", seq: 12n });
    step({ type: "ARRIVE", id: "c", seq: 13n });
    step({ type: "ARRIVE", id: "d", seq: 14n });
    const r = step({ type: "REJECTED", id: "b", seq: 12n });
    expect(r.refused.sort()).toEqual(["c", "d"]);
    expect(idle(r.c)).toBe(true);
  });

  test("a number refused before: a later arrival after it is refused at once; the number coming again clears it", () => {
    const { step } = account();
    step({ type: "ARRIVE", id: "a", seq: 11n });
    step({ type: "REJECTED", id: null, seq: 12n }); // refused by the relay (policy, a cap) before it was held
    expect(step({ type: "ARRIVE", id: "c", seq: 13n }).refused).toEqual(["c"]);
    step({ type: "ARRIVE", id: "b", seq: 12n }); // sent again, valid this time
    expect(step({ type: "ARRIVE", id: "c2", seq: 13n }).refused).toEqual([]);
    expect(step({ type: "APPLIED", id: "a", seq: 11n }).go).toEqual(["b"]);
  });

  test("a refused copy of a transaction still held refuses nothing", () => {
    const { step } = account();
    step({ type: "ARRIVE", id: "a", seq: 11n });
    step({ type: "ARRIVE", id: "b", seq: 12n });
    expect(step({ type: "REJECTED", id: null, seq: 11n }).refused).toEqual([]);
    expect(step({ type: "APPLIED", id: "a", seq: 11n }).go).toEqual(["b"]);
  });

  test("not known whether it landed: the next waits for the chain to say", () => {
    const { step } = account();
    step({ type: "ARRIVE", id: "a", seq: 11n });
    step({ type: "ARRIVE", id: "b", seq: 12n });
    expect(step({ type: "UNKNOWN", id: "a", seq: 11n }).go).toEqual([]);
    expect(step({ type: "CHAIN", seq: 11n }).go).toEqual(["b"]);
  });

  test("one already behind the chain goes at once, for the network to judge", () => {
    const { step } = account();
    step({ type: "ARRIVE", id: "a", seq: 11n });
    step({ type: "APPLIED", id: "a", seq: 11n });
    step({ type: "ARRIVE", id: "x", seq: 20n });
    step({ type: "ARRIVE", id: "y", seq: 30n });
    expect(step({ type: "CHAIN", seq: 25n }).go).toEqual(["x"]);
  });
});
