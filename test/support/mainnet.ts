/**
 * Helpers for tests on a relay's embedded mainnet with ledgers closed on demand: a funded user,
 * a signed payment from it, raw getTransaction answers and the credit journal.
 */
import { expect } from "bun:test";
import { Account, Asset, Keypair, Operation, TransactionBuilder, type Transaction } from "@stellar/stellar-sdk";
import { sql, type SQL } from "drizzle-orm";
import { localFunder } from "../../src/boot.ts";
import type { TestRelay } from "./relay.ts";

/** A new mainnet account funded by the embedded friendbot (a ledger is closed for it). */
export async function fundedMainnetUser(relay: TestRelay): Promise<Keypair> {
  const user = Keypair.random();
  const funding = fetch(`${relay.url}/localnet/mainnet/friendbot?addr=${user.publicKey()}`);
  await Bun.sleep(20);
  relay.localnets.mainnet!.closeLedger();
  expect((await funding).status).toBe(200);
  return user;
}

/** A signed 1 XLM payment from `user` to the funder with sequence number `seq` + 1 (default: the next one). */
export function mainnetPayment(relay: TestRelay, user: Keypair, opts: { seq?: bigint; timeoutSeconds?: number } = {}) {
  const net = relay.localnets.mainnet!;
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
