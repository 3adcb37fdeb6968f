/**
 * Soroban bursts larger than the channel pool (func+auth: each transaction needs a channel of its own
 * until its ledger): requests wait for a channel as long as their deadline allows, in turns across
 * projects; the pool grows while requests wait, up to its maximum, and shrinks back once idle; a 503
 * says what is really short.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { until } from "../support/harness.ts";
import { startTestRelay, type TestRelay } from "../support/relay.ts";
import { signedTransfer } from "../support/sac.ts";

const started: TestRelay[] = [];
afterAll(async () => {
  for (const r of started) await r.stop();
});
async function relay(env: Record<string, string>) {
  const r = await startTestRelay({ LEDGER_CLOSE_MS: "400", ...env });
  started.push(r);
  return r;
}
const pool = async (r: TestRelay) => (await r.admin("GET", "/channels?network=testnet")).body;
const sponsorOp = (r: TestRelay, operation: string, key?: string) =>
  r.post("/v1/sponsor", { operation, network: "testnet" }, key ? { "x-api-key": key } : {});

describe("bursts larger than the pool", () => {
  test("the maximum is set at runtime (PUT /v1/admin/channels {max}) and shown", async () => {
    const r = await relay({ TESTNET_CHANNELS: "2" });
    expect((await pool(r)).max).toBe(16); // 8 times the count by default
    const res = await r.admin("PUT", "/channels", { network: "testnet", max: 5 });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ network: "testnet", max: 5, target: 2 });
    expect((await pool(r)).max).toBe(5);
    expect((await r.admin("PUT", "/channels", { network: "testnet" })).status).toBe(400);
  });

  test("a burst of 4x the pool all succeeds; the pool grows while requests wait, then shrinks back when idle", async () => {
    const r = await relay({ TESTNET_CHANNELS: "2", TESTNET_CHANNELS_MAX: "6", POOL_IDLE_MS: "4000" });
    const [from, to] = [await r.funded(), await r.funded()];
    const ops = await Promise.all(Array.from({ length: 8 }, () => signedTransfer(r, from, to)));
    const answers = await Promise.all(ops.map((op) => sponsorOp(r, op)));
    const grown = await pool(r);
    for (const a of answers) expect(a.status).toBe(200);
    expect(grown.max).toBe(6);
    expect(grown.target).toBeGreaterThan(2);
    expect(grown.target).toBeLessThanOrEqual(6);
    for (const a of answers) expect((await r.rpc.getTransaction(a.body.hash)).status).toBe("SUCCESS" as never);
    const metrics = await (await fetch(`${r.url}/metrics`)).text();
    expect(metrics).toContain('relay_channels_max{network="testnet"} 6');
    expect(metrics).toMatch(/relay_channel_wait_seconds_count\{network="testnet",outcome="served"\} [1-9]/);
    await until("the extra channels retired", async () => (await pool(r)).totals.active === 2, 30_000, 200);
    expect((await pool(r)).target).toBe(2);
  }, 60_000); // 11 s on a quiet machine (ledgers of 400 ms, 4 s idle before the pool shrinks)

  test("turns across projects: one project's burst does not starve another's single request", async () => {
    const r = await relay({ TESTNET_CHANNELS: "1", TESTNET_CHANNELS_MAX: "1" });
    const [a, b] = [await r.project(), await r.project()];
    const [from, to] = [await r.funded(), await r.funded()];
    const burst = await Promise.all(Array.from({ length: 6 }, () => signedTransfer(r, from, to)));
    const single = await signedTransfer(r, from, to);
    const first = burst.map((op) => sponsorOp(r, op, a.testKey));
    await Bun.sleep(50);
    const lone = await sponsorOp(r, single, b.testKey);
    const answers = await Promise.all(first);
    expect(lone.status).toBe(200);
    for (const x of answers) expect(x.status).toBe(200);
    // one channel: one transaction a ledger; the lone request goes right after the burst's first
    const later = answers.filter((x) => x.body.ledger > lone.body.ledger).length;
    expect(later).toBeGreaterThanOrEqual(4);
  });

  test("no channel free before the deadline: 503 channels_busy, with how many wait", async () => {
    const r = await relay({
      TESTNET_CHANNELS: "1",
      TESTNET_CHANNELS_MAX: "1",
      LEDGER_CLOSE_MS: "3000", // the first holds the only channel until its ledger
      SUBMISSION_TIMEOUT_MS: "800",
    });
    const [from, to] = [await r.funded(), await r.funded()];
    const ops = await Promise.all([signedTransfer(r, from, to), signedTransfer(r, from, to)]);
    const [x, y] = await Promise.all(ops.map((op) => sponsorOp(r, op)));
    const refused = [x, y].find((a) => a.status === 503)!;
    expect(refused).toBeDefined();
    expect(refused.body.error.details.reason).toBe("channels_busy");
    expect(refused.body.error.details.waiting).toBeGreaterThanOrEqual(1);
    expect(refused.body.error.message).toContain("busy");
  }, 60_000); // 11 s on a quiet machine: ledgers of 3 s, from the pool's funding on
});

describe("a func+auth transaction answered 504", () => {
  test("keeps its channel until it is resolved: the next request waits (not sent behind it), then runs", async () => {
    const r = await relay({
      TESTNET_CHANNELS: "1",
      TESTNET_CHANNELS_MAX: "1",
      LEDGER_CLOSE_MS: "0",
      SUBMISSION_TIMEOUT_MS: "300",
      RECOVERY_INTERVAL_MS: "100",
    });
    const net = r.networks.get("testnet").localnet!;
    const [from, to] = [await r.funded(), await r.funded()];
    const [op1, op2, op3] = await Promise.all([1, 2, 3].map(() => signedTransfer(r, from, to)));
    const first = await sponsorOp(r, op1!);
    expect(first.status).toBe(504);
    expect(net.queue.size).toBe(1); // still queued: its channel holds it as its one transaction
    const second = await sponsorOp(r, op2!);
    expect(second.status).toBe(503);
    expect(second.body.error.details.reason).toBe("channels_busy");
    expect(net.queue.size).toBe(1); // nothing sent behind it
    r.close();
    // recovery finds it in the ledger: the channel is free again, its sequence number used
    await until("the first resolved", async () => (await pool(r)).totals.inFlight.count === 0, 20_000, 50);
    const third = sponsorOp(r, op3!);
    await until("the third sent", () => net.queue.size === 1, 20_000, 20);
    r.close();
    const res = await third;
    expect(res.status).toBe(200);
    expect((await r.rpc.getTransaction(res.body.hash)).status).toBe("SUCCESS" as never);
  });
});
