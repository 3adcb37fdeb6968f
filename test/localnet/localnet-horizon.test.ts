/**
 * Localnet's Horizon subset through the SDK's Horizon.Server (and raw fetch where the SDK hides the
 * wire): accounts, synchronous and asynchronous submission with stellar-horizon's problem documents
 * (docs/stellar-notes.md), fee stats, the root resource and friendbot.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  Account,
  Asset,
  BadResponseError,
  type Horizon,
  Keypair,
  Operation,
  TransactionBuilder,
  TransactionFailedError,
  rpc,
  xdr,
  type FeeBumpTransaction,
  type Transaction,
} from "@stellar/stellar-sdk";
import { builder, hex, startLocalnet, type TestNet } from "../support/localnet.ts";

let t: TestNet;

const b64 = (tx: Transaction | FeeBumpTransaction) => tx.toEnvelope().toXdr("base64");

/** Manual ledgers: close one as soon as `tx` is queued, unless the submission has already settled. */
async function closeWhenQueued(
  t: TestNet,
  tx: Transaction | FeeBumpTransaction,
  pending: Promise<unknown>,
): Promise<void> {
  let settled = false;
  pending.then(
    () => (settled = true),
    () => (settled = true),
  );
  const hash = hex(tx);
  while (!settled && !t.net.queue.byAnyHash(hash)) await Bun.sleep(2);
  if (!settled) t.close();
}

/** POST /transactions through the SDK, closing the ledger the transaction needs. */
async function submitSync(
  tx: Transaction | FeeBumpTransaction,
): Promise<Horizon.HorizonApi.SubmitTransactionResponse & Record<string, any>> {
  const p = t.horizon.submitTransaction(tx);
  await closeWhenQueued(t, tx, p);
  return p;
}

/** The SDK error a rejected submission produced. */
async function rejection(p: Promise<unknown>): Promise<BadResponseError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(BadResponseError);
    return e as BadResponseError;
  }
  throw new Error("the submission was expected to be rejected");
}

async function payment(from: Keypair, to: string, amount: string, fee = "100"): Promise<Transaction> {
  const tx = (await builder(t, from, fee))
    .addOperation(Operation.payment({ destination: to, asset: Asset.native(), amount }))
    .build();
  tx.sign(from);
  return tx;
}

/** A payment from `from` with an explicit sequence number (the account's current one + `ahead`). */
async function paymentAtSeq(from: Keypair, to: string, ahead: bigint): Promise<Transaction> {
  const current = t.net.account(from.publicKey())!.seqNum;
  const tx = new TransactionBuilder(new Account(from.publicKey(), (current + ahead - 1n).toString()), {
    fee: "100",
    networkPassphrase: t.passphrase,
  })
    .addOperation(Operation.payment({ destination: to, asset: Asset.native(), amount: "1" }))
    .setTimeout(60)
    .build();
  tx.sign(from);
  return tx;
}

async function postForm(
  path: string,
  body: string,
  contentType?: string,
): Promise<{ status: number; type: string | null; json: any }> {
  const res = await fetch(`${t.url}${path}`, {
    method: "POST",
    headers: contentType ? { "content-type": contentType } : {},
    body,
  });
  return { status: res.status, type: res.headers.get("content-type"), json: await res.json() };
}

beforeAll(async () => {
  t = await startLocalnet({ ledgerCloseMs: 0 });
});
afterAll(async () => {
  await t?.stop();
});

