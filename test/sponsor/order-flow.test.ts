/**
 * Order flow: one account's many transactions at once, each with the next sequence number, are sent
 * one per ledger in sequence order, whatever order they arrive in; a gap that is never filled, and a
 * predecessor rejected before any ledger, are answered tx_bad_seq naming the number; one whose maxTime
 * passes while held is expired (tx_too_late).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Asset, Keypair, Operation, TransactionBuilder, type Transaction } from "@stellar/stellar-sdk";
import { xdrOf } from "../support/harness.ts";
import { startTestRelay, type TestRelay } from "../support/relay.ts";

let r: TestRelay;
beforeAll(async () => {
  r = await startTestRelay({ LEDGER_CLOSE_MS: "250", SEQUENCE_HOLD_MS: "2000", SEQUENCE_MAX_HELD_PER_ACCOUNT: "20" });
});
afterAll(() => r.stop());

/** `n` payments of one account with its next `n` sequence numbers. */
async function burst(user: Keypair, n: number): Promise<Transaction[]> {
  return await Promise.all(Array.from({ length: n }, (_, i) => r.payment(user, { seqOffset: BigInt(i) })));
}
const sponsor = (tx: Transaction) => r.post("/v1/sponsor", { transaction: xdrOf(tx), network: "testnet" });
const seqOf = (tx: Transaction) => BigInt(tx.sequence);

/** Each answer 200, in ledgers that follow the sequence numbers, each as the chain has it. */
async function expectInOrder(txs: Transaction[], answers: { status: number; body: Record<string, unknown> }[]) {
  for (const a of answers) expect(a.status).toBe(200);
  const bySeq = txs.map((tx, i) => ({ seq: seqOf(tx), ledger: answers[i]!.body.ledger as number }));
  bySeq.sort((a, b) => (a.seq < b.seq ? -1 : 1));
  for (let i = 1; i < bySeq.length; i++) expect(bySeq[i]!.ledger).toBeGreaterThan(bySeq[i - 1]!.ledger);
  for (const [i, a] of answers.entries()) {
    const got = await r.rpc.getTransaction(a.body.hash as string);
    expect(got.status).toBe("SUCCESS" as never);
    expect((got as { ledger: number }).ledger).toBe(a.body.ledger as number);
    expect(a.body.innerHash).toBe(Buffer.from(txs[i]!.hash()).toString("hex"));
  }
}

describe("one account's burst", () => {
  test("12 payments sent at once all land, one a ledger, in sequence order (longer than SEQUENCE_HOLD_MS)", async () => {
    const user = await r.funded();
    const txs = await burst(user, 12);
    const answers = await Promise.all(txs.map(sponsor));
    await expectInOrder(txs, answers);
    const acc = await r.rpc.getAccount(user.publicKey());
    expect(BigInt(acc.sequenceNumber())).toBe(seqOf(txs[11]!));
  });

  test("8 arriving in reverse order, 50 ms apart, all land in sequence order", async () => {
    const user = await r.funded();
    const txs = await burst(user, 8);
    const pending: Promise<{ status: number; body: Record<string, unknown> }>[] = [];
    for (const tx of [...txs].reverse()) {
      pending.push(sponsor(tx));
      await Bun.sleep(50);
    }
    const answers = (await Promise.all(pending)).reverse();
    await expectInOrder(txs, answers);
  });

  test("a predecessor that fails on chain uses its number: the next one lands", async () => {
    const user = await r.funded();
    const nowhere = Keypair.random().publicKey(); // no such account: op_no_destination, fee charged
    const failing = await r.payment(user, { to: nowhere });
    const next = await r.payment(user, { seqOffset: 1n });
    const [a, b] = await Promise.all([sponsor(failing), sponsor(next)]);
    expect(a.status).toBe(422);
    expect(a.body.error.details.ledger).toBeNumber();
    expect(b.status).toBe(200);
    expect(b.body.ledger).toBeGreaterThan(a.body.error.details.ledger);
  });
});

