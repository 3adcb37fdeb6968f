/**
 * The transaction queue and ledger selection, on networks whose ledgers close only when the test
 * says so: one pending transaction per source, DUPLICATE, replace-by-fee, fee-source balance
 * against queued fees, capacity with surge pricing and eviction, aging and bans.
 */
import { afterEach, describe, expect, test } from "bun:test";
import {
  Contract,
  Keypair,
  Memo,
  nativeToScVal,
  Operation,
  TransactionBuilder,
  type Transaction,
  type FeeBumpTransaction,
} from "@stellar/stellar-sdk";
import { applied, builder, hex, pay, S, startLocalnet, txCode, type TestNet } from "../support/localnet.ts";
import { TEST_CONTRACT_ID } from "../../src/localnet/soroban/contracts.ts";

let t: TestNet;
afterEach(() => t?.stop());

/** A payment from `source` at sequence current + 1 + `ahead`, without looking at the queue. */
function payment(
  source: Keypair,
  fee: number,
  opts: { ahead?: bigint; ops?: number; amount?: string } = {},
): Transaction {
  const acc = t.net.account(source.publicKey())!;
  const b = new TransactionBuilder(
    {
      accountId: () => source.publicKey(),
      sequenceNumber: () => (acc.seqNum + (opts.ahead ?? 0n)).toString(),
      incrementSequenceNumber: () => {},
    } as never,
    { fee: String(fee), networkPassphrase: t.passphrase },
  ).setTimeout(300);
  for (let i = 0; i < (opts.ops ?? 1); i++) b.addOperation(pay(t.net.root.publicKey(), opts.amount));
  const tx = b.build();
  tx.sign(source);
  return tx;
}
const bump = (inner: Transaction, feeSource: Keypair, rate: number): FeeBumpTransaction => {
  const fb = TransactionBuilder.buildFeeBumpTransaction(feeSource, String(rate), inner, t.passphrase);
  fb.sign(feeSource);
  return fb;
};
async function fundMany(n: number): Promise<Keypair[]> {
  const out: Keypair[] = [];
  for (let i = 0; i < n; i++) out.push(await t.funded());
  return out;
}

describe("one pending transaction per source account", () => {
  test("a second transaction from the same source is TRY_AGAIN_LATER; the same one is DUPLICATE", async () => {
    t = await startLocalnet({ ledgerCloseMs: 0 });
    const [a] = await fundMany(1);
    const first = payment(a, 100);
    expect((await t.rpc.sendTransaction(first)).status).toBe("PENDING");
    expect((await t.rpc.sendTransaction(first)).status).toBe("DUPLICATE");
    expect((await t.rpc.sendTransaction(payment(a, 100, { ahead: 1n }))).status).toBe("TRY_AGAIN_LATER");
    const lower = await t.rpc.sendTransaction(payment(a, 100, { ahead: -1n }));
    expect(lower.status).toBe("ERROR");
    expect(txCode(lower.errorResult)).toBe("txBadSeq");
    expect(BigInt(lower.errorResult!.feeCharged)).toBe(0n);
    t.close();
    expect((await t.rpc.getTransaction(hex(first))).status).toBe(S.SUCCESS);
    // after the ledger, the next sequence number is accepted
    expect((await t.rpc.sendTransaction(payment(a, 100))).status).toBe("PENDING");
    // an applied transaction can no longer be DUPLICATE: its sequence number is consumed
    expect(txCode((await t.rpc.sendTransaction(first)).errorResult)).toBe("txBadSeq");
  });

  test("a fee-bump sponsor is not limited: one fee source pays for many sources at once", async () => {
    t = await startLocalnet({ ledgerCloseMs: 0 });
    const [sponsor, ...users] = await fundMany(4);
    for (const u of users)
      expect((await t.rpc.sendTransaction(bump(payment(u, 100), sponsor, 100))).status).toBe("PENDING");
    t.close();
    expect(t.net.latestLedger.txHashes.length).toBe(3);
  });

  test("DUPLICATE also for the inner transaction of a queued fee-bump", async () => {
    t = await startLocalnet({ ledgerCloseMs: 0 });
    const [user, sponsor] = await fundMany(2);
    const inner = payment(user, 100);
    expect((await t.rpc.sendTransaction(bump(inner, sponsor, 100))).status).toBe("PENDING");
    expect((await t.rpc.sendTransaction(inner)).status).toBe("DUPLICATE");
  });
});

