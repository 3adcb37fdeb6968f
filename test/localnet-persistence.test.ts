/**
 * Localnet persistence: with a dataDir the ledger state and recent history survive a restart (same
 * passphrase), and the chain continues where it stopped; without a dataDir every start is fresh.
 */
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  Asset,
  Contract,
  type Keypair,
  Networks,
  Operation,
  TransactionBuilder,
  rpc,
  xdr,
  type Transaction,
} from "@stellar/stellar-sdk";
import { Localnet } from "../src/localnet/ledger.ts";
import { startLocalnet, builder, type TestNet } from "./support/localnet.ts";

const S = rpc.Api.GetTransactionStatus;
const dirs: string[] = [];
const running: TestNet[] = [];

function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "localnet-persist-"));
  dirs.push(dir);
  return dir;
}

async function start(opts: Parameters<typeof startLocalnet>[0]): Promise<TestNet> {
  const t = await startLocalnet({ ledgerCloseMs: 0, ...opts });
  running.push(t);
  return t;
}

async function stop(t: TestNet): Promise<void> {
  await t.stop();
  running.splice(running.indexOf(t), 1);
}

afterEach(async () => {
  for (const t of running.splice(0)) await t.stop();
});
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const hex = (tx: Transaction) => Buffer.from(tx.hash()).toString("hex");

async function payment(t: TestNet, from: Keypair, to: string, amount: string): Promise<Transaction> {
  const tx = (await builder(t, from))
    .addOperation(Operation.payment({ destination: to, asset: Asset.native(), amount }))
    .build();
  tx.sign(from);
  return tx;
}

/** What a restarted network must reproduce. */
interface Before {
  a: Keypair;
  b: Keypair;
  accounts: Map<string, { balance: bigint; seqNum: bigint }>;
  latest: { sequence: number; hash: string; closeTime: bigint; headerXdr: string };
  paymentHash: string;
  paymentLedger: number;
  failedHash: string;
  innerHash: string;
  outerHash: string;
  txCount: number;
}

/** Funds two accounts, applies a payment, a failed payment and a fee-bump; stops the network. */
async function populate(dir: string): Promise<Before> {
  const t = await start({ dataDir: dir });
  expect(t.net.latestLedger.sequence).toBe(1);
  const a = await t.funded();
  const b = await t.funded();

  const pay = await payment(t, a, b.publicKey(), "25");
  const ok = await t.submit(pay);
  expect(ok.status).toBe(S.SUCCESS);

  const bad = await payment(t, b, a.publicKey(), "99999");
  expect((await t.submit(bad)).status).toBe(S.FAILED);

  const inner = await payment(t, a, b.publicKey(), "1");
  const fb = TransactionBuilder.buildFeeBumpTransaction(b, "200", inner, t.passphrase);
  fb.sign(b);
  expect((await t.submit(fb)).status).toBe(S.SUCCESS);
  t.close(); // an empty ledger after the last transaction

  const accounts = new Map<string, { balance: bigint; seqNum: bigint }>();
  for (const kp of [a, b, t.net.root]) {
    const acc = t.net.account(kp.publicKey())!;
    accounts.set(kp.publicKey(), { balance: acc.balance, seqNum: acc.seqNum });
  }
  const l = t.net.latestLedger;
  const before: Before = {
    a,
    b,
    accounts,
    latest: { sequence: l.sequence, hash: l.hash, closeTime: l.closeTime, headerXdr: l.headerXdr },
    paymentHash: hex(pay),
    paymentLedger: ok.status === S.SUCCESS ? ok.ledger : 0,
    failedHash: hex(bad),
    innerHash: hex(inner),
    outerHash: Buffer.from(fb.hash()).toString("hex"),
    txCount: (await t.rpc.getTransactions({ startLedger: 1, pagination: { limit: 200 } })).transactions.length,
  };
  expect(before.txCount).toBe(5); // two friendbot funds, payment, failed payment, fee-bump
  await stop(t);
  return before;
}

