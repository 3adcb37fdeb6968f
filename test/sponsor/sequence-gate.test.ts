/**
 * The order flow's gate built directly (no relay, no network): what it answers is a value. `enter`
 * resolves with null when a transaction may be sent, or with why it never may; `ended` with "stands",
 * "again" (held again after an out-of-order refusal, then sent) or why it never may be sent again.
 */
import { describe, expect, test } from "bun:test";
import { createLogger } from "../../src/kernel/log.ts";
import { RelayError } from "../../src/kernel/errors.ts";
import type { AccountState } from "../../src/network/gateway.ts";
import {
  DEFAULT_ORDER_LIMITS,
  type OrderLimits,
  type OrderedTx,
  SequenceGate,
} from "../../src/features/sponsor/order/sequence-gate.ts";

const ACCOUNT = "GACCOUNT";

/** A gate over an account whose sequence the chain reports as `chain.seq` (changeable). */
function gateOf(limits: Partial<OrderLimits> = {}, chain = { seq: 9n }) {
  let reads = 0;
  const gate = new SequenceGate({
    network: "testnet",
    accounts: async (pks) => {
      reads++;
      return new Map<string, AccountState>(pks.map((pk) => [pk, { balance: 0n, seq: chain.seq, reserve: 0n }]));
    },
    nextLedger: () => Bun.sleep(20).then(() => true),
    limits: { ...DEFAULT_ORDER_LIMITS, ...limits },
    log: createLogger("silent"),
  });
  return { gate, reads: () => reads };
}

const tx = (seq: bigint, id = `tx${seq}`): OrderedTx => ({
  id,
  account: ACCOUNT,
  seq,
  scope: "project-1",
  maxTime: 0n,
  bytes: 200,
});

/** The promise's value if it has settled within a few turns, else "pending". */
async function settled<T>(p: Promise<T>): Promise<T | "pending"> {
  return await Promise.race([p, Bun.sleep(5).then(() => "pending" as const)]);
}

const reasonOf = (e: unknown) => (e instanceof RelayError ? [e.code, e.details?.reason] : e);

describe("the sequence gate answers with values", () => {
  test("a lone transaction goes at once, and its account is forgotten once it is applied", async () => {
    const { gate } = gateOf();
    expect(await gate.enter(tx(10n))).toBeNull();
    expect(await gate.ended(tx(10n), "applied")).toBe("stands");
    // nothing of the account is left: the next one is lone again
    let wrote = 0;
    expect(await gate.enter(tx(11n), async () => void wrote++)).toBeNull();
    expect(wrote).toBe(0);
  });

  test("a successor is written, held, and sent once its predecessor is applied", async () => {
    const { gate } = gateOf();
    expect(await gate.enter(tx(10n))).toBeNull();
    let wrote = 0;
    const next = gate.enter(tx(11n), async () => void wrote++);
    expect(await settled(next)).toBe("pending");
    expect([wrote, gate.held]).toEqual([1, 1]);
    expect(gate.waiting("tx11")?.waitingFor).toEqual({ account: ACCOUNT, sequence: "11", waitingFor: "10" });
    expect(await gate.ended(tx(10n), "applied")).toBe("stands");
    expect(await next).toBeNull();
    expect(gate.held).toBe(0);
  });

  test("a predecessor rejected before any ledger: the held one is refused, as a value", async () => {
    const { gate } = gateOf();
    await gate.enter(tx(10n));
    const next = gate.enter(tx(11n), async () => {});
    await settled(next);
    expect(await gate.ended(tx(10n), "rejected")).toBe("stands");
    expect(reasonOf(await next)).toEqual(["SUBMISSION_FAILED", "predecessor_rejected"]);
  });

  test("a gap never filled is refused after the hold time, naming the number it waited for", async () => {
    const { gate } = gateOf({ holdMs: 60 });
    await gate.enter(tx(10n));
    const after = await gate.enter(tx(12n), async () => {});
    expect(reasonOf(after)).toEqual(["SUBMISSION_FAILED", "sequence_gap"]);
    expect((after as RelayError).details?.waitingFor).toBe("11");
    expect(gate.held).toBe(0);
  });

  test("past the account's limit: 429 at once, nothing written", async () => {
    const { gate } = gateOf({ perAccount: 1 });
    await gate.enter(tx(10n));
    void gate.enter(tx(11n), async () => {});
    let wrote = 0;
    const third = await gate.enter(tx(12n), async () => void wrote++);
    expect(reasonOf(third)).toEqual(["RATE_LIMIT_EXCEEDED", "too_many_held_for_account"]);
    expect([wrote, gate.held]).toEqual([0, 1]);
    gate.stop();
  });

  test("a held transaction whose row cannot be written is not held: the write's error is the answer", async () => {
    const { gate } = gateOf();
    await gate.enter(tx(10n));
    const answer = await gate.enter(tx(11n), async () => {
      throw new Error("database down");
    });
    expect(answer).toBeInstanceOf(Error);
    expect((answer as Error).message).toBe("database down");
    expect(gate.held).toBe(0);
  });

  test("the relay stopping answers every held transaction 503, kept for recovery", async () => {
    const { gate } = gateOf();
    await gate.enter(tx(10n));
    const next = gate.enter(tx(11n), async () => {});
    await settled(next);
    gate.stop();
    expect(reasonOf(await next)).toEqual(["NETWORK_UNAVAILABLE", "stopping"]);
  });

  test("out of order behind the chain: the rejection stands, without holding it", async () => {
    const { gate, reads } = gateOf({}, { seq: 11n });
    await gate.enter(tx(12n));
    expect(await gate.ended(tx(12n), "out_of_order", async () => {})).toBe("stands");
    expect([reads(), gate.held]).toEqual([1, 0]);
  });

  test("out of order ahead of the chain: held again, and sent again once its predecessor is applied", async () => {
    const chain = { seq: 10n };
    const { gate } = gateOf({}, chain);
    expect(await gate.enter(tx(12n))).toBeNull(); // lone: it goes, and the network says it is early
    let wrote = 0;
    const after = gate.ended(tx(12n), "out_of_order", async () => void wrote++);
    expect(await settled(after)).toBe("pending");
    expect([wrote, gate.held]).toEqual([1, 1]);
    expect(await gate.enter(tx(11n))).toBeNull(); // its predecessor arrives and goes
    expect(await settled(after)).toBe("pending");
    chain.seq = 11n;
    expect(await gate.ended(tx(11n), "applied")).toBe("stands");
    expect(await after).toBe("again");
  });

  test("out of order ahead of the chain past the limit: 429 as a value, and the account goes on without it", async () => {
    const chain = { seq: 10n };
    const { gate } = gateOf({ perAccount: 1 }, chain);
    await gate.enter(tx(12n));
    const held = gate.enter(tx(13n), async () => {}); // waits for 12: the account's one hold
    await settled(held);
    const after = await gate.ended(tx(12n), "out_of_order", async () => {});
    expect(reasonOf(after)).toEqual(["RATE_LIMIT_EXCEEDED", "too_many_held_for_account"]);
    // 12 left the account's order (nothing of it in flight): once the chain has used 12, 13 goes
    chain.seq = 12n;
    expect(await held).toBeNull();
  });
});
