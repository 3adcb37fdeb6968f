/** Fee-bump leases over the real pool and channel actors: a turn's picks as one ASSIGN, waiting, failures. */
import { describe, expect, test } from "bun:test";
import { Keypair } from "@stellar/stellar-sdk";
import { Channels } from "../../src/features/pool/channels.ts";
import { Leases } from "../../src/features/pool/leases.ts";
import type { AccountSync } from "../../src/features/pool/account-sync.ts";

const RESERVE = 10_000_000n;

/** A pool of channels with 1,000 stroops of room each, and the events its actors were sent. */
function pool(n: number) {
  const channels = new Channels(Keypair.random());
  for (let i = 0; i < n; i++) {
    const k = Keypair.random();
    channels.keys.set(k.publicKey(), k);
    const channel = { publicKey: k.publicKey(), balance: RESERVE + 1_000n, reserve: RESERVE, seq: 1n };
    channels.pool.send({ type: "ADD", channel: { ...channel, state: "active" } });
  }
  const events: string[] = [];
  let failAssign: Error | null = null;
  const send = channels.pool.send.bind(channels.pool);
  channels.pool.send = (e) => {
    if (e.type === "ASSIGN" && failAssign) throw failAssign;
    if (e.type === "ASSIGN") events.push(`ASSIGN ${e.fees.length}`);
    send(e);
  };
  for (const ref of Object.values(channels.refs())) {
    const to = ref.send.bind(ref);
    ref.send = (e) => {
      if (e.type === "RELEASE") events.push(`RELEASE ${e.ends.length}`);
      to(e);
    };
  }
  const leases = new Leases(channels, {} as AccountSync, {
    network: "testnet",
    most: 1_000n,
    waitMs: 5_000,
    upkeep: () => {},
    stopped: () => false,
    exhausted: () => {},
    shortage: () => new Error("no channel could pay"),
  });
  const context = () => Object.values(channels.refs()).map((r) => r.getSnapshot().context);
  return { leases, events, context, fail: (e: Error | null) => (failAssign = e) };
}

describe("leases", () => {
  test("a turn's fee sources are one ASSIGN; one with no room waits and is served when a lease ends", async () => {
    const p = pool(2);
    const asked = [600n, 600n, 600n].map((fee) => p.leases.assign(fee));
    const [a, b] = await Promise.all(asked.slice(0, 2));
    expect(p.events).toEqual(["ASSIGN 3"]);
    expect(a!.keypair.publicKey()).not.toBe(b!.keypair.publicKey());
    expect(p.leases.waitingCount).toBe(1);
    a!.end(100n);
    const c = await asked[2]!;
    expect(c.keypair.publicKey()).toBe(a!.keypair.publicKey());
    expect(p.events).toEqual(["ASSIGN 3", "RELEASE 1", "ASSIGN 1"]);
    // the channel that paid: its fee charged, the waiting request's fee held
    const paid = p.context().find((x) => x.publicKey === a!.keypair.publicKey())!;
    expect([paid.balance - RESERVE, paid.held]).toEqual([900n, 600n]);
  });

  test("a turn's lease ends reach each channel as one RELEASE", async () => {
    const p = pool(1);
    const leases = await Promise.all([100n, 200n, 300n].map((fee) => p.leases.assign(fee)));
    for (const l of leases) l.end(50n);
    await Bun.sleep(0); // the turn's ends go out after its answers
    await new Promise((r) => setImmediate(r));
    expect(p.events).toEqual(["ASSIGN 3", "RELEASE 3"]);
    expect(p.context().map((x) => [x.balance - RESERVE, x.held])).toEqual([[850n, 0n]]);
  });

  test("a waiting request whose pick fails gets the error; the loop and the next requests go on", async () => {
    const p = pool(1);
    const first = await p.leases.assign(1_000n);
    const waiting = p.leases.assign(500n);
    await Bun.sleep(0);
    expect(p.leases.waitingCount).toBe(1);
    p.fail(new Error("the pool actor did not answer"));
    first.end(0n);
    expect(waiting).rejects.toThrow("the pool actor did not answer");
    await waiting.catch(() => {});
    expect(p.leases.waitingCount).toBe(0);
    p.fail(null);
    const next = await p.leases.assign(500n);
    expect(next.keypair.publicKey()).toBe(first.keypair.publicKey());
  });
});
