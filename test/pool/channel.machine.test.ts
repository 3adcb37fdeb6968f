/** The channel and pool machines driven with events alone: fee room, own-transaction sequence numbers, draining, assignment. */
import { describe, expect, test } from "bun:test";
import { createActor } from "xstate";
import { channelMachine, available, type ChannelInput, type ChannelReply } from "../../actors/pool/channel.machine.ts";
import { type AcquireReply, type AssignReply, poolMachine } from "../../actors/pool/pool.machine.ts";
import { ask } from "../../actors/ask.ts";

const RESERVE = 10_000_000n;
const SEQ = 1000n << 32n;

function channel(over: Partial<ChannelInput> = {}) {
  const actor = createActor(channelMachine, {
    input: { publicKey: "GA", balance: RESERVE + 1_000n, reserve: RESERVE, seq: SEQ, state: "active", ...over },
  }).start();
  let n = 0;
  const send = (e: Record<string, unknown> & { type: string }) =>
    ask<ChannelReply>(actor, { id: `r${n++}`, ...e } as never);
  /** One fee-bump's HOLD, answered by its reply. */
  const hold = (id: string, fee: bigint) =>
    ask<ChannelReply>(actor, { type: "HOLD", id, holds: [{ id, fee }] } as never);
  return { actor, send, hold, ctx: () => actor.getSnapshot().context, state: () => actor.getSnapshot().value };
}

describe("channel: fee room", () => {
  test("HOLD takes room up to balance − reserve; RELEASE frees it and takes the fee charged", async () => {
    const c = channel();
    expect((await c.hold("a", 600n)).ok).toBe(true);
    expect(available(c.ctx())).toBe(400n);
    const refused = await c.hold("b", 401n);
    expect(refused).toMatchObject({ ok: false, reason: "insufficient_balance" });
    expect((await c.hold("b", 400n)).ok).toBe(true);
    c.actor.send({ type: "RELEASE", ends: [{ id: "a", charged: 200n }] });
    expect(c.ctx().balance).toBe(RESERVE + 800n);
    expect(available(c.ctx())).toBe(400n);
    c.actor.send({ type: "RELEASE", ends: [{ id: "a", charged: 200n }] }); // a second release of the same hold changes nothing
    expect(c.ctx().balance).toBe(RESERVE + 800n);
  });

  test("one HOLD of several fee-bumps checks each against the room the ones before it left", () => {
    const c = channel();
    const replies: ChannelReply[] = [];
    const sub = c.actor.on("reply", (r) => void replies.push(r));
    const holds = [
      { id: "a", fee: 600n },
      { id: "b", fee: 401n },
      { id: "c", fee: 400n },
    ];
    c.actor.send({ type: "HOLD", holds });
    sub.unsubscribe();
    expect(replies.map((r) => [r.id, r.ok])).toEqual([
      ["a", true],
      ["b", false],
      ["c", true],
    ]);
    expect(c.ctx().held).toBe(1_000n);
    expect([...c.ctx().holds.keys()]).toEqual(["a", "c"]);
    expect(available(c.ctx())).toBe(0n);
  });

  test("CREDIT adds a top-up; SYNC takes the network's balance", () => {
    const c = channel();
    c.actor.send({ type: "CREDIT", amount: 5_000n });
    expect(c.ctx().balance).toBe(RESERVE + 6_000n);
    c.actor.send({ type: "SYNC", balance: RESERVE + 42n });
    expect(c.ctx().balance).toBe(RESERVE + 42n);
  });
});