describe("replace-by-fee", () => {
  test("a fee-bump replaces the queued transaction only at 10x its rate", async () => {
    t = await startLocalnet({ ledgerCloseMs: 0 });
    const [user, sponsor] = await fundMany(2);
    const inner = payment(user, 100);
    expect((await t.rpc.sendTransaction(inner)).status).toBe("PENDING");
    const weak = await t.rpc.sendTransaction(bump(inner, sponsor, 999)); // 999 x 2 ops < 10 x 100 x 2
    expect(weak.status).toBe("ERROR");
    expect(txCode(weak.errorResult)).toBe("txInsufficientFee");
    expect(BigInt(weak.errorResult!.feeCharged)).toBe(2000n);
    const strong = bump(inner, sponsor, 1000);
    expect((await t.rpc.sendTransaction(strong)).status).toBe("PENDING");
    expect((await t.rpc.sendTransaction(inner)).status).toBe("DUPLICATE"); // the replaced transaction is not banned
    t.close();
    const got = await t.rpc.getTransaction(hex(strong));
    expect(got.status).toBe(S.SUCCESS);
    expect((await t.rpc.getTransaction(hex(inner))).status).toBe(S.SUCCESS); // found by inner hash, applied once
    expect(t.net.latestLedger.txHashes).toEqual([hex(strong)]);
  });
});

describe("fee-bumps at apply", () => {
  test("the outer envelope is not checked again: a fee source that changed its thresholds in the same ledger still pays", async () => {
    t = await startLocalnet({ ledgerCloseMs: 0 });
    const [user, sponsor] = await fundMany(2);
    const fb = bump(payment(user, 100), sponsor, 100);
    expect((await t.rpc.sendTransaction(fb)).status).toBe("PENDING");
    // a ledger applies in hash order: vary the memo until the threshold change is applied first
    let raise: Transaction;
    for (let i = 0; ; i++) {
      raise = new TransactionBuilder(await t.rpc.getAccount(sponsor.publicKey()), {
        fee: "100",
        networkPassphrase: t.passphrase,
        memo: Memo.id(String(i)),
      })
        .addOperation(Operation.setOptions({ masterWeight: 1, lowThreshold: 5, medThreshold: 5, highThreshold: 5 }))
        .setTimeout(60)
        .build();
      if (hex(raise) < hex(fb)) break;
    }
    raise.sign(sponsor);
    expect((await t.rpc.sendTransaction(raise)).status).toBe("PENDING");
    t.close();
    expect((await t.rpc.getTransaction(hex(raise))).status).toBe(S.SUCCESS);
    const got = applied(await t.rpc.getTransaction(hex(fb)));
    expect(got.status).toBe(S.SUCCESS);
    expect(txCode(got.resultXdr)).toBe("txFeeBumpInnerSuccess");
  });
});

describe("fee source balance", () => {
  test("a fee source cannot queue more fees than it can pay", async () => {
    t = await startLocalnet({ ledgerCloseMs: 0 });
    const [rich, u1, u2] = await fundMany(3);
    const sponsor = Keypair.random();
    // 1.5 XLM with a 1 XLM reserve: 5,000,000 stroops available for fees
    const create = new TransactionBuilder(await t.rpc.getAccount(rich.publicKey()), {
      fee: "100",
      networkPassphrase: t.passphrase,
    })
      .addOperation(Operation.createAccount({ destination: sponsor.publicKey(), startingBalance: "1.5" }))
      .setTimeout(60)
      .build();
    create.sign(rich);
    await t.rpc.sendTransaction(create);
    t.close();
    expect((await t.rpc.sendTransaction(bump(payment(u1, 100), sponsor, 1_500_000))).status).toBe("PENDING"); // 3,000,000 queued
    const second = await t.rpc.sendTransaction(bump(payment(u2, 100), sponsor, 1_500_000)); // 6,000,000 > 5,000,000
    expect(second.status).toBe("ERROR");
    expect(txCode(second.errorResult)).toBe("txInsufficientBalance");
  });
});

