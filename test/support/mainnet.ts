/**
 * Helpers for tests on a relay's embedded mainnet: with ledgers closing by themselves (`mainnetOf`),
 * or closed on demand (a funded user, a signed payment from it, raw getTransaction answers and the
 * credit journal).
 */
import { expect } from "bun:test";
import { Account, Asset, Keypair, Operation, rpc, TransactionBuilder, type Transaction } from "@stellar/stellar-sdk";
import { sql, type SQL } from "drizzle-orm";
import { localFunder } from "../../src/boot/boot.ts";
import { xdrOf } from "./harness.ts";
import type { TestRelay } from "./relay.ts";

/** The embedded mainnet of a relay whose ledgers close by themselves: funded accounts, payments, sponsoring with a key, the fee the network charged. */
export function mainnetOf(r: TestRelay) {
  const net = r.networks.get("mainnet").localnet!;
  const server = new rpc.Server(`${r.url}/localnet/mainnet/rpc`, { allowHttp: true });
  return {
    net,
    server,
    /** `n` new accounts funded by the mainnet friendbot (concurrently: it batches them). */
    async fund(n: number): Promise<Keypair[]> {
      const kps = Array.from({ length: n }, () => Keypair.random());
      await Promise.all(
        kps.map(async (kp) => {
          const res = await fetch(`${r.url}/localnet/mainnet/friendbot?addr=${kp.publicKey()}`);
          const text = await res.text();
          if (!res.ok) throw new Error(`mainnet friendbot ${res.status}: ${text}`);
        }),
      );
      return kps;
    },
    /** A signed 1-operation payment to the mainnet root (`seqOffset` < 0: a number used already). */
    async payment(from: Keypair, opts: { amount?: string; seqOffset?: bigint } = {}): Promise<Transaction> {
      const got = await server.getAccount(from.publicKey());
      const offset = opts.seqOffset ?? 0n;
      const acc =
        offset < 0n ? new Account(from.publicKey(), (BigInt(got.sequenceNumber()) + offset - 1n).toString()) : got;
      for (let i = 0n; i < offset; i++) acc.incrementSequenceNumber();
      const tx = new TransactionBuilder(acc, { fee: "100", networkPassphrase: net.passphrase })
        .addOperation(
          Operation.payment({ destination: net.root.publicKey(), asset: Asset.native(), amount: opts.amount ?? "1" }),
        )
        .setTimeout(60)
        .build();
      tx.sign(from);
      return tx;
    },
    sponsor: (key: string, tx: Transaction) =>
      r.post("/v1/sponsor", { transaction: xdrOf(tx), network: "mainnet" }, { "x-api-key": key }),
    /** feeCharged of a transaction's result as the network reports it (null: not in the ledger). */
    async feeCharged(hash: string): Promise<bigint | null> {
      const t = await server.getTransaction(hash);
      if (t.status === rpc.Api.GetTransactionStatus.NOT_FOUND) return null;
      return BigInt(t.resultXdr.feeCharged);
    },
  };
}

/** A new mainnet account funded by the embedded friendbot (a ledger is closed for it). */
export async function fundedMainnetUser(relay: TestRelay): Promise<Keypair> {
  const user = Keypair.random();
  let done = false;
  const funding = fetch(`${relay.url}/localnet/mainnet/friendbot?addr=${user.publicKey()}`).finally(() => {
    done = true;
  });
  // ledgers close on demand here: close one once friendbot's transaction is queued (a fixed sleep raced
  // a busy machine, and friendbot then waited for a ledger that never came)
  const net = relay.networks.get("mainnet").localnet!;
  const root = net.root.publicKey();
  while (!done) {
    if (net.queue.bySource.has(root)) net.closeLedger();
    await Bun.sleep(1);
  }
  expect((await funding).status).toBe(200);
  return user;
}

/** A signed 1 XLM payment from `user` to the funder with sequence number `seq` + 1 (default: the next one). */
export function mainnetPayment(relay: TestRelay, user: Keypair, opts: { seq?: bigint; timeoutSeconds?: number } = {}) {
  const net = relay.networks.get("mainnet").localnet!;
  const seq = opts.seq ?? net.account(user.publicKey())!.seqNum;
  const tx: Transaction = new TransactionBuilder(new Account(user.publicKey(), seq.toString()), {
    fee: "100",
    networkPassphrase: net.passphrase,
  })
    .addOperation(
      Operation.payment({ destination: localFunder(net.passphrase).publicKey(), asset: Asset.native(), amount: "1" }),
    )
    .setTimeout(opts.timeoutSeconds ?? 300)
    .build();
  tx.sign(user);
  const innerHash = Buffer.from(tx.hash()).toString("hex");
  return { tx, innerHash, body: { transaction: tx.toEnvelope().toXDR("base64"), network: "mainnet" } };
}

/** getTransaction on an embedded network, as the RPC answers it (fee-bumps are found by their inner hash too). */
export async function rawTransaction(relay: TestRelay, network: string, hash: string) {
  const res = await fetch(`${relay.url}/localnet/${network}/rpc`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "getTransaction", params: { hash } }),
  });
  return ((await res.json()) as { result: { status: string; ledger: number; envelopeXdr: string } }).result;
}

/** Rows of a raw statement on the relay's database (either driver). */
export async function sqlRows<T>(relay: TestRelay, q: SQL): Promise<T[]> {
  const res = await relay.database.execute(q);
  return (Array.isArray(res) ? res : (res as unknown as { rows: T[] }).rows) as T[];
}

/** A project's balance as the credit journal has it. */
export async function journalSum(relay: TestRelay, projectId: string): Promise<bigint> {
  const [row] = await sqlRows<{ s: string }>(
    relay,
    sql`select coalesce(sum(amount), 0)::text as s from credit_journal where project_id = ${projectId}`,
  );
  return BigInt(row!.s);
}
