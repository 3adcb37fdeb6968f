/**
 * `bun run bench:orderflow`: a trading desk's order flow. A standalone localnet (mainnet passphrase,
 * BENCH_LEDGER_MS ledgers, default 2 s) in its own process, the relay in another (its mainnet
 * upstream, a pool of BENCH_CHANNELS, default 4), and four scenes, one after another:
 *
 * 1. one account's burst of 20 payments (its next 20 sequence numbers), sent at once in order;
 * 2. the same, shuffled, 20 ms apart;
 * 3. 20 accounts x 10 payments each, all at once;
 * 4. one account's burst of Soroban transfers in func+auth mode, 5x the pool.
 *
 * Per scene: answers by status, ledgers from send to inclusion (p50, p99, max), how many ledgers
 * the burst spread over, and the pool's size and waits (GET /metrics) before and after.
 */
import {
  Address,
  Asset,
  authorizeEntry,
  Keypair,
  nativeToScVal,
  Operation,
  rpc,
  TransactionBuilder,
  type xdr,
} from "@stellar/stellar-sdk";
import { startLocalnet } from "./e2e/localnet-proc.ts";
import { cleanup } from "./e2e/procs.ts";
import { projectKey, startRelay } from "./e2e/relay-proc.ts";
import { countsText, pct } from "./e2e/stats.ts";

const LEDGER_MS = Number(process.env.BENCH_LEDGER_MS ?? 2000);
const CHANNELS = Number(process.env.BENCH_CHANNELS ?? 4);
const PASSPHRASE = "Public Global Stellar Network ; September 2015";

interface Answer {
  status: number;
  sentLedger: number;
  ledger: number | null;
  reason?: string;
}