describe("gaps and refusals", () => {
  test("a gap never filled: held SEQUENCE_HOLD_MS, then tx_bad_seq naming the number it waited for", async () => {
    const user = await r.funded();
    const ahead = await r.payment(user, { seqOffset: 1n }); // its predecessor never comes
    const started = Date.now();
    const res = await sponsor(ahead);
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe("SUBMISSION_FAILED");
    expect(res.body.error.details.result_codes.transaction).toBe("tx_bad_seq");
    expect(res.body.error.details.reason).toBe("sequence_gap");
    expect(res.body.error.details.waitingFor).toBe(String(seqOf(ahead) - 1n));
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_900);
    // nothing of it reached a ledger
    const acc = await r.rpc.getAccount(user.publicKey());
    expect(BigInt(acc.sequenceNumber())).toBe(seqOf(ahead) - 2n);
  });

  test("its maxTime passes while held: expired (tx_too_late), in no ledger, and looked up so", async () => {
    const user = await r.funded();
    const acc = await r.rpc.getAccount(user.publicKey());
    acc.incrementSequenceNumber(); // its predecessor never comes
    const root = r.networks.get("testnet").localnet!.root.publicKey();
    const tx = new TransactionBuilder(acc, { fee: "100", networkPassphrase: r.passphrase })
      .addOperation(Operation.payment({ destination: root, asset: Asset.native(), amount: "1" }))
      .setTimeout(2) // 1 to 2 s from now: before SEQUENCE_HOLD_MS (2 s) ends the hold
      .build();
    tx.sign(user);
    const res = await sponsor(tx);
    expect(res.status).toBe(422);
    expect(res.body.error.details).toMatchObject({
      result_codes: { transaction: "tx_too_late" },
      status: "expired",
      maxTime: tx.timeBounds!.maxTime,
      waitingFor: String(seqOf(tx) - 1n),
    });
    expect(res.body.error.details.reason).toBeUndefined();
    const look = await r.http.get(`/v1/transactions/${Buffer.from(tx.hash()).toString("hex")}`);
    expect([look.status, look.body.status]).toEqual([200, "expired"]);
    expect(BigInt((await r.rpc.getAccount(user.publicKey())).sequenceNumber())).toBe(seqOf(tx) - 2n);
  });

  test("the predecessor comes late: the held one goes after it; meanwhile its look-up says what it waits for", async () => {
    const user = await r.funded();
    const [first, second] = await burst(user, 2);
    const later = sponsor(second!);
    await Bun.sleep(600); // the second is refused by the network as out of order, then held
    const look = await r.http.get(`/v1/transactions/${Buffer.from(second!.hash()).toString("hex")}`);
    expect(look.status).toBe(200);
    expect(look.body).toMatchObject({
      status: "pending",
      waitingFor: { account: user.publicKey(), sequence: String(seqOf(second!)), waitingFor: String(seqOf(first!)) },
    });
    const [a, b] = await Promise.all([sponsor(first!), later]);
    await expectInOrder([first!, second!], [a, b]);
  });

  test("a predecessor rejected before any ledger: its successors are answered naming it", async () => {
    const user = await r.funded();
    const [bad, ...rest] = await burst(user, 3);
    bad!.signatures.splice(0); // then signed by someone else: tx_bad_auth
    bad!.sign(Keypair.random());
    const [a, ...others] = await Promise.all([sponsor(bad!), ...rest.map(sponsor)]);
    expect(a.status).toBe(422);
    expect(a.body.error.details.result_codes.transaction).toBe("tx_bad_auth");
    for (const [i, o] of others.entries()) {
      expect(o.status).toBe(422);
      expect(o.body.error.details.result_codes.transaction).toBe("tx_bad_seq");
      expect(o.body.error.details.reason).toBe("predecessor_rejected");
      expect(o.body.error.details.rejected).toBe(String(seqOf(bad!)));
      // answered as every refusal: its inner hash and status, and the look-up says the same
      const innerHash = Buffer.from(rest[i]!.hash()).toString("hex");
      expect(o.body.error.details).toMatchObject({ innerHash, status: "rejected" });
      expect((await r.http.get(`/v1/transactions/${innerHash}`)).body.status).toBe("rejected");
    }
  });

  test("past the per-account limit of held transactions: 429", async () => {
    const user = await r.funded();
    const txs = await burst(user, 24); // 20 may be held, the first is sent
    const answers = await Promise.all(txs.map(sponsor));
    const limited = answers.filter((a) => a.status === 429);
    expect(limited.length).toBeGreaterThan(0);
    expect(limited[0]!.body.error.details.reason).toBe("too_many_held_for_account");
    expect(answers.filter((a) => a.status === 200).length).toBeGreaterThanOrEqual(20);
  });
});