describe("accounts", () => {
  test("loadAccount: sequence, balances, thresholds, signers", async () => {
    const a = await t.funded();
    const acc = await t.horizon.loadAccount(a.publicKey());
    const state = t.net.account(a.publicKey())!;
    expect(acc.accountId()).toBe(a.publicKey());
    expect(acc.sequenceNumber()).toBe(state.seqNum.toString());
    expect(acc.sequence).toBe(state.seqNum.toString());
    expect(acc.balances).toEqual([
      {
        balance: "10000.0000000",
        buying_liabilities: "0.0000000",
        selling_liabilities: "0.0000000",
        asset_type: "native",
      },
    ]);
    expect(acc.thresholds).toEqual({ low_threshold: 0, med_threshold: 0, high_threshold: 0 });
    expect(acc.signers).toEqual([{ weight: 1, key: a.publicKey(), type: "ed25519_public_key" }]);
    expect(acc.subentry_count).toBe(0);
    expect(acc.last_modified_ledger).toBeGreaterThan(1);
    expect(acc.data_attr).toEqual({});
    const startSeq = BigInt(acc.sequence);
    // the account works as a transaction source
    const tx = new TransactionBuilder(acc, { fee: "100", networkPassphrase: t.passphrase })
      .addOperation(
        Operation.setOptions({
          lowThreshold: 1,
          medThreshold: 2,
          highThreshold: 3,
          signer: { ed25519PublicKey: Keypair.random().publicKey(), weight: 2 },
        }),
      )
      .setTimeout(60)
      .build();
    tx.sign(a);
    expect((await submitSync(tx)).successful).toBe(true);
    const after = await t.horizon.loadAccount(a.publicKey());
    expect(after.thresholds).toEqual({ low_threshold: 1, med_threshold: 2, high_threshold: 3 });
    expect(after.signers.length).toBe(2);
    expect(after.signers.find((s) => s.key === a.publicKey())?.weight).toBe(1);
    expect(after.subentry_count).toBe(1);
    expect(BigInt(after.sequence)).toBe(startSeq + 1n);
    expect(after.balances[0].balance).toBe("9999.9999900");
  });

  test("an unknown account is a 404", async () => {
    const e = await t.horizon.loadAccount(Keypair.random().publicKey()).catch((x) => x);
    expect(e?.response?.status).toBe(404);
  });
});