describe("channel: own transactions", () => {
  test("one at a time: TAKE gives seq + 1, a second TAKE is busy until DONE", async () => {
    const c = channel();
    expect(await c.send({ type: "TAKE", id: "t1", fee: 100n })).toMatchObject({ ok: true, seq: SEQ + 1n });
    expect(await c.send({ type: "TAKE", id: "t2", fee: 100n })).toMatchObject({ ok: false, reason: "busy" });
    c.actor.send({ type: "DONE", id: "t1", charged: 100n, consumed: true });
    expect(c.ctx().balance).toBe(RESERVE + 900n);
    expect(await c.send({ type: "TAKE", id: "t2", fee: 100n })).toMatchObject({ ok: true, seq: SEQ + 2n });
  });

  test("a transaction that reached no ledger gives its sequence number back", async () => {
    const c = channel();
    await c.send({ type: "TAKE", id: "t1", fee: 100n });
    c.actor.send({ type: "DONE", id: "t1", charged: 0n, consumed: false });
    expect(await c.send({ type: "TAKE", id: "t2", fee: 100n })).toMatchObject({ ok: true, seq: SEQ + 1n });
  });

  test("RESEQ after tx_bad_seq: raise-only, unless allowed lower; the number then stays with the outcome", async () => {
    const c = channel();
    await c.send({ type: "TAKE", id: "t1", fee: 100n });
    c.actor.send({ type: "RESEQ", id: "t1", seq: SEQ + 5n, allowLower: false }); // an external transaction used 5 numbers
    expect(c.ctx().seq).toBe(SEQ + 6n);
    c.actor.send({ type: "RESEQ", id: "t1", seq: SEQ, allowLower: false }); // a stale read cannot lower it
    expect(c.ctx().seq).toBe(SEQ + 6n);
    c.actor.send({ type: "RESEQ", id: "other", seq: SEQ + 50n, allowLower: true }); // only the pending transaction's holder
    expect(c.ctx().seq).toBe(SEQ + 6n);
    c.actor.send({ type: "DONE", id: "t1", charged: 100n, consumed: true });
    expect(await c.send({ type: "TAKE", id: "t2", fee: 100n })).toMatchObject({ ok: true, seq: SEQ + 7n });
    c.actor.send({ type: "RESEQ", id: "t2", seq: SEQ + 2n, allowLower: true }); // repeated tx_bad_seq: the network is behind
    expect(c.ctx().seq).toBe(SEQ + 3n);
    c.actor.send({ type: "DONE", id: "t2", charged: 0n, consumed: false });
    expect(c.ctx().seq).toBe(SEQ + 2n);
  });

  test("SYNC raises the sequence number only", () => {
    const c = channel();
    c.actor.send({ type: "SYNC", seq: SEQ - 10n });
    expect(c.ctx().seq).toBe(SEQ);
    c.actor.send({ type: "SYNC", seq: SEQ + 3n });
    expect(c.ctx().seq).toBe(SEQ + 3n);
  });
});

describe("channel: states", () => {
  test("creating takes no work until ACTIVATE", async () => {
    const c = channel({ state: "creating", balance: 0n, seq: 0n });
    expect(c.state()).toBe("creating");
    expect(await c.hold("a", 1n)).toMatchObject({ ok: false, reason: "not_active" });
    c.actor.send({ type: "ACTIVATE", balance: RESERVE + 500n, seq: SEQ });
    expect(c.state()).toBe("active");
    expect((await c.hold("a", 500n)).ok).toBe(true);
  });

  test("draining refuses new work but lets in-flight fees settle and runs its own merge", async () => {
    const c = channel();
    await c.hold("a", 300n);
    c.actor.send({ type: "RETIRE" });
    expect(c.state()).toBe("draining");
    expect(await c.hold("b", 1n)).toMatchObject({ ok: false, reason: "not_active" });
    expect(await c.send({ type: "TAKE", id: "t", fee: 100n })).toMatchObject({ ok: false, reason: "not_active" });
    c.actor.send({ type: "RELEASE", ends: [{ id: "a", charged: 300n }] });
    expect(c.ctx().holds.size).toBe(0);
    expect(await c.send({ type: "TAKE", id: "m", fee: 100n, internal: true })).toMatchObject({
      ok: true,
      seq: SEQ + 1n,
    });
  });

  test("retired while being created: it stays draining and learns its balance when the account exists", () => {
    const c = channel({ state: "creating", balance: 0n, seq: 0n });
    c.actor.send({ type: "RETIRE" });
    c.actor.send({ type: "ACTIVATE", balance: RESERVE + 500n, seq: SEQ });
    expect(c.state()).toBe("draining");
    expect(c.ctx()).toMatchObject({ balance: RESERVE + 500n, seq: SEQ });
  });

  test("a restored channel starts in its stored state", () => {
    expect(channel({ state: "draining" }).state()).toBe("draining");
  });
});

