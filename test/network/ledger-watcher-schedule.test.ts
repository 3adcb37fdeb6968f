/**
 * When the ledger watcher expects an upstream ledger to close (it polls fast from shortly before):
 * every ledger it saw bounds the next close from both sides, so a ledger seen late does not make
 * the next ones late. Ledgers here close every 1,000 ms, at whole seconds.
 */
import { describe, expect, test } from "bun:test";
import { expectedClose, pollDelay, type Sighting } from "../../src/network/close-clock.ts";

const I = 1000;

describe("expectedClose", () => {
  test("a ledger seen within a poll of its close: the next is expected one interval later", () => {
    const seen: Sighting[] = [{ sequence: 10, at: 10_020, after: 10_000 }];
    expect(expectedClose(seen, 11, I)).toBe(11_000);
  });

  test("ledgers seen long after they closed (slow polls): the next is expected at once, not as late", () => {
    // polled every second at +584: each close is only known to lie within the second before
    const seen: Sighting[] = [
      { sequence: 12, at: 12_584, after: 11_584 },
      { sequence: 13, at: 13_584, after: 12_584 },
    ];
    const next = expectedClose(seen, 14, I);
    expect(next).toBeLessThanOrEqual(14_000); // polling fast from here finds 14 when it closes
    // once 14 is seen by a fast poll, 15 is expected at its close
    seen.push({ sequence: 14, at: 14_015, after: 13_995 });
    expect(expectedClose(seen, 15, I)).toBe(14_995);
  });

  test("one slow answer does not make the next ledger late", () => {
    const seen: Sighting[] = [
      { sequence: 10, at: 10_010, after: 9_990 },
      { sequence: 11, at: 11_400, after: 10_990 }, // the poll that saw 11 was answered 400 ms late
    ];
    expect(expectedClose(seen, 12, I)).toBe(11_990);
  });

  test("bounds that disagree (the interval changed): the earliest upper bound wins", () => {
    // ledger 21 came 600 ms early: the old lower bound of 20 is past the latest 22 can close
    const seen: Sighting[] = [
      { sequence: 20, at: 20_010, after: 19_990 },
      { sequence: 21, at: 20_410, after: 20_390 },
    ];
    expect(expectedClose(seen, 22, I)).toBe(21_410);
  });
});

describe("pollDelay", () => {
  const seen: Sighting[] = [{ sequence: 10, at: 10_020, after: 10_000 }]; // 11 expected at 11,000
  const o = { sightings: seen, next: 11, interval: I, pollMs: 1000, fastPollMs: 20 };

  test("long before the expected close: until shortly before it, or a quarter ledger while hashes wait", () => {
    expect(pollDelay({ ...o, now: 10_050, waiting: false })).toBe(800); // wakes at 10,850
    expect(pollDelay({ ...o, now: 10_050, waiting: true })).toBe(250);
  });

  test("from shortly before the expected close, and past it until seen: every fastPollMs", () => {
    expect(pollDelay({ ...o, now: 10_900, waiting: true })).toBe(20);
    expect(pollDelay({ ...o, now: 11_400, waiting: false })).toBe(20);
  });

  test("no interval known yet: pollMs", () => {
    expect(pollDelay({ ...o, interval: null, now: 10_050, waiting: true })).toBe(1000);
  });
});