describe("POST /transactions", () => {
  test("success: hash, ledger, successful, fee_charged 100", async () => {
    const a = await t.funded();
    const b = await t.funded();
    const tx = await payment(a, b.publicKey(), "12.5");
    const r = await submitSync(tx);
    expect(r.hash).toBe(hex(tx));
    expect(r.ledger).toBe(t.net.latestLedger.sequence);
    expect(r.successful).toBe(true);
    expect(r.fee_charged).toBe("100");
    expect(r.max_fee).toBe("100");
    expect(r.source_account).toBe(a.publicKey());
    expect(r.fee_account).toBe(a.publicKey());
    expect(r.operation_count).toBe(1);
    expect(r.envelope_xdr).toBe(b64(tx));
    expect(xdr.TransactionResult.fromXdr(r.result_xdr, "base64").result.type).toBe("txSuccess");
    expect((await t.horizon.loadAccount(b.publicKey())).balances[0].balance).toBe("10012.5000000");
    // submitting it again returns the stored result
    const again = await t.horizon.submitTransaction(tx);
    expect(again.hash).toBe(r.hash);
    expect(again.ledger).toBe(r.ledger);
  });

  test("a fee-bump: fee_account, max_fee and the inner transaction", async () => {
    const a = await t.funded();
    const sponsor = await t.funded();
    const inner = await payment(a, sponsor.publicKey(), "1");
    const fb = TransactionBuilder.buildFeeBumpTransaction(sponsor, "300", inner, t.passphrase);
    fb.sign(sponsor);
    const r = await submitSync(fb);
    expect(r.successful).toBe(true);
    expect(r.hash).toBe(hex(fb));
    expect(r.fee_account).toBe(sponsor.publicKey());
    expect(r.source_account).toBe(a.publicKey());
    expect(r.max_fee).toBe("600");
    expect(r.fee_charged).toBe("200");
    const raw = r as unknown as {
      fee_bump_transaction: { hash: string };
      inner_transaction: { hash: string; max_fee: string };
    };
    expect(raw.fee_bump_transaction.hash).toBe(hex(fb));
    expect(raw.inner_transaction.hash).toBe(hex(inner));
    expect(raw.inner_transaction.max_fee).toBe("100");

    // the inner transaction submitted on its own: Horizon answers for the inner hash
    const byInner = await t.horizon.submitTransaction(inner);
    expect(byInner.successful).toBe(true);
    expect(byInner.hash).toBe(hex(inner));
    expect(byInner.ledger).toBe(r.ledger);
  });

  test("op_underfunded: TransactionFailedError with tx_failed", async () => {
    const a = await t.funded();
    const b = await t.funded();
    const tx = await payment(a, b.publicKey(), "20000");
    const e = await rejection(submitSync(tx));
    expect(e).toBeInstanceOf(TransactionFailedError);
    expect(e.response.status).toBe(400);
    const data = e.response.data as any;
    expect(data.type).toBe("https://stellar.org/horizon-errors/transaction_failed");
    expect(data.status).toBe(400);
    expect(data.extras.result_codes).toEqual({ transaction: "tx_failed", operations: ["op_underfunded"] });
    expect(data.extras.envelope_xdr).toBe(b64(tx));
    const result = xdr.TransactionResult.fromXdr(data.extras.result_xdr, "base64");
    expect(result.result.type).toBe("txFailed");
    expect(result.feeCharged).toBe(100n);
    expect((e as TransactionFailedError).getResultCodes()).toEqual({
      transaction: "tx_failed",
      operations: ["op_underfunded"],
    } as never);
    // the fee was charged and the sequence number consumed
    const acc = await t.horizon.loadAccount(a.publicKey());
    expect(acc.balances[0].balance).toBe("9999.9999900");
  });

  test("a payment to a missing account: op_no_destination", async () => {
    const a = await t.funded();
    const tx = await payment(a, Keypair.random().publicKey(), "1");
    const e = await rejection(submitSync(tx));
    expect(e).toBeInstanceOf(TransactionFailedError);
    expect(e.response.status).toBe(400);
    expect((e.response.data as any).extras.result_codes).toEqual({
      transaction: "tx_failed",
      operations: ["op_no_destination"],
    });
  });

  test("a multi-operation failure lists every operation's code", async () => {
    const a = await t.funded();
    const b = await t.funded();
    const tx = (await builder(t, a, "100"))
      .addOperation(Operation.payment({ destination: b.publicKey(), asset: Asset.native(), amount: "1" }))
      .addOperation(
        Operation.payment({ destination: Keypair.random().publicKey(), asset: Asset.native(), amount: "1" }),
      )
      .build();
    tx.sign(a);
    const e = await rejection(submitSync(tx));
    expect((e.response.data as any).extras.result_codes).toEqual({
      transaction: "tx_failed",
      operations: ["op_success", "op_no_destination"],
    });
  });

  test("a bad sequence number: 400 tx_bad_seq without operations", async () => {
    const a = await t.funded();
    const tx = await paymentAtSeq(a, t.net.root.publicKey(), 5n);
    const e = await rejection(t.horizon.submitTransaction(tx));
    expect(e).toBeInstanceOf(TransactionFailedError);
    expect(e.response.status).toBe(400);
    const data = e.response.data as any;
    expect(data.extras.result_codes).toEqual({ transaction: "tx_bad_seq" });
    expect(xdr.TransactionResult.fromXdr(data.extras.result_xdr, "base64").result.type).toBe("txBadSeq");
  });

  test("a fee-bump whose inner transaction is invalid: tx_fee_bump_inner_failed / tx_bad_seq", async () => {
    const a = await t.funded();
    const sponsor = await t.funded();
    const inner = await paymentAtSeq(a, sponsor.publicKey(), 3n);
    const fb = TransactionBuilder.buildFeeBumpTransaction(sponsor, "200", inner, t.passphrase);
    fb.sign(sponsor);
    const e = await rejection(t.horizon.submitTransaction(fb));
    expect(e).toBeInstanceOf(TransactionFailedError);
    expect(e.response.status).toBe(400);
    const data = e.response.data as any;
    expect(data.extras.result_codes).toEqual({
      transaction: "tx_fee_bump_inner_failed",
      inner_transaction: "tx_bad_seq",
    });
    const result = xdr.TransactionResult.fromXdr(data.extras.result_xdr, "base64");
    expect(result.result.type).toBe("txFeeBumpInnerFailed");
  });

  test("a fee-bump whose inner payment fails at apply, and the same inner submitted alone", async () => {
    const a = await t.funded();
    const sponsor = await t.funded();
    const inner = await payment(a, sponsor.publicKey(), "50000");
    const fb = TransactionBuilder.buildFeeBumpTransaction(sponsor, "200", inner, t.passphrase);
    fb.sign(sponsor);
    const e = await rejection(submitSync(fb));
    expect((e.response.data as any).extras.result_codes).toEqual({
      transaction: "tx_fee_bump_inner_failed",
      inner_transaction: "tx_failed",
      operations: ["op_underfunded"],
    });
    // stellar-horizon: a request for the inner hash sees the inner result
    const alone = await rejection(t.horizon.submitTransaction(inner));
    expect(alone.response.status).toBe(400);
    expect((alone.response.data as any).extras.result_codes).toEqual({
      transaction: "tx_failed",
      operations: ["op_underfunded"],
    });
  });

  test("malformed envelope: 400 transaction_malformed", async () => {
    const r = await postForm(
      "/transactions",
      `tx=${encodeURIComponent("AAAAAgAAAAB=not-xdr")}`,
      "application/x-www-form-urlencoded",
    );
    expect(r.status).toBe(400);
    expect(r.type).toContain("application/problem+json");
    expect(r.json.type).toBe("https://stellar.org/horizon-errors/transaction_malformed");
    expect(r.json.extras.envelope_xdr).toBe("AAAAAgAAAAB=not-xdr");
  });

  test("application/json body: 415", async () => {
    const a = await t.funded();
    const tx = await payment(a, t.net.root.publicKey(), "1");
    const r = await postForm("/transactions", JSON.stringify({ tx: b64(tx) }), "application/json");
    expect(r.status).toBe(415);
    expect(r.json.status).toBe(415);
    expect(r.json.type).toBe("https://stellar.org/horizon-errors/unsupported_media_type");
    const async = await postForm("/transactions_async", JSON.stringify({ tx: b64(tx) }), "application/json");
    expect(async.status).toBe(415);
    expect(t.net.queue.byAnyHash(hex(tx))).toBeUndefined();
  });

  test("a missing tx field: 400", async () => {
    const r = await postForm("/transactions", "foo=bar", "application/x-www-form-urlencoded");
    expect(r.status).toBe(400);
  });
});