describe("pool: assignment", () => {
  function pool(balances: bigint[]) {
    const actor = createActor(poolMachine).start();
    for (const [i, b] of balances.entries())
      actor.send({
        type: "ADD",
        channel: { publicKey: `G${i}`, balance: RESERVE + b, reserve: RESERVE, seq: SEQ, state: "active" },
      });
    let n = 0;
    const send = (e: Record<string, unknown> & { type: string }) =>
      ask<AcquireReply>(actor, { id: `p${n++}`, ...e } as never);
    /** One ASSIGN of these fees: each one's channel, in order. */
    const assign = async (...fees: bigint[]) => {
      const id = `p${n++}`;
      const holds = fees.map((fee, i) => ({ id: `${id}.${i}`, fee }));
      return (await ask<AssignReply>(actor, { type: "ASSIGN", id, fees: holds })).publicKeys;
    };
    const ctx = (pk: string) => actor.getSnapshot().context.channels[pk]!.getSnapshot().context;
    return { actor, send, assign, ctx };
  }

  test("each fee-bump goes to the channel with the most room, so load spreads and room is never over-committed", async () => {
    const p = pool([1_000n, 3_000n, 2_000n]);
    // one ASSIGN of seven (a turn's requests): each sees the holds of the ones before it
    const picks = await p.assign(...Array.from({ length: 7 }, () => 800n));
    // the most room each time: G1 (3000, then 2200), G2 (2000), G1 (1400), G2 (1200), G0 (1000); then none has 800
    expect(picks).toEqual(["G1", "G1", "G2", "G1", "G2", "G0", null]);
    for (const pk of ["G0", "G1", "G2"]) expect(available(p.ctx(pk)) >= 0n).toBe(true);
    expect(p.ctx("G1").holds.size).toBe(3);
    // ASSIGNs sent back to back, without awaiting, see each other's holds too
    const q = pool([1_000n, 3_000n, 2_000n]);
    const one = await Promise.all(Array.from({ length: 7 }, () => q.assign(800n)));
    expect(one.flat()).toEqual(picks);
  });

  test("retired and creating channels are never assigned", async () => {
    const p = pool([5_000n, 1_000n]);
    p.actor.getSnapshot().context.channels.G0!.send({ type: "RETIRE" });
    expect(await p.assign(500n)).toEqual(["G1"]);
    p.actor.send({
      type: "ADD",
      channel: { publicKey: "G9", balance: 0n, reserve: RESERVE, seq: 0n, state: "creating" },
    });
    expect(await p.assign(501n)).toEqual([null]); // G1 has 500 left, G0 is draining, G9 creating
  });

  test("ACQUIRE skips channels with an own transaction pending and answers the sequence number", async () => {
    const p = pool([1_000n, 900n]);
    const a = await p.send({ type: "ACQUIRE", fee: 100n });
    expect(a).toMatchObject({ publicKey: "G0", seq: SEQ + 1n });
    const b = await p.send({ type: "ACQUIRE", fee: 100n });
    expect(b).toMatchObject({ publicKey: "G1", seq: SEQ + 1n });
    expect((await p.send({ type: "ACQUIRE", fee: 100n })).publicKey).toBe(null);
    // fee-bumps still go to a channel that runs an own transaction
    expect(await p.assign(100n)).toEqual(["G0"]);
    p.actor.getSnapshot().context.channels.G0!.send({ type: "DONE", id: a.id, charged: 100n, consumed: true });
    expect(await p.send({ type: "ACQUIRE", fee: 100n })).toMatchObject({ publicKey: "G0", seq: SEQ + 2n });
  });

  test("REMOVE stops a merged channel's actor", async () => {
    const p = pool([1_000n]);
    p.actor.send({ type: "REMOVE", publicKey: "G0" });
    expect(p.actor.getSnapshot().context.channels).toEqual({});
    expect(await p.assign(1n)).toEqual([null]);
  });
});
