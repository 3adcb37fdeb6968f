/**
 * `bun run bench:approval`: what a policy's approval call adds to a sponsorship. One relay in its
 * own process (embedded testnet), an approval server here answering `{approved: true}` after
 * BENCH_APPROVER_MS (5 ms), and two projects, one with the approval and one without. Each sends
 * BENCH_REQUESTS payments one after another with `Prefer: respond-async` (answered when the network
 * accepts the fee-bump, so the ledger's wait is left out), alternating between the projects. Prints
 * p50 and p99 of each, and what the approval added.
 */
import { Keypair, TransactionBuilder, Operation, Asset, rpc } from "@stellar/stellar-sdk";
import { cleanup } from "./e2e/procs.ts";
import { startRelay } from "./e2e/relay-proc.ts";
import { pct } from "./e2e/stats.ts";

const N = Number(process.env.BENCH_REQUESTS ?? 200);
const APPROVER_MS = Number(process.env.BENCH_APPROVER_MS ?? 5);
const PASSPHRASE = "Test SDF Network ; September 2015";

try {
  const approver = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch() {
      await Bun.sleep(APPROVER_MS);
      return Response.json({ approved: true });
    },
  });
  const relay = await startRelay({
    db: "pglite",
    embeddedLedgerMs: 1000,
    env: { WEBHOOK_ALLOW_PRIVATE: "true", ANONYMOUS_POLICY: '{"requestsPerSecond":100000,"burst":100000}' },
    ready: "health",
  });
  const project = async (policy: Record<string, unknown>) => {
    const p = await relay.admin<{ id: string }>("POST", "/projects", { name: `bench-${Date.now()}`, policy });
    const { key } = await relay.admin<{ key: string }>("POST", `/projects/${p.id}/keys`, { environment: "test" });
    return key;
  };
  const limits = { requestsPerSecond: 100_000, burst: 100_000 };
  const withApproval = await project({ ...limits, approval: { url: `http://127.0.0.1:${approver.port}/` } });
  const without = await project(limits);
  const server = new rpc.Server(`${relay.url}/localnet/testnet/rpc`, { allowHttp: true });
  const users = await Promise.all(
    Array.from({ length: N }, async () => {
      const kp = Keypair.random();
      const res = await fetch(`${relay.url}/localnet/testnet/friendbot?addr=${kp.publicKey()}`);
      if (!res.ok) throw new Error(`friendbot ${res.status}`);
      return kp;
    }),
  );
  const signed = async (kp: Keypair) => {
    const tx = new TransactionBuilder(await server.getAccount(kp.publicKey()), {
      fee: "100",
      networkPassphrase: PASSPHRASE,
    })
      .addOperation(Operation.payment({ destination: users[0]!.publicKey(), asset: Asset.native(), amount: "1" }))
      .setTimeout(300)
      .build();
    tx.sign(kp);
    return tx.toEnvelope().toXDR("base64");
  };
  const txs = await Promise.all(users.map(signed));
  const times: Record<"with" | "without", number[]> = { with: [], without: [] };
  for (const [i, transaction] of txs.entries()) {
    const which = i % 2 ? "with" : "without";
    const t0 = performance.now();
    const res = await fetch(`${relay.url}/v1/sponsor`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-api-key": which === "with" ? withApproval : without,
        prefer: "respond-async",
      },
      body: JSON.stringify({ transaction, network: "testnet" }),
    });
    await res.text();
    if (res.status !== 202 && res.status !== 200) throw new Error(`sponsor answered ${res.status}`);
    times[which].push(performance.now() - t0);
  }
  const [a, b] = [times.with, times.without];
  const f = (v: number) => v.toFixed(1);
  console.log(`bench:approval: ${N} sponsorships answered at acceptance, approver answering in ${APPROVER_MS} ms`);
  console.log(`  without approval: p50 ${f(pct(b, 50))} ms, p99 ${f(pct(b, 99))} ms`);
  console.log(`  with approval:    p50 ${f(pct(a, 50))} ms, p99 ${f(pct(a, 99))} ms`);
  console.log(`  added: p50 ${f(pct(a, 50) - pct(b, 50))} ms, p99 ${f(pct(a, 99) - pct(b, 99))} ms`);
  approver.stop(true);
  await relay.stop();
} finally {
  await cleanup();
}
