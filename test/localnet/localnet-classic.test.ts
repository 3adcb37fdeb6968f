/**
 * Localnet's classic validation and apply rules, each driven through the official SDK clients
 * (rpc.Server: getAccount, sendTransaction, pollTransaction; Horizon.Server: loadAccount).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  Account,
  Asset,
  Claimant,
  Keypair,
  Memo,
  Operation,
  TransactionBuilder,
  xdr,
  type Transaction,
} from "@stellar/stellar-sdk";
import { applied, builder, pay, S, startLocalnet, txCode, type TestNet } from "../support/localnet.ts";

let t: TestNet;
beforeAll(async () => {
  t = await startLocalnet({ ledgerCloseMs: 0 }); // a ledger closes when a test submits: no waiting for one
});
afterAll(() => t.stop());

const innerCode = (r: xdr.TransactionResult): string =>
  (r.result as unknown as { innerResultPair: { result: { result: { type: string } } } }).innerResultPair.result.result
    .type;
const opCodes = (r: xdr.TransactionResult): string[] =>
  (r.result as unknown as { results: { type: string; tr?: { value: { type: string } } }[] }).results.map((o) =>
    o.tr ? o.tr.value.type : o.type,
  );
const stroops = async (kp: Keypair) =>
  BigInt(Math.round(Number((await t.horizon.loadAccount(kp.publicKey())).balances[0].balance) * 1e7));
const balanceOf = (kp: Keypair) => t.net.account(kp.publicKey())!.balance;

async function signed(
  source: Keypair,
  ops: xdr.Operation[],
  opts: { fee?: string; signers?: Keypair[]; edit?: (b: TransactionBuilder) => void } = {},
): Promise<Transaction> {
  const b = await builder(t, source, opts.fee);
  for (const o of ops) b.addOperation(o);
  opts.edit?.(b);
  const tx = b.build();
  for (const s of opts.signers ?? [source]) tx.sign(s);
  return tx;
}

describe("accounts and friendbot", () => {
  test("friendbot funds 10,000 XLM and getAccount/loadAccount agree on the sequence", async () => {
    const a = await t.funded();
    const acc = await t.rpc.getAccount(a.publicKey());
    const h = await t.horizon.loadAccount(a.publicKey());
    expect(h.balances[0].balance).toBe("10000.0000000");
    expect(acc.sequenceNumber()).toBe(h.sequenceNumber());
    expect(BigInt(acc.sequenceNumber()) % (1n << 32n)).toBe(0n); // starting sequence is ledger << 32
  });
});

describe("successful classic operations", () => {
  test("payment moves lumens and charges the base fee", async () => {
    const [a, b] = [await t.funded(), await t.funded()];
    const before = [balanceOf(a), balanceOf(b)];
    const r = await t.submit(await signed(a, [pay(b.publicKey(), "12.5")]));
    expect(r.status).toBe(S.SUCCESS);
    const fee = BigInt(applied(r).resultXdr!.feeCharged);
    expect(fee).toBe(100n);
    expect(balanceOf(a)).toBe(before[0] - 125_000_000n - fee);
    expect(balanceOf(b)).toBe(before[1] + 125_000_000n);
    expect(await stroops(b)).toBe(balanceOf(b));
  });

  test("createAccount, manageData, bumpSequence and accountMerge change state", async () => {
    const a = await t.funded();
    const fresh = Keypair.random();
    let r = await t.submit(
      await signed(a, [
        Operation.createAccount({ destination: fresh.publicKey(), startingBalance: "5" }),
        Operation.manageData({ name: "k", value: "v" }),
      ]),
    );
    expect(r.status).toBe(S.SUCCESS);
    expect(t.net.account(fresh.publicKey())!.balance).toBe(50_000_000n);
    expect(t.net.account(a.publicKey())!.data.get("k")).toEqual(new TextEncoder().encode("v"));
    expect(t.net.account(a.publicKey())!.numSubEntries).toBe(1);
    const bumpTo = BigInt((await t.rpc.getAccount(fresh.publicKey())).sequenceNumber()) + 10n;
    r = await t.submit(await signed(fresh, [Operation.bumpSequence({ bumpTo: bumpTo.toString() })]));
    expect(r.status).toBe(S.SUCCESS);
    expect(BigInt((await t.rpc.getAccount(fresh.publicKey())).sequenceNumber())).toBe(bumpTo);
    r = await t.submit(await signed(fresh, [Operation.accountMerge({ destination: a.publicKey() })]));
    expect(r.status).toBe(S.SUCCESS);
    expect(t.net.account(fresh.publicKey())).toBeUndefined();
    await expect(t.rpc.getAccount(fresh.publicKey())).rejects.toThrow(/Account not found/);
  });

  test("operations localnet does not model are refused (opNOT_SUPPORTED), never applied as a success", async () => {
    const a = await t.funded();
    const usd = new Asset("USD", a.publicKey());
    const before = balanceOf(a);
    const offer = Operation.manageSellOffer({ selling: usd, buying: Asset.native(), amount: "1", price: "1" });
    const claimable = Operation.createClaimableBalance({
      asset: Asset.native(),
      amount: "1",
      claimants: [new Claimant(a.publicKey())],
    });
    for (const op of [offer, claimable]) {
      const r = applied(await t.submit(await signed(a, [op])));
      expect(r.status).toBe(S.FAILED);
      expect(opCodes(r.resultXdr)).toEqual(["opNotSupported"]);
    }
    expect(balanceOf(a)).toBe(before - 200n); // the fees only
  });

  test("a V0 envelope is accepted and hashed as V1", async () => {
    const a = await t.funded();
    const tx = await signed(a, [pay(t.net.root.publicKey())]);
    const v1 = (tx.toEnvelope() as xdr.TransactionEnvelopeTx).v1;
    const raw = v1.tx;
    const v0 = xdr.TransactionEnvelope.envelopeTypeTxV0(
      new xdr.TransactionV0Envelope({
        tx: new xdr.TransactionV0({
          sourceAccountEd25519: a.rawPublicKey(),
          fee: raw.fee,
          seqNum: raw.seqNum,
          timeBounds: (raw.cond as unknown as { timeBounds: xdr.TimeBounds }).timeBounds,
          memo: raw.memo,
          operations: raw.operations,
          ext: xdr.TransactionV0Ext.v0(),
        }),
        signatures: v1.signatures,
      }),
    );
    const res = await fetch(`${t.url}/rpc`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "sendTransaction",
        params: { transaction: v0.toXdr("base64") },
      }),
    }).then((x) => x.json() as Promise<{ result: { status: string; hash: string } }>);
    expect(res.result.status).toBe("PENDING");
    expect(res.result.hash).toBe(Buffer.from(tx.hash()).toString("hex"));
    t.close();
    const got = await t.rpc.pollTransaction(res.result.hash, { attempts: 50, sleepStrategy: () => 20 });
    expect(got.status).toBe(S.SUCCESS);
  });
});

describe("validation result codes", () => {
  test("tx_bad_seq", async () => {
    const a = await t.funded();
    const acc = await t.rpc.getAccount(a.publicKey());
    const tx = new TransactionBuilder(new Account(a.publicKey(), (BigInt(acc.sequenceNumber()) + 5n).toString()), {
      fee: "100",
      networkPassphrase: t.passphrase,
    })
      .addOperation(pay(t.net.root.publicKey()))
      .setTimeout(60)
      .build();
    tx.sign(a);
    const s = await t.rpc.sendTransaction(tx);
    expect(s.status).toBe("ERROR");
    expect(txCode(s.errorResult)).toBe("txBadSeq");
    expect(BigInt(s.errorResult!.feeCharged)).toBe(100n);
  });

  test("tx_bad_auth for a wrong signer and tx_bad_auth_extra for an unused signature", async () => {
    const a = await t.funded();
    let s = await t.rpc.sendTransaction(
      await signed(a, [pay(t.net.root.publicKey())], { signers: [Keypair.random()] }),
    );
    expect(txCode(s.errorResult)).toBe("txBadAuth");
    s = await t.rpc.sendTransaction(await signed(a, [pay(t.net.root.publicKey())], { signers: [a, Keypair.random()] }));
    expect(txCode(s.errorResult)).toBe("txBadAuthExtra");
  });

  test("tx_insufficient_fee below the base fee per operation", async () => {
    const a = await t.funded();
    const s = await t.rpc.sendTransaction(
      await signed(a, [pay(t.net.root.publicKey()), pay(t.net.root.publicKey())], { fee: "99" }),
    );
    expect(txCode(s.errorResult)).toBe("txInsufficientFee");
  });

  test("tx_insufficient_balance when the fee exceeds the balance above the reserve", async () => {
    const a = await t.funded();
    const poor = Keypair.random();
    await t.submit(
      await signed(a, [Operation.createAccount({ destination: poor.publicKey(), startingBalance: "1.00001" })]),
    );
    const s = await t.rpc.sendTransaction(await signed(poor, [pay(a.publicKey(), "0.0000001")], { fee: "200" }));
    expect(txCode(s.errorResult)).toBe("txInsufficientBalance");
  });

  test("tx_no_source_account", async () => {
    const ghost = Keypair.random();
    const tx = new TransactionBuilder(new Account(ghost.publicKey(), "1"), {
      fee: "100",
      networkPassphrase: t.passphrase,
    })
      .addOperation(pay(t.net.root.publicKey()))
      .setTimeout(60)
      .build();
    tx.sign(ghost);
    const s = await t.rpc.sendTransaction(tx);
    expect(txCode(s.errorResult)).toBe("txNoAccount");
  });

  test("tx_too_early and tx_too_late from time bounds, and ledger bounds", async () => {
    const a = await t.funded();
    const now = Math.floor(Date.now() / 1000);
    const early = new TransactionBuilder(await t.rpc.getAccount(a.publicKey()), {
      fee: "100",
      networkPassphrase: t.passphrase,
      timebounds: { minTime: now + 3600, maxTime: now + 7200 },
    })
      .addOperation(pay(t.net.root.publicKey()))
      .build();
    early.sign(a);
    expect(txCode((await t.rpc.sendTransaction(early)).errorResult)).toBe("txTooEarly");
    const acc = await t.rpc.getAccount(a.publicKey());
    const late = new TransactionBuilder(acc, {
      fee: "100",
      networkPassphrase: t.passphrase,
      timebounds: { minTime: 0, maxTime: now - 10 },
    })
      .addOperation(pay(t.net.root.publicKey()))
      .build();
    late.sign(a);
    expect(txCode((await t.rpc.sendTransaction(late)).errorResult)).toBe("txTooLate");
    const next = t.net.latestLedger.sequence + 1;
    const lb = new TransactionBuilder(await t.rpc.getAccount(a.publicKey()), {
      fee: "100",
      networkPassphrase: t.passphrase,
      ledgerbounds: { minLedger: 0, maxLedger: next - 1 },
    })
      .addOperation(pay(t.net.root.publicKey()))
      .setTimeout(60)
      .build();
    lb.sign(a);
    expect(txCode((await t.rpc.sendTransaction(lb)).errorResult)).toBe("txTooLate");
  });

  test("preconditions: minSeqNum, minSeqLedgerGap (tx_bad_minseq_age_or_gap) and extra signers", async () => {
    const a = await t.funded();
    const acc = await t.rpc.getAccount(a.publicKey());
    const seq = BigInt(acc.sequenceNumber());
    // with minSeqNum the sequence may jump ahead
    const jump = new TransactionBuilder(new Account(a.publicKey(), (seq + 4n).toString()), {
      fee: "100",
      networkPassphrase: t.passphrase,
      minAccountSequence: seq.toString(),
    })
      .addOperation(pay(t.net.root.publicKey()))
      .setTimeout(60)
      .build();
    jump.sign(a);
    expect((await t.submit(jump)).status).toBe(S.SUCCESS);
    expect(t.net.account(a.publicKey())!.seqNum).toBe(seq + 5n);
    const gap = new TransactionBuilder(await t.rpc.getAccount(a.publicKey()), {
      fee: "100",
      networkPassphrase: t.passphrase,
      minAccountSequenceLedgerGap: 1000,
    })
      .addOperation(pay(t.net.root.publicKey()))
      .setTimeout(60)
      .build();
    gap.sign(a);
    expect(txCode((await t.rpc.sendTransaction(gap)).errorResult)).toBe("txBadMinSeqAgeOrGap");
    const cosigner = Keypair.random();
    const extra = () =>
      new TransactionBuilder(new Account(a.publicKey(), (seq + 5n).toString()), {
        fee: "100",
        networkPassphrase: t.passphrase,
        extraSigners: [cosigner.publicKey()],
      })
        .addOperation(pay(t.net.root.publicKey()))
        .setTimeout(60)
        .build();
    const missing = extra();
    missing.sign(a);
    expect(txCode((await t.rpc.sendTransaction(missing)).errorResult)).toBe("txBadAuth");
    const both = extra();
    both.sign(a, cosigner);
    expect((await t.submit(both)).status).toBe(S.SUCCESS);
  });

  test("tx_missing_operation and tx_malformed", async () => {
    const a = await t.funded();
    const tx = await signed(a, [pay(t.net.root.publicKey())]);
    const env = tx.toEnvelope();
    const raw = (env as xdr.TransactionEnvelopeTx).v1.tx;
    const empty = new xdr.Transaction({
      sourceAccount: raw.sourceAccount,
      fee: raw.fee,
      seqNum: raw.seqNum,
      cond: raw.cond,
      memo: raw.memo,
      operations: [],
      ext: raw.ext,
    });
    const emptyTx = TransactionBuilder.fromXDR(
      xdr.TransactionEnvelope.envelopeTypeTx(new xdr.TransactionV1Envelope({ tx: empty, signatures: [] })).toXdr(
        "base64",
      ),
      t.passphrase,
    ) as Transaction;
    emptyTx.sign(a);
    expect(txCode((await t.rpc.sendTransaction(emptyTx)).errorResult)).toBe("txMissingOperation");
    // a classic transaction that carries Soroban data is malformed
    const withData = await signed(a, [pay(t.net.root.publicKey())], {
      edit: (b) =>
        b.setSorobanData(
          new xdr.SorobanTransactionData({
            ext: xdr.SorobanTransactionDataExt.v0(),
            resources: new xdr.SorobanResources({
              footprint: new xdr.LedgerFootprint({ readOnly: [], readWrite: [] }),
              instructions: 0,
              diskReadBytes: 0,
              writeBytes: 0,
            }),
            resourceFee: 0n,
          }),
        ),
    });
    const s = await t.rpc.sendTransaction(withData);
    expect(txCode(s.errorResult)).toBe("txMalformed");
    expect(BigInt(s.errorResult!.feeCharged)).toBe(0n);
  });

  test("op_underfunded and op_no_destination fail the transaction and still charge the fee", async () => {
    const a = await t.funded();
    const before = balanceOf(a);
    let r = await t.submit(await signed(a, [pay(t.net.root.publicKey(), "20000")]));
    expect(r.status).toBe(S.FAILED);
    expect(txCode(applied(r).resultXdr)).toBe("txFailed");
    expect(opCodes(applied(r).resultXdr!)).toEqual(["paymentUnderfunded"]);
    expect(balanceOf(a)).toBe(before - 100n);
    r = await t.submit(await signed(a, [pay(t.net.root.publicKey(), "1"), pay(Keypair.random().publicKey(), "1")]));
    expect(opCodes(applied(r).resultXdr!)).toEqual(["paymentSuccess", "paymentNoDestination"]);
    expect(balanceOf(a)).toBe(before - 300n); // the first payment was rolled back
  });
});

describe("operation checks on submission", () => {
  test("a malformed operation fails the transaction before anyone pays; the other operations keep their success shape", async () => {
    const a = await t.funded();
    const before = balanceOf(a);
    const s = await t.rpc.sendTransaction(
      await signed(a, [pay(t.net.root.publicKey()), Operation.accountMerge({ destination: a.publicKey() })]),
    );
    expect(s.status).toBe("ERROR");
    expect(txCode(s.errorResult)).toBe("txFailed");
    expect(opCodes(s.errorResult!)).toEqual(["paymentSuccess", "accountMergeMalformed"]);
    expect(balanceOf(a)).toBe(before);
  });

  test("an operation whose source the transaction creates first is valid when that source signed", async () => {
    const a = await t.funded();
    const b = Keypair.random();
    const tx = await signed(
      a,
      [
        Operation.createAccount({ destination: b.publicKey(), startingBalance: "10" }),
        Operation.manageData({ name: "made-by", value: "b", source: b.publicKey() }),
      ],
      { signers: [a, b] },
    );
    const r = await t.submit(tx);
    expect(r.status).toBe(S.SUCCESS);
    expect(t.net.account(b.publicKey())!.data.get("made-by")).toEqual(new TextEncoder().encode("b"));
  });

  test("a new account has no sequence ledger yet: minSeqLedgerGap passes", async () => {
    const a = await t.funded();
    const acc = await t.rpc.getAccount(a.publicKey());
    const gap = new TransactionBuilder(acc, {
      fee: "100",
      networkPassphrase: t.passphrase,
      minAccountSequenceLedgerGap: 2,
    })
      .addOperation(pay(t.net.root.publicKey()))
      .setTimeout(60)
      .build();
    gap.sign(a);
    expect((await t.submit(gap)).status).toBe(S.SUCCESS);
  });
});

describe("signers and thresholds", () => {
  test("setOptions signers: a high-threshold account needs both signatures", async () => {
    const a = await t.funded();
    const cosigner = Keypair.random();
    let r = await t.submit(
      await signed(a, [
        Operation.setOptions({
          signer: { ed25519PublicKey: cosigner.publicKey(), weight: 1 },
          lowThreshold: 2,
          medThreshold: 2,
          highThreshold: 2,
        }),
      ]),
    );
    expect(r.status).toBe(S.SUCCESS);
    expect(t.net.account(a.publicKey())!.numSubEntries).toBe(1);
    expect(txCode((await t.rpc.sendTransaction(await signed(a, [pay(t.net.root.publicKey())]))).errorResult)).toBe(
      "txBadAuth",
    );
    r = await t.submit(await signed(a, [pay(t.net.root.publicKey())], { signers: [a, cosigner] }));
    expect(r.status).toBe(S.SUCCESS);
    const h = await t.horizon.loadAccount(a.publicKey());
    expect(h.signers.map((s) => s.key).sort()).toEqual([a.publicKey(), cosigner.publicKey()].sort());
    expect(h.thresholds.med_threshold).toBe(2);
  });

  test("an operation above the source's threshold fails with op_bad_auth", async () => {
    const a = await t.funded();
    await t.submit(
      await signed(a, [Operation.setOptions({ masterWeight: 2, lowThreshold: 1, medThreshold: 2, highThreshold: 3 })]),
    );
    // master weight 2 reaches low and medium but not high (accountMerge)
    const s = await t.rpc.sendTransaction(
      await signed(a, [Operation.accountMerge({ destination: t.net.root.publicKey() })]),
    );
    expect(txCode(s.errorResult)).toBe("txFailed");
    expect(opCodes(s.errorResult!)).toEqual(["opBadAuth"]);
  });
});

describe("fee-bump transactions", () => {
  const bump = (inner: Transaction, feeSource: Keypair, baseFee = "100") => {
    const fb = TransactionBuilder.buildFeeBumpTransaction(feeSource, baseFee, inner, t.passphrase);
    fb.sign(feeSource);
    return fb;
  };

  test("the fee source pays for ops + 1 at the market rate and the inner source pays nothing", async () => {
    const [user, sponsor] = [await t.funded(), await t.funded()];
    const inner = await signed(user, [pay(t.net.root.publicKey(), "1")], { fee: "0" });
    const [u0, s0] = [balanceOf(user), balanceOf(sponsor)];
    const r = await t.submit(bump(inner, sponsor, "1000"));
    expect(r.status).toBe(S.SUCCESS);
    expect(applied(r).feeBump).toBe(true);
    expect(BigInt(applied(r).resultXdr!.feeCharged)).toBe(200n); // market rate 100 x (1 + 1), not the 2,000 bid
    expect(balanceOf(sponsor)).toBe(s0 - 200n);
    expect(balanceOf(user)).toBe(u0 - 10_000_000n);
    // found by the inner hash too
    const byInner = await t.rpc.getTransaction(Buffer.from(inner.hash()).toString("hex"));
    expect(byInner.status).toBe(S.SUCCESS);
  });

  test("tx_fee_bump_inner_failed carries the inner code", async () => {
    const [user, sponsor] = [await t.funded(), await t.funded()];
    const acc = await t.rpc.getAccount(user.publicKey());
    const inner = new TransactionBuilder(
      new Account(user.publicKey(), (BigInt(acc.sequenceNumber()) + 3n).toString()),
      { fee: "100", networkPassphrase: t.passphrase },
    )
      .addOperation(pay(t.net.root.publicKey()))
      .setTimeout(60)
      .build();
    inner.sign(user);
    const s = await t.rpc.sendTransaction(bump(inner, sponsor));
    expect(txCode(s.errorResult)).toBe("txFeeBumpInnerFailed");
    expect(innerCode(s.errorResult!)).toBe("txBadSeq");
  });

  test("outer errors: rate below the inner rate, bad fee-source auth, unknown fee source", async () => {
    const [user, sponsor] = [await t.funded(), await t.funded()];
    const inner = await signed(user, [pay(t.net.root.publicKey())], { fee: "1000" });
    // the outer rate must be at least the inner rate: 1000/op inner needs >= 2000 for 2 ops
    const cheap = TransactionBuilder.buildFeeBumpTransaction(sponsor, "1000", inner, t.passphrase);
    const env = cheap.toEnvelope() as xdr.TransactionEnvelopeTxFeeBump;
    // lower the SDK's computed outer fee (2,000) below the inner rate
    const lowered = xdr.TransactionEnvelope.envelopeTypeTxFeeBump(
      new xdr.FeeBumpTransactionEnvelope({
        tx: new xdr.FeeBumpTransaction({
          feeSource: env.feeBump.tx.feeSource,
          fee: 1500n,
          innerTx: env.feeBump.tx.innerTx,
          ext: env.feeBump.tx.ext,
        }),
        signatures: [],
      }),
    );
    const low = TransactionBuilder.fromXDR(lowered.toXdr("base64"), t.passphrase);
    low.sign(sponsor);
    const s1 = await t.rpc.sendTransaction(low);
    expect(txCode(s1.errorResult)).toBe("txInsufficientFee");
    expect(BigInt(s1.errorResult!.feeCharged)).toBe(2000n);
    const badAuth = TransactionBuilder.buildFeeBumpTransaction(sponsor, "1000", inner, t.passphrase);
    badAuth.sign(Keypair.random());
    expect(txCode((await t.rpc.sendTransaction(badAuth)).errorResult)).toBe("txBadAuth");
    const ghost = Keypair.random();
    expect(txCode((await t.rpc.sendTransaction(bump(inner, ghost, "1000"))).errorResult)).toBe("txNoAccount");
  });

  test("an applied-but-failed inner transaction still costs the fee source", async () => {
    const [user, sponsor] = [await t.funded(), await t.funded()];
    const inner = await signed(user, [pay(Keypair.random().publicKey(), "1")], { fee: "100" });
    const s0 = balanceOf(sponsor);
    const r = await t.submit(bump(inner, sponsor));
    expect(r.status).toBe(S.FAILED);
    expect(txCode(applied(r).resultXdr)).toBe("txFeeBumpInnerFailed");
    expect(innerCode(applied(r).resultXdr!)).toBe("txFailed");
    expect(balanceOf(sponsor)).toBe(s0 - 200n);
  });
});

test("a memo is accepted on classic transactions", async () => {
  const a = await t.funded();
  const r = await t.submit(await signed(a, [pay(t.net.root.publicKey())], { edit: (b) => b.addMemo(Memo.text("hi")) }));
  expect(r.status).toBe(S.SUCCESS);
});