describe("POST /transactions_async", () => {
  test("PENDING (201), then DUPLICATE (409) for the same transaction", async () => {
    const a = await t.funded();
    const tx = await payment(a, t.net.root.publicKey(), "1");
    const first = await t.horizon.submitAsyncTransaction(tx);
    expect(first).toEqual({ tx_status: "PENDING", hash: hex(tx) } as never);
    const e = await rejection(t.horizon.submitAsyncTransaction(tx));
    expect(e.response.status).toBe(409);
    expect(e.response.data).toEqual({ tx_status: "DUPLICATE", hash: hex(tx) } as never);
    t.close();
    expect((await t.rpc.getTransaction(hex(tx))).status).toBe(rpc.Api.GetTransactionStatus.SUCCESS);
  });

  test("raw: 201 PENDING and 400 ERROR with error_result_xdr", async () => {
    const a = await t.funded();
    const ok = await payment(a, t.net.root.publicKey(), "1");
    const pending = await postForm(
      "/transactions_async",
      `tx=${encodeURIComponent(b64(ok))}`,
      "application/x-www-form-urlencoded",
    );
    expect(pending.status).toBe(201);
    expect(pending.json).toEqual({ tx_status: "PENDING", hash: hex(ok) });
    // another source: `a` already has a queued transaction (that would be TRY_AGAIN_LATER, 503)
    const other = await t.funded();
    const bad = await paymentAtSeq(other, t.net.root.publicKey(), 7n);
    const err = await postForm(
      "/transactions_async",
      `tx=${encodeURIComponent(b64(bad))}`,
      "application/x-www-form-urlencoded",
    );
    expect(err.status).toBe(400);
    expect(err.json.tx_status).toBe("ERROR");
    expect(xdr.TransactionResult.fromXdr(err.json.error_result_xdr, "base64").result.type).toBe("txBadSeq");
    t.close();
  });
});

describe("GET endpoints", () => {
  test("GET /fee_stats", async () => {
    const res = await fetch(`${t.url}/fee_stats`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body.last_ledger).toBe(String(t.net.latestLedger.sequence));
    expect(body.last_ledger_base_fee).toBe("100");
    expect(typeof body.ledger_capacity_usage).toBe("string");
    for (const d of [body.fee_charged, body.max_fee]) {
      expect(Object.keys(d).sort()).toEqual(
        ["max", "min", "mode", "p10", "p20", "p30", "p40", "p50", "p60", "p70", "p80", "p90", "p95", "p99"].sort(),
      );
      for (const v of Object.values(d)) expect(v).toMatch(/^\d+$/);
    }
    const sdk = await t.horizon.feeStats();
    expect(sdk.last_ledger_base_fee).toBe("100");
    expect(sdk.fee_charged.p50).toMatch(/^\d+$/);
  });

  test("GET / has the network passphrase", async () => {
    const res = await fetch(`${t.url}/`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body.network_passphrase).toBe(t.passphrase);
    expect(body.history_latest_ledger).toBe(t.net.latestLedger.sequence);
    expect(body.current_protocol_version).toBe(27);
    expect((await t.horizon.root()).network_passphrase).toBe(t.passphrase);
  });
});