describe("ledger capacity, surge pricing and eviction", () => {
  test("when more transactions than fit are queued, the lane's base fee becomes the lowest included bid", async () => {
    t = await startLocalnet({ ledgerCloseMs: 0, maxTxSetSize: 2 });
    const users = await fundMany(3);
    const txs = [payment(users[0], 1000), payment(users[1], 2000), payment(users[2], 3000)];
    for (const tx of txs) expect((await t.rpc.sendTransaction(tx)).status).toBe("PENDING");
    t.close();
    const r2 = await t.rpc.getTransaction(hex(txs[1]));
    const r3 = await t.rpc.getTransaction(hex(txs[2]));
    expect(r2.status).toBe(S.SUCCESS);
    expect(BigInt(applied(r2).resultXdr!.feeCharged)).toBe(2000n);
    expect(BigInt(applied(r3).resultXdr!.feeCharged)).toBe(2000n); // market rate, not its 3,000 bid
    expect((await t.rpc.getTransaction(hex(txs[0]))).status).toBe(S.NOT_FOUND);
    t.close(); // no surge now: the left-over pays the base fee
    const r1 = await t.rpc.getTransaction(hex(txs[0]));
    expect(BigInt(applied(r1).resultXdr!.feeCharged)).toBe(100n);
    const stats = await t.rpc.getFeeStats();
    expect(stats.inclusionFee.max).toBe("2000");
    expect(stats.inclusionFee.min).toBe("100");
    expect(stats.inclusionFee.transactionCount).toBe("6"); // 3 friendbot transactions + these 3
  });

  test("a full queue evicts a cheaper transaction (banned) or asks for a higher fee", async () => {
    t = await startLocalnet({ ledgerCloseMs: 0, maxTxSetSize: 1 }); // queue holds 2 operations
    const users = await fundMany(4);
    const cheap = [payment(users[0], 100), payment(users[1], 200)];
    for (const tx of cheap) expect((await t.rpc.sendTransaction(tx)).status).toBe("PENDING");
    const tooCheap = await t.rpc.sendTransaction(payment(users[2], 100));
    expect(tooCheap.status).toBe("ERROR");
    expect(txCode(tooCheap.errorResult)).toBe("txInsufficientFee");
    expect(BigInt(tooCheap.errorResult!.feeCharged)).toBe(101n);
    expect((await t.rpc.sendTransaction(payment(users[3], 500))).status).toBe("PENDING");
    // the 100-stroop transaction was evicted and banned
    expect((await t.rpc.sendTransaction(cheap[0])).status).toBe("TRY_AGAIN_LATER");
  });
});