describe("a Localnet with a dataDir", () => {
  test("writes a snapshot after a ledger closes", async () => {
    const dir = freshDir();
    const t = await start({ dataDir: dir });
    expect(readdirSync(dir).filter((f) => f.endsWith(".json"))).toEqual([]);
    t.close();
    expect(readdirSync(dir).filter((f) => f.endsWith(".json")).length).toBe(1);
    expect(readdirSync(dir).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });

  test("a restart keeps balances, sequence numbers, the latest ledger and the transactions", async () => {
    const dir = freshDir();
    const before = await populate(dir);

    const t = await start({ dataDir: dir });
    // state
    for (const [id, want] of before.accounts) {
      const acc = t.net.account(id)!;
      expect(acc).toBeDefined();
      expect(acc.balance).toBe(want.balance);
      expect(acc.seqNum).toBe(want.seqNum);
    }
    const h = await t.horizon.loadAccount(before.a.publicKey());
    expect(h.sequence).toBe(before.accounts.get(before.a.publicKey())!.seqNum.toString());
    expect((await t.rpc.getAccount(before.b.publicKey())).sequenceNumber()).toBe(
      before.accounts.get(before.b.publicKey())!.seqNum.toString(),
    );

    // ledgers
    expect(t.net.latestLedger.sequence).toBe(before.latest.sequence);
    const latest = await t.rpc.getLatestLedger();
    expect(latest.sequence).toBe(before.latest.sequence);
    expect(latest.id).toBe(before.latest.hash);
    expect(t.net.latestLedger.headerXdr).toBe(before.latest.headerXdr);
    expect(t.net.oldestLedger.sequence).toBe(1);

    // history: by hash, by inner hash, and paged
    const paid = await t.rpc.getTransaction(before.paymentHash);
    expect(paid.status).toBe(S.SUCCESS);
    if (paid.status === S.SUCCESS) expect(paid.ledger).toBe(before.paymentLedger);
    expect((await t.rpc.getTransaction(before.failedHash)).status).toBe(S.FAILED);
    const byInner = await t.rpc.getTransaction(before.innerHash);
    expect(byInner.status).toBe(S.SUCCESS);
    if (byInner.status === S.SUCCESS) expect(byInner.feeBump).toBe(true);
    expect((await t.rpc.getTransaction(before.outerHash)).status).toBe(S.SUCCESS);
    const all = await t.rpc.getTransactions({ startLedger: 1, pagination: { limit: 200 } });
    expect(all.transactions.length).toBe(before.txCount);

    // fee statistics are rebuilt from the restored ledgers (the fee-bump's 200 counts for its one inner operation)
    const fees = await t.rpc.getFeeStats();
    expect(fees.inclusionFee.transactionCount).toBe(String(before.txCount));
    expect(fees.inclusionFee.max).toBe("200");
    expect(fees.inclusionFee.min).toBe("100");

    // Horizon answers a resubmission of an applied transaction from the restored history
    const bad = await fetch(`${t.url}/transactions`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `tx=${encodeURIComponent(((await t.rpc.getTransaction(before.failedHash)) as { envelopeXdr: xdr.TransactionEnvelope }).envelopeXdr.toXdr("base64"))}`,
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as any).extras.result_codes).toEqual({
      transaction: "tx_failed",
      operations: ["op_underfunded"],
    });
  });

  test("new ledgers continue the chain, and the accounts keep transacting", async () => {
    const dir = freshDir();
    const before = await populate(dir);

    const t = await start({ dataDir: dir });
    const next = t.net.closeLedger();
    expect(next.sequence).toBe(before.latest.sequence + 1);
    expect(next.previousHash).toBe(before.latest.hash);
    expect(next.closeTime).toBeGreaterThanOrEqual(before.latest.closeTime);
    const header = xdr.LedgerHeader.fromXdr(next.headerXdr, "base64");
    expect(Buffer.from(header.previousLedgerHash.toBytes()).toString("hex")).toBe(before.latest.hash);

    // the sequence number continues from the restored one
    const pay = await payment(t, before.a, before.b.publicKey(), "3");
    expect(BigInt(pay.sequence)).toBe(before.accounts.get(before.a.publicKey())!.seqNum + 1n);
    const r = await t.submit(pay);
    expect(r.status).toBe(S.SUCCESS);
    if (r.status === S.SUCCESS) expect(r.ledger).toBe(before.latest.sequence + 2);
    expect(t.net.account(before.b.publicKey())!.balance).toBe(
      before.accounts.get(before.b.publicKey())!.balance + 30_000_000n,
    );
    // friendbot continues with the root account's restored sequence number
    const c = await t.funded();
    expect(t.net.account(c.publicKey())!.balance).toBe(100_000_000_000n);

    // the built-in contracts survive (their instances are contract data)
    const sim = await t.rpc.simulateTransaction(
      (await builder(t, before.a))
        .addOperation(new Contract(Asset.native().contractId(t.passphrase)).call("decimals"))
        .build(),
    );
    expect("error" in sim).toBe(false);

    // and a second restart sees all of it
    const seq = t.net.latestLedger.sequence;
    await stop(t);
    const again = await start({ dataDir: dir });
    expect(again.net.latestLedger.sequence).toBe(seq);
    expect((await again.rpc.getTransaction(hex(pay))).status).toBe(S.SUCCESS);
    expect((await again.rpc.getTransaction(before.paymentHash)).status).toBe(S.SUCCESS);
    expect(again.net.account(c.publicKey())).toBeDefined();
  });

  test("the snapshot belongs to its passphrase: another network in the same dataDir starts fresh", async () => {
    const dir = freshDir();
    const before = await populate(dir);
    const other = await start({ dataDir: dir, passphrase: Networks.TESTNET });
    expect(other.net.latestLedger.sequence).toBe(1);
    expect(other.net.account(before.a.publicKey())).toBeUndefined();
    other.close();
    await stop(other);
    // and it did not overwrite the first network's snapshot
    const back = await start({ dataDir: dir });
    expect(back.net.latestLedger.sequence).toBe(before.latest.sequence);
    expect(back.net.account(before.a.publicKey())!.seqNum).toBe(before.accounts.get(before.a.publicKey())!.seqNum);
  });
});

describe("a Localnet without a dataDir", () => {
  test("starts fresh every time", async () => {
    const t = await start({});
    const a = await t.funded();
    expect(t.net.latestLedger.sequence).toBe(2);
    await stop(t);
    const fresh = await start({});
    expect(fresh.net.latestLedger.sequence).toBe(1);
    expect(fresh.net.account(a.publicKey())).toBeUndefined();
    expect(fresh.net.records.size).toBe(0);
  });

  test("is not affected by another network's dataDir", async () => {
    const dir = freshDir();
    const before = await populate(dir);
    const net = new Localnet({ passphrase: Networks.STANDALONE, ledgerCloseMs: 0 });
    expect(net.latestLedger.sequence).toBe(1);
    expect(net.account(before.a.publicKey())).toBeUndefined();
    expect(net.account(net.root.publicKey())!.seqNum).toBe(0n);
  });
});