describe("friendbot", () => {
  test("funding the same address twice: 400 on the second", async () => {
    const kp = Keypair.random();
    const first = fetch(`${t.url}/friendbot?addr=${kp.publicKey()}`);
    const root = t.net.root.publicKey();
    for (let i = 0; i < 2000 && !t.net.queue.bySource.has(root); i++) await Bun.sleep(1);
    t.close();
    const r1 = await first;
    expect(r1.status).toBe(200);
    const body = (await r1.json()) as any;
    expect(body.successful).toBe(true);
    expect(body.hash).toMatch(/^[0-9a-f]{64}$/);
    const r2 = await fetch(`${t.url}/friendbot?addr=${kp.publicKey()}`);
    expect(r2.status).toBe(400);
    expect(((await r2.json()) as any).status).toBe(400);
    expect((await t.horizon.loadAccount(kp.publicKey())).balances[0].balance).toBe("10000.0000000");
  });

  test("an invalid address: 400", async () => {
    const r = await fetch(`${t.url}/friendbot?addr=GNOTANADDRESS`);
    expect(r.status).toBe(400);
  });

  test("the SDK's fundAddress and requestAirdrop (POST) fund accounts", async () => {
    const [a, b] = [Keypair.random(), Keypair.random()];
    let done = false;
    const funding = Promise.all([
      t.rpc.fundAddress(a.publicKey(), `${t.url}/friendbot`),
      t.rpc.requestAirdrop(b.publicKey(), `${t.url}/friendbot`),
    ]).finally(() => {
      done = true;
    });
    for (let i = 0; i < 50 && !done; i++) {
      await Bun.sleep(20);
      t.close();
    }
    const [funded, airdropped] = await funding;
    expect(funded.status).toBe("SUCCESS" as never);
    expect(airdropped.accountId()).toBe(b.publicKey());
    for (const kp of [a, b])
      expect((await t.horizon.loadAccount(kp.publicKey())).balances[0].balance).toBe("10000.0000000");
    await expect(t.rpc.fundAddress(a.publicKey(), `${t.url}/friendbot`)).rejects.toThrow(/already funded/);
  });
});

describe("submission timeout", () => {
  let slow: TestNet;
  beforeAll(async () => {
    slow = await startLocalnet({ ledgerCloseMs: 0, submissionTimeoutMs: 150 });
  });
  afterAll(async () => {
    await slow?.stop();
  });

  test("no ledger closes: 504 transaction_submission_timeout with the hash", async () => {
    const a = await slow.funded();
    const tx = (await builder(slow, a))
      .addOperation(Operation.payment({ destination: slow.net.root.publicKey(), asset: Asset.native(), amount: "1" }))
      .build();
    tx.sign(a);
    const started = Date.now();
    let e: BadResponseError | undefined;
    try {
      await slow.horizon.submitTransaction(tx);
    } catch (x) {
      e = x as BadResponseError;
    }
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(e).toBeInstanceOf(BadResponseError);
    expect(e).not.toBeInstanceOf(TransactionFailedError);
    expect(e!.response.status).toBe(504);
    const data = e!.response.data as any;
    expect(data.status).toBe(504);
    expect(data.type).toBe("https://stellar.org/horizon-errors/transaction_submission_timeout");
    expect(data.extras.hash).toBe(hex(tx));
    expect(data.extras.envelope_xdr).toBe(b64(tx));
    // the transaction is still queued and lands in the next ledger
    expect(slow.net.queue.byAnyHash(hex(tx))).toBeDefined();
    slow.close();
    const again = await slow.horizon.submitTransaction(tx);
    expect(again.successful).toBe(true);
  });

  test("TRY_AGAIN_LATER (a second transaction from a source with one queued) also ends in 504", async () => {
    const a = await slow.funded();
    const first = (await builder(slow, a))
      .addOperation(Operation.payment({ destination: slow.net.root.publicKey(), asset: Asset.native(), amount: "1" }))
      .build();
    first.sign(a);
    expect((await slow.rpc.sendTransaction(first)).status).toBe("PENDING");
    const acc = new Account(a.publicKey(), (slow.net.account(a.publicKey())!.seqNum + 1n).toString());
    const second = new TransactionBuilder(acc, { fee: "100", networkPassphrase: slow.passphrase })
      .addOperation(Operation.payment({ destination: slow.net.root.publicKey(), asset: Asset.native(), amount: "2" }))
      .setTimeout(60)
      .build();
    second.sign(a);
    const e = await slow.horizon.submitTransaction(second).then(
      () => undefined,
      (x) => x as BadResponseError,
    );
    expect(e?.response.status).toBe(504);
    slow.close();
  });
});