try {
  const net = await startLocalnet(LEDGER_MS, PASSPHRASE);
  const server = new rpc.Server(net.rpc, { allowHttp: true });
  const fund = async () => {
    const kp = Keypair.random();
    const res = await fetch(`${net.friendbot}?addr=${kp.publicKey()}`);
    if (!res.ok) throw new Error(`friendbot ${res.status}`);
    return kp;
  };
  const funder = await fund();
  const relay = await startRelay({
    db: "pglite",
    upstream: { rpc: net.rpc, passphrase: PASSPHRASE, funderSecret: funder.secret() },
    env: { MAINNET_CHANNELS: String(CHANNELS), MAINNET_CHANNELS_MAX: String(CHANNELS * 8), LOG_LEVEL: "info" },
  });
  const key = await projectKey(relay);
  const latest = async () => (await server.getLatestLedger()).sequence;
  const sponsor = async (body: Record<string, string>): Promise<Answer> => {
    const sentLedger = await latest();
    const res = await fetch(`${relay.url}/v1/sponsor`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": key },
      body: JSON.stringify({ ...body, network: "mainnet" }),
    });
    const j = (await res.json()) as any;
    return {
      status: res.status,
      sentLedger,
      ledger: res.status === 200 ? j.ledger : (j.error?.details?.ledger ?? null),
      reason: j.error ? `${j.error.code}${j.error.details?.reason ? `/${j.error.details.reason}` : ""}` : undefined,
    };
  };
  const payments = async (user: Keypair, n: number) => {
    const acc = await server.getAccount(user.publicKey());
    return Array.from({ length: n }, () => {
      const tx = new TransactionBuilder(acc, { fee: "100", networkPassphrase: PASSPHRASE })
        .addOperation(Operation.payment({ destination: funder.publicKey(), asset: Asset.native(), amount: "1" }))
        .setTimeout(600)
        .build();
      tx.sign(user);
      return tx.toEnvelope().toXDR("base64");
    });
  };
  const poolLine = async () => {
    const text = await (await fetch(`${relay.url}/metrics`)).text();
    const pick = (re: RegExp) =>
      text
        .split("\n")
        .filter((l) => re.test(l) && l.includes('network="mainnet"') && !l.includes("_bucket"))
        .map((l) => l.replace(/\{[^}]*\}/, "").trim())
        .join(", ");
    return pick(/^relay_channels?_(target|max|waiting|wait_seconds_count|wait_seconds_sum)/) || "(no pool metrics)";
  };
  const report = async (name: string, answers: Answer[]) => {
    const included = answers.filter((a) => a.ledger !== null);
    const delays = included.map((a) => a.ledger! - a.sentLedger);
    const ledgers = included.map((a) => a.ledger!);
    const spread = ledgers.length ? Math.max(...ledgers) - Math.min(...ledgers) + 1 : 0;
    const statuses = countsText(
      Object.fromEntries(
        Object.entries(
          answers.reduce<Record<string, number>>((m, a) => {
            const k = a.reason ? `${a.status} ${a.reason}` : String(a.status);
            m[k] = (m[k] ?? 0) + 1;
            return m;
          }, {}),
        ),
      ),
    );
    console.log(
      `${name}: ${answers.length} requests; answers ${statuses}; ledgers from send to inclusion p50 ${pct(delays, 50)}, ` +
        `p99 ${pct(delays, 99)}, max ${delays.length ? Math.max(...delays) : "-"}; spread over ${spread} ledgers`,
    );
    console.log(`  pool: ${await poolLine()}`);
  };

  console.log(`bench:orderflow: ledgers every ${LEDGER_MS} ms, mainnet pool of ${CHANNELS}`);
  console.log(`  pool before: ${await poolLine()}`);
  {
    const user = await fund();
    const txs = await payments(user, 20);
    await report("one account, 20 at once, in order", await Promise.all(txs.map((t) => sponsor({ transaction: t }))));
  }
  {
    const user = await fund();
    const txs = (await payments(user, 20)).sort(() => Math.random() - 0.5);
    const pending: Promise<Answer>[] = [];
    for (const t of txs) {
      pending.push(sponsor({ transaction: t }));
      await Bun.sleep(20);
    }
    await report("one account, 20 shuffled, 20 ms apart", await Promise.all(pending));
  }
  {
    const users = await Promise.all(Array.from({ length: 20 }, fund));
    const txs = (await Promise.all(users.map((u) => payments(u, 10)))).flat();
    await report("20 accounts x 10 at once", await Promise.all(txs.map((t) => sponsor({ transaction: t }))));
  }
  {
    const [from, to] = [await fund(), await fund()];
    const sac = Asset.native().contractId(PASSPHRASE);
    const addr = (pk: string) => nativeToScVal(Address.fromString(pk));
    const transfer = (auth: xdr.SorobanAuthorizationEntry[] = []) =>
      Operation.invokeContractFunction({
        contract: sac,
        function: "transfer",
        args: [addr(from.publicKey()), addr(to.publicKey()), nativeToScVal(1n, { type: "i128" })],
        auth,
      });
    const ops = await Promise.all(
      Array.from({ length: CHANNELS * 5 }, async () => {
        const acc = await server.getAccount(to.publicKey());
        const tx = new TransactionBuilder(acc, { fee: "100", networkPassphrase: PASSPHRASE })
          .addOperation(transfer())
          .setTimeout(60)
          .build();
        const sim = await server.simulateTransaction(tx);
        if (!rpc.Api.isSimulationSuccess(sim)) throw new Error("simulation failed");
        const signed = await authorizeEntry(sim.result!.auth[0]!, from, sim.latestLedger + 200, PASSPHRASE);
        return transfer([signed]).toXDR("base64");
      }),
    );
    await report(
      `func+auth, ${ops.length} at once (5x the pool)`,
      await Promise.all(ops.map((operation) => sponsor({ operation }))),
    );
  }
  const code = await relay.stop();
  await net.stop();
  if (code !== 0) console.log(`the relay exited with ${code}`);
} finally {
  await cleanup();
}
