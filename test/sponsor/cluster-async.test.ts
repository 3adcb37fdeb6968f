/**
 * Prefer: respond-async in a cluster (two relay processes on one Postgres and one Redis, upstream
 * localnets with 3 s ledgers): the same signed transaction sent through both instances at once is
 * one submission; the instance that does not run it answers 202 as soon as the other's run was
 * accepted by the network (from the submission's recorded status), not at the ledger's close.
 * Skipped without TEST_DATABASE_URL or a Redis at REDIS_URL.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Asset, Operation, TransactionBuilder } from "@stellar/stellar-sdk";
import { startCluster, type Cluster } from "../support/cluster.ts";
import { until, xdrOf } from "../support/harness.ts";
import { redisUp } from "../support/redis.ts";

const enabled = Boolean(process.env.TEST_DATABASE_URL) && redisUp;
let c: Cluster;
let key: string;

beforeAll(
  async () => {
    if (!enabled) return;
    c = await startCluster({ instances: 2, mainnetChannels: 1, testnetChannels: 2, ledgerCloseMs: 3000 });
    const project = await c.admin(0, "POST", "/projects", { name: "async" });
    const id = project.body.id as string;
    key = (await c.admin(0, "POST", `/projects/${id}/keys`, { environment: "test" })).body.key as string;
    await until(
      "the project known and testnet channels held",
      async () => {
        const known = await Promise.all([0, 1].map((i) => c.admin(i, "GET", `/projects/${id}`)));
        const pools = await Promise.all([0, 1].map((i) => c.channels(i, "testnet")));
        const holds = (p: any) => p?.channels?.some((ch: { holder: unknown }) => ch.holder === p.instance);
        return known.every((r) => r.status === 200) && pools.every(holds);
      },
      60_000,
      100,
    );
  },
  { timeout: 120_000 },
);
afterAll(async () => {
  await c?.stop();
}, 60_000);

test.skipIf(!enabled)(
  "the same transaction through both instances at once: both 202 submitted before the ledger closes",
  async () => {
    const net = c.nets.testnet;
    const [user] = await net.funded(1);
    const tx = new TransactionBuilder(await net.server.getAccount(user!.publicKey()), {
      fee: "100",
      networkPassphrase: net.passphrase,
    })
      .addOperation(Operation.payment({ destination: net.funder.publicKey(), asset: Asset.native(), amount: "1" }))
      .setTimeout(300)
      .build();
    tx.sign(user!);
    const innerHash = Buffer.from(tx.hash()).toString("hex");
    const send = async (i: number) => {
      const t0 = Date.now();
      const res = await fetch(`${c.instances[i]!.url}/v1/sponsor`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": key, prefer: "respond-async" },
        body: JSON.stringify({ transaction: xdrOf(tx), network: "testnet" }),
      });
      return { status: res.status, body: (await res.json()) as any, ms: Date.now() - t0 };
    };
    const answers = await Promise.all([send(0), send(1)]);
    for (const a of answers) {
      expect(a.status).toBe(202);
      expect(a.body).toMatchObject({ innerHash, status: "submitted" });
    }
    const done = await fetch(`${c.instances[0]!.url}/v1/transactions/${innerHash}?wait=10`, {
      headers: { "x-api-key": key },
    });
    const view = (await done.json()) as any;
    expect(view.status).toBe("success");
    expect(view.attempts).toHaveLength(1); // one submission, sent once
    console.log(`202s through i0 and i1 after ${answers.map((a) => a.ms).join(" and ")} ms (3 s ledgers)`);
  },
  { timeout: 60_000 },
);