describe("surge pricing per lane", () => {
  test("highest rate per operation first (not the highest fee); a fee-bump pays the clearing rate for its operations + 1", async () => {
    t = await startLocalnet({ ledgerCloseMs: 0, maxTxSetSize: 3 });
    const [a, b, c, d, sponsor] = await fundMany(5);
    const twoOps = payment(a, 3000, { ops: 2 }); // 1,500 per operation: the highest fee, not the highest rate
    const single = payment(b, 2000);
    const bumped = bump(payment(c, 100), sponsor, 5000); // 5,000 per operation for 1 + 1 operations
    const low = payment(d, 1200);
    for (const tx of [twoOps, single, bumped, low]) expect((await t.rpc.sendTransaction(tx)).status).toBe("PENDING");
    t.close();
    // the fee-bump (2) and the 2,000 payment (1) fill the 3 operations: 2,000 is the clearing rate
    expect(t.net.latestLedger.txHashes.sort()).toEqual([hex(bumped), hex(single)].sort());
    expect(BigInt(applied(await t.rpc.getTransaction(hex(single))).resultXdr!.feeCharged)).toBe(2000n);
    expect(BigInt(applied(await t.rpc.getTransaction(hex(bumped))).resultXdr!.feeCharged)).toBe(4000n);
    t.close(); // the rest fits: no surge, the base fee
    expect(BigInt(applied(await t.rpc.getTransaction(hex(twoOps))).resultXdr!.feeCharged)).toBe(200n);
    expect(BigInt(applied(await t.rpc.getTransaction(hex(low))).resultXdr!.feeCharged)).toBe(100n);
    // the fee statistics are what the ledgers charged per operation (a fee-bump's over its inner operations)
    const stats = await t.rpc.getFeeStats();
    expect(stats.inclusionFee.max).toBe("4000");
    expect(stats.inclusionFee.transactionCount).toBe("9"); // 5 friendbot transactions + these 4
    expect([stats.inclusionFee.p50, stats.inclusionFee.p80]).toEqual(["100", "2000"]);
  });

  test("the lanes are apart: a full classic lane leaves Soroban room, counted in transactions", async () => {
    t = await startLocalnet({ ledgerCloseMs: 0, maxTxSetSize: 1, sorobanTxsPerLedger: 1 });
    const [a, b, c, d] = await fundMany(4);
    const classic = [payment(a, 5000, { ops: 1 }), payment(b, 4000)];
    for (const tx of classic) expect((await t.rpc.sendTransaction(tx)).status).toBe("PENDING");
    const sorobanTxs = [];
    for (const [k, fee] of [
      [c, "300"],
      [d, "200"],
    ] as const) {
      const tx = await t.rpc.prepareTransaction(
        (await builder(t, k, fee)).addOperation(new Contract(TEST_CONTRACT_ID).call("echo", nativeToScVal(1))).build(),
      );
      tx.sign(k);
      expect((await t.rpc.sendTransaction(tx)).status).toBe("PENDING");
      sorobanTxs.push(tx);
    }
    t.close();
    // one of each lane: the best bid of each; the other waits
    expect(t.net.latestLedger.txHashes.sort()).toEqual([hex(classic[0]!), hex(sorobanTxs[0]!)].sort());
    // the classic lane surged at 5,000; the Soroban lane's clearing rate is its own (300)
    expect(BigInt(applied(await t.rpc.getTransaction(hex(classic[0]!))).resultXdr!.feeCharged)).toBe(5000n);
    const soroban = applied(await t.rpc.getTransaction(hex(sorobanTxs[0]!)));
    expect(BigInt(soroban.resultXdr!.feeCharged) <= BigInt(sorobanTxs[0]!.fee)).toBe(true); // 300 + its resource fee at most
    t.close();
    expect(t.net.latestLedger.txHashes.sort()).toEqual([hex(classic[1]!), hex(sorobanTxs[1]!)].sort());
  });
});

describe("aging and bans", () => {
  test("a transaction not included within 4 ledgers is dropped and banned for 10", async () => {
    t = await startLocalnet({ ledgerCloseMs: 0, maxTxSetSize: 1 });
    const [slowUser, ...others] = await fundMany(5);
    const slow = payment(slowUser, 100);
    expect((await t.rpc.sendTransaction(slow)).status).toBe("PENDING");
    for (const o of others) {
      expect((await t.rpc.sendTransaction(payment(o, 1000))).status).toBe("PENDING");
      t.close();
    }
    expect((await t.rpc.getTransaction(hex(slow))).status).toBe(S.NOT_FOUND);
    expect(t.net.queue.byAnyHash(hex(slow))).toBeUndefined();
    expect((await t.rpc.sendTransaction(slow)).status).toBe("TRY_AGAIN_LATER");
    for (let i = 0; i < 10; i++) t.close();
    expect((await t.rpc.sendTransaction(slow)).status).toBe("PENDING");
  });
});
