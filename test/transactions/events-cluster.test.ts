/**
 * GET /v1/events in a cluster (test/support/cluster.ts: two relay processes on one Postgres and one
 * Redis, upstream localnets): a client connected to either instance sees the events of transactions
 * sponsored through both, in id order; a client that moves to the other instance resumes there with
 * Last-Event-ID, every event once. Skipped without TEST_DATABASE_URL or a Redis at REDIS_URL.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Asset, Operation, TransactionBuilder, type Keypair } from "@stellar/stellar-sdk";
import { startCluster, type Cluster } from "../support/cluster.ts";
import { until, xdrOf } from "../support/harness.ts";
import { redisUp } from "../support/redis.ts";
import { SseClient, type SseItem } from "../support/sse.ts";

const enabled = Boolean(process.env.TEST_DATABASE_URL) && redisUp;

/** The transaction.status events of the stream so far, parsed. */
const statuses = (items: SseItem[]) =>
  items
    .filter((i) => i.event === "transaction.status")
    .map((i) => ({ id: BigInt(i.id!), ...(JSON.parse(i.data!) as { innerHash: string; status: string }) }));

describe.skipIf(!enabled)("the event stream in a cluster", () => {
  let c: Cluster;
  let key: string;
  const clients: SseClient[] = [];
  beforeAll(
    async () => {
      c = await startCluster({ instances: 2, mainnetChannels: 1, testnetChannels: 2 });
      const project = await c.admin(0, "POST", "/projects", { name: "events" });
      expect(project.status).toBe(201);
      const id = project.body.id as string;
      const created = await c.admin(0, "POST", `/projects/${id}/keys`, { environment: "test" });
      expect(created.status).toBe(201);
      key = created.body.key as string;
      await until(
        "the project and both instances' testnet channels ready",
        async () => {
          const known = await Promise.all([0, 1].map((i) => c.admin(i, "GET", `/projects/${id}`)));
          const pools = await Promise.all([0, 1].map((i) => c.channels(i, "testnet")));
          const holds = (p: any) => p?.channels?.some((ch: { holder: unknown }) => ch.holder === p.instance);
          return known.every((r) => r.status === 200) && pools.some(holds);
        },
        60_000,
        100,
      );
    },
    { timeout: 120_000 },
  );
  afterAll(async () => {
    for (const s of clients) s.close();
    await c?.stop();
  }, 60_000);
  const open = async (i: number, headers: Record<string, string> = {}) => {
    const s = await SseClient.open(c.instances[i]!.url, { "x-api-key": key, ...headers });
    expect(s.res.status).toBe(200);
    clients.push(s);
    await s.until((items) => (items.length ? true : undefined)); // connected
    return s;
  };
  const sponsorVia = async (i: number, user: Keypair) => {
    const net = c.nets.testnet;
    const tx = new TransactionBuilder(await net.server.getAccount(user.publicKey()), {
      fee: "100",
      networkPassphrase: net.passphrase,
    })
      .addOperation(Operation.payment({ destination: net.funder.publicKey(), asset: Asset.native(), amount: "1" }))
      .setTimeout(300)
      .build();
    tx.sign(user);
    const res = await fetch(`${c.instances[i]!.url}/v1/sponsor`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": key },
      body: JSON.stringify({ transaction: xdrOf(tx), network: "testnet" }),
    });
    expect(res.status).toBe(200);
    return Buffer.from(tx.hash()).toString("hex");
  };
  /** Waits until `s` has every status of each transaction up to success; answers its statuses. */
  const settled = (s: SseClient, inner: string[]) =>
    s.until((items) => {
      const all = statuses(items);
      return inner.every((h) => all.some((e) => e.innerHash === h && e.status === "success")) ? all : undefined;
    }, 30_000);

  test(
    "a client on either instance sees the statuses of transactions sponsored through both, in id order",
    async () => {
      const [on0, on1] = [await open(0), await open(1)];
      const [u0, u1] = await c.nets.testnet.funded(2);
      const inner = [await sponsorVia(0, u0!), await sponsorVia(1, u1!)];
      const [seen0, seen1] = [await settled(on0, inner), await settled(on1, inner)];
      expect(seen1).toEqual(seen0);
      for (const h of inner)
        expect(seen0.filter((e) => e.innerHash === h).map((e) => e.status)).toEqual(["submitted", "success"]);
      const ids = seen0.map((e) => e.id);
      expect(ids.every((id, k) => k === 0 || ids[k - 1]! < id)).toBe(true);
    },
    { timeout: 60_000 },
  );

  test(
    "a client that moves to the other instance resumes there with Last-Event-ID: every later event once",
    async () => {
      const first = await open(0);
      const [u0, u1] = await c.nets.testnet.funded(2);
      const earlier = await sponsorVia(1, u0!);
      const seen = await settled(first, [earlier]);
      const resumeAfter = seen.find((e) => e.innerHash === earlier && e.status === "submitted")!.id;
      first.close();
      const later = await sponsorVia(0, u1!);
      const second = await open(1, { "last-event-id": String(resumeAfter) });
      const resumed = await settled(second, [earlier, later]);
      // earlier's success was seen before later was sent: the order is known
      expect(resumed.map((e) => [e.innerHash, e.status])).toEqual([
        [earlier, "success"],
        [later, "submitted"],
        [later, "success"],
      ]);
      expect(resumed.every((e) => e.id > resumeAfter)).toBe(true);
      expect(new Set(resumed.map((e) => e.id)).size).toBe(resumed.length);
    },
    { timeout: 60_000 },
  );
});
