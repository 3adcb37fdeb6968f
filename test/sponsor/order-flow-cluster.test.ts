/**
 * Order flow through two instances of a cluster: one account's 12 payments sent at once, spread over
 * both instances (odd and even sequence numbers each to its own), all land in sequence order, one a
 * ledger, with no coordination but the chain (an instance sends a transaction once the account's
 * sequence number on the network is its predecessor's). And held transactions are submissions: those
 * held by one instance are looked up through the other (pending, waitingFor), and sent by it once the
 * first is killed -9. Needs Postgres and Redis.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Asset, Operation, TransactionBuilder, type Keypair } from "@stellar/stellar-sdk";
import { startCluster, type Cluster, type ClusterNet } from "../support/cluster.ts";
import { until, xdrOf } from "../support/harness.ts";
import { redisUp } from "../support/redis.ts";

const enabled = Boolean(process.env.TEST_DATABASE_URL) && redisUp;
let c: Cluster;
let key: string;

beforeAll(
  async () => {
    if (!enabled) return;
    c = await startCluster({ instances: 2, mainnetChannels: 1, testnetChannels: 2, ledgerCloseMs: 1000 });
    const project = await c.admin(0, "POST", "/projects", { name: "order flow" });
    const id = project.body.id as string;
    key = (await c.admin(0, "POST", `/projects/${id}/keys`, { environment: "test" })).body.key as string;
    await until(
      "the project known and testnet channels held by both",
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

async function payments(net: ClusterNet, user: Keypair, n: number) {
  const account = await net.server.getAccount(user.publicKey());
  return Array.from({ length: n }, () => {
    const tx = new TransactionBuilder(account, { fee: "100", networkPassphrase: net.passphrase })
      .addOperation(Operation.payment({ destination: net.funder.publicKey(), asset: Asset.native(), amount: "1" }))
      .setTimeout(300)
      .build(); // each build takes the account's next sequence number
    tx.sign(user);
    return tx;
  });
}

test.skipIf(!enabled)(
  "12 payments of one account through two instances at once: all 200, in sequence order, as the chain has them",
  async () => {
    const net = c.nets.testnet;
    const [user] = await net.funded(1);
    const txs = await payments(net, user!, 12);
    const answers = await Promise.all(
      txs.map(async (tx, i) => {
        const res = await fetch(`${c.instances[i % 2]!.url}/v1/sponsor`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-api-key": key },
          body: JSON.stringify({ transaction: xdrOf(tx), network: "testnet" }),
        });
        return { status: res.status, body: (await res.json()) as any };
      }),
    );
    for (const a of answers) expect(a.status).toBe(200);
    const ledgers = answers.map((a) => a.body.ledger as number);
    for (let i = 1; i < ledgers.length; i++) expect(ledgers[i]!).toBeGreaterThan(ledgers[i - 1]!);
    for (const a of answers) {
      const got = await net.server.getTransaction(a.body.hash);
      expect(got.status).toBe("SUCCESS" as never);
      expect((got as { ledger: number }).ledger).toBe(a.body.ledger);
    }
    const spread = ledgers.at(-1)! - ledgers[0]! + 1;
    console.log(`12 payments through 2 instances: ledgers ${ledgers.join(", ")} (${spread} ledgers for 12)`);
  },
  { timeout: 90_000 },
);

test.skipIf(!enabled)(
  "held through one instance: the other looks them up (pending, waitingFor), and sends them when the first dies",
  async () => {
    const net = c.nets.testnet;
    const [user] = await net.funded(1);
    const txs = await payments(net, user!, 5);
    const [a, b] = c.instances;
    const sponsor = async (tx: (typeof txs)[number]) => {
      const res = await fetch(`${a!.url}/v1/sponsor`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": key, prefer: "respond-async" },
        body: JSON.stringify({ transaction: xdrOf(tx), network: "testnet" }),
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    const first = await sponsor(txs[0]!);
    const answers = await Promise.all(txs.slice(1).map(sponsor));
    expect(first.status).toBe(202);
    for (const r of answers) expect(r.body).toMatchObject({ status: "pending" });
    const lookup = async (i: number, wait = 0) => {
      const inner = Buffer.from(txs[i]!.hash()).toString("hex");
      const res = await fetch(`${b!.url}/v1/transactions/${inner}?wait=${wait}`, { headers: { "x-api-key": key } });
      return (await res.json()) as any;
    };
    const last = await lookup(4);
    expect(last.status).toBe("pending");
    expect(last.waitingFor).toEqual({
      account: user!.publicKey(),
      sequence: txs[4]!.sequence,
      waitingFor: (BigInt(txs[4]!.sequence) - 1n).toString(),
    });
    await a!.kill("SIGKILL");
    try {
      let seen: string[] = [];
      for (const deadline = Date.now() + 60_000; Date.now() < deadline; ) {
        seen = (await Promise.all(txs.map((_, i) => lookup(i, 10)))).map((v) => v.status);
        if (seen.every((s) => s === "success")) break;
      }
      expect(seen).toEqual(txs.map(() => "success"));
      const ledgers = await Promise.all(txs.map(async (_, i) => (await lookup(i)).ledger as number));
      for (let i = 1; i < ledgers.length; i++) expect(ledgers[i]!).toBeGreaterThan(ledgers[i - 1]!);
      console.log(`held through an instance killed -9: sent by the other, ledgers ${ledgers.join(", ")}`);
    } finally {
      await a!.restart();
    }
  },
  { timeout: 120_000 },
);
