/**
 * Held transactions are bounded in bytes as well as in count, per payer: large Soroban transactions
 * held for a queued predecessor fill SEQUENCE_MAX_HELD_BYTES_PER_PROJECT (16 MiB by default), the next
 * is 429 too_many_held_bytes, and the relay's memory (its own process, `bun run start`) grows by about
 * what it holds, not by the documented 1,000 held transactions' worth. Each held transaction is written
 * to the database too (a pending submission): on Postgres (TEST_DATABASE_URL) that costs the relay
 * transient copies; the embedded PGlite runs inside the relay's process and keeps the high-water mark
 * of what it wrote, so its bound is wider (measured: 52-66 MiB on Postgres; 92-135 MiB on PGlite, 38-52 MiB
 * there without the writes).
 */
import { afterAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import {
  Keypair,
  nativeToScVal,
  Operation,
  rpc,
  SorobanDataBuilder,
  TransactionBuilder,
  xdr,
} from "@stellar/stellar-sdk";
import { Asset } from "@stellar/stellar-sdk";
import postgres from "postgres";
import { seedPglite } from "../support/pglite.ts";
import { spawnRelay, tempDir, type Proc } from "../support/processes.ts";

const LIMIT = 16 * 1024 * 1024; // the default
const DB = process.env.TEST_DATABASE_URL;
/** How much the relay may grow: a few copies of what it holds (PGlite: its database's pages too). */
const BOUND = (DB ? 6 : 10) * LIMIT;
const data = tempDir("relay-held-bytes-");
const schema = `t_${crypto.randomUUID().replace(/-/g, "").slice(0, 16)}`;
let relay: (Proc & { url: string }) | undefined;
afterAll(async () => {
  if (relay && relay.proc.exitCode === null) await relay.kill();
  if (DB) {
    const sql = postgres(DB, { max: 1, onnotice: () => {} });
    await sql.unsafe(`drop schema if exists "${schema}" cascade`);
    await sql.end();
  }
  data.done();
});

/** The process's resident memory (bytes), from /proc. */
const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) * 1024;

test("past 16 MiB of held transactions the payer's next is 429 too_many_held_bytes; the relay grows by about that", {
  timeout: 120_000,
}, async () => {
  if (!DB) await seedPglite(data.path);
  // ledgers close only when asked: the predecessor stays queued, the large transactions after it held (20 s at most)
  relay = await spawnRelay({
    DATA_DIR: data.path,
    ...(DB ? { DATABASE_URL: DB, DATABASE_SCHEMA: schema } : { DATABASE_URL: "", DATABASE_SCHEMA: "" }),
    LEDGER_CLOSE_MS: "0",
    SEQUENCE_HOLD_MS: "20000",
    SEQUENCE_MAX_HELD_PER_ACCOUNT: "1000",
    ANONYMOUS_POLICY: JSON.stringify({ requestsPerSecond: 10_000, burst: 10_000 }),
  });
  const url = relay.url;
  const server = new rpc.Server(`${url}/localnet/testnet/rpc`, { allowHttp: true });
  const { passphrase } = await server.getNetwork();
  const user = Keypair.random();
  const funding = fetch(`${url}/localnet/testnet/friendbot?addr=${user.publicKey()}`);
  await Bun.sleep(100);
  await fetch(`${url}/localnet/testnet/close-ledger`, { method: "POST" });
  expect((await funding).status).toBe(200);

  const account = await server.getAccount(user.publicKey());
  const build = (op: xdr.Operation, soroban: boolean) => {
    const b = new TransactionBuilder(account, { fee: "100", networkPassphrase: passphrase }).addOperation(op);
    if (soroban) b.setSorobanData(new SorobanDataBuilder().build());
    const tx = b.setTimeout(60).build(); // each build takes the next sequence number
    tx.sign(user);
    return JSON.stringify({ transaction: tx.toEnvelope().toXDR("base64"), network: "testnet" });
  };
  const next = build(Operation.payment({ destination: user.publicKey(), asset: Asset.native(), amount: "1" }), false);
  const contract = Asset.native().contractId(passphrase);
  const large = () =>
    build(
      Operation.invokeContractFunction({
        contract,
        function: "transfer",
        args: [xdr.ScVal.scvBytes(Buffer.alloc(176_000, 7)), nativeToScVal(1)],
      }),
      true,
    );
  const bodies = [large()];
  const perTx = JSON.parse(bodies[0]!).transaction.length as number;
  expect(perTx).toBeGreaterThan(230_000);
  const fits = Math.floor(LIMIT / perTx);
  while (bodies.length <= fits) bodies.push(large());

  const post = (body: string) =>
    fetch(`${url}/v1/sponsor`, { method: "POST", headers: { "content-type": "application/json" }, body });
  const before = rssOf(relay.proc.pid);
  const first = post(next); // the account's next number: sent, and queued without a ledger
  await Bun.sleep(200);
  const held = bodies.slice(0, fits).map(post);
  await Bun.sleep(1000); // each is admitted and held in turn
  const over = await post(bodies[fits]!);
  const body = (await over.json()) as { error: { code: string; details: Record<string, unknown> } };
  expect(over.status).toBe(429);
  expect(body.error.code).toBe("RATE_LIMIT_EXCEEDED");
  expect(body.error.details).toMatchObject({ reason: "too_many_held_bytes", limit: LIMIT });
  expect(over.headers.get("retry-after")).toBe("1");
  const grown = rssOf(relay.proc.pid) - before;
  console.log(`${fits} held transactions of ${perTx} bytes: the relay grew by ${(grown / 2 ** 20).toFixed(1)} MiB`);
  expect(grown).toBeLessThan(BOUND);
  // none of them was answered: the first waits for a ledger, the others for it
  const answered = await Promise.race([Promise.any([first, ...held]), Bun.sleep(100).then(() => null)]);
  expect(answered).toBeNull();
  await relay.kill();
  await Promise.allSettled([first, ...held]);
});
