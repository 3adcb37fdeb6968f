/**
 * The submit loop's retry policy, against a scripted network: each test scripts what
 * sendTransaction answers and when the watcher sees a ledger, and checks what the loop sent and
 * what it concluded.
 */
import { expect, test } from "bun:test";
import { Account, Keypair, Networks, Operation, TransactionBuilder, xdr, type Transaction } from "@stellar/stellar-sdk";
import { createLogger } from "../../src/kernel/log.ts";
import type { Gateway, Sent } from "../../src/network/gateway.ts";
import type { Confirmed } from "../../src/network/ledger-watcher.ts";
import { Submitter } from "../../src/network/submitter.ts";
import { RETRY_POLICY, type SendRequest } from "../../src/network/submit-protocol.ts";
import { drive, type StepAnswers } from "../../src/features/tx/submit-steps.ts";
import { RelayError } from "../../src/kernel/errors.ts";
import { signedOf } from "../../src/stellar/envelope.ts";

const source = Keypair.random();
const sdkTx = (rate: bigint): Transaction => {
  const t = new TransactionBuilder(new Account(source.publicKey(), "1"), {
    fee: rate.toString(),
    networkPassphrase: Networks.TESTNET,
  })
    .addOperation(Operation.bumpSequence({ bumpTo: "0" }))
    .setTimeout(0)
    .build();
  t.sign(source);
  return t;
};
const tx = (rate: bigint) => signedOf(sdkTx(rate));

const errorResult = (code: "txBadSeq" | "txInsufficientFee" | "txTooLate") =>
  new xdr.TransactionResult({
    feeCharged: xdr.Int64.fromString("0"),
    result: xdr.TransactionResultResult[code](),
    ext: xdr.TransactionResultExt.v0(),
  }).toXDR("base64");

const confirmed = (hash: string): Confirmed => ({
  hash,
  innerHash: null,
  successful: true,
  ledger: 9,
  resultXdr: "",
  feeCharged: 100n,
});

/**
 * A scripted network: `answers` are sendTransaction's answers in turn (a function may throw);
 * `landed` makes a sent hash confirmed (at once) when it returns true.
 */
function network(answers: (Sent | (() => Sent))[], landed: (hash: string) => boolean = () => false) {
  const sent: { hash: string; fee: string }[] = [];
  let ledger = 10;
  const gw = {
    name: "testnet",
    watcher: {
      get latestLedger() {
        return ledger;
      },
      watch: (hash: string, timeoutMs: number) => {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const promise = new Promise<Confirmed | null>((resolve) => {
          const poll = () => {
            if (sent.some((s) => s.hash === hash) && landed(hash)) resolve(confirmed(hash));
            else timer = setTimeout(poll, 5);
          };
          poll();
          setTimeout(() => resolve(null), timeoutMs);
        });
        return { promise, cancel: () => clearTimeout(timer) };
      },
      // every wait for a ledger sees it close at once
      passed: async (l: number) => {
        ledger = Math.max(ledger, l);
        return true;
      },
    },
    send: async (envelope: string) => {
      const t = TransactionBuilder.fromXDR(envelope, Networks.TESTNET);
      sent.push({ hash: Buffer.from(t.hash()).toString("hex"), fee: t.fee });
      const a = answers.shift() ?? { status: "PENDING", hash: "", latestLedger: ledger, latestLedgerCloseTime: "0" };
      return typeof a === "function" ? a() : a;
    },
  };
  return { gw: gw as unknown as Gateway, sent };
}

const answer = (status: Sent["status"], errorResultXdr?: string): Sent =>
  ({ status, hash: "", latestLedger: 10, latestLedgerCloseTime: "0", errorResultXdr }) as Sent;

/** A submission and how its steps are answered (the relay's part, scripted). */
type Scripted = SendRequest & Omit<StepAnswers, "accepted">;
const submission = (over: Partial<Scripted> = {}): Scripted => ({
  rate: 100n,
  cap: 1000n,
  deadline: Date.now() + 2_000,
  build: tx,
  record: async () => {},
  lookup: async () => null,
  ...over,
});
/** The submitter over `gw`; `submit` drives a run's steps with the scripted answers. */
const submitter = (gw: Gateway, policy = {}) => {
  const sub = new Submitter(gw, createLogger("silent"), { ...RETRY_POLICY, tryAgainLaterMs: 300, ...policy });
  return {
    submit: ({ build, record, resync, lookup, ...plan }: Scripted) =>
      drive(sub.steps({ ...plan, resyncable: resync !== undefined }), { build, record, resync, lookup }),
  };
};

test("PENDING, then the ledger: applied, and each envelope was recorded before it was sent", async () => {
  const { gw, sent } = network([answer("PENDING")], () => true);
  const recorded: string[] = [];
  const r = await submitter(gw).submit(submission({ record: async (_e, hash) => void recorded.push(hash) }));
  expect(r.kind).toBe("applied");
  expect(recorded).toEqual(sent.map((s) => s.hash));
});

test("tx_insufficient_fee doubles the bid up to the cap, then the rejection stands", async () => {
  const { gw, sent } = network(Array.from({ length: 6 }, () => answer("ERROR", errorResult("txInsufficientFee"))));
  const r = await submitter(gw).submit(submission({ rate: 100n, cap: 500n }));
  expect(sent.map((s) => s.fee)).toEqual(["100", "200", "400", "500"]);
  expect(r).toMatchObject({ kind: "rejected", accepted: false });
});

test("tx_bad_seq re-reads the sequence number up to badSeqRetries times", async () => {
  const { gw, sent } = network(Array.from({ length: 9 }, () => answer("ERROR", errorResult("txBadSeq"))));
  let resyncs = 0;
  const r = await submitter(gw).submit(submission({ resync: async () => void resyncs++ }));
  expect([resyncs, sent.length, r.kind]).toEqual([
    RETRY_POLICY.badSeqRetries,
    RETRY_POLICY.badSeqRetries + 1,
    "rejected",
  ]);
});

test("TRY_AGAIN_LATER is retried until tryAgainLaterMs with no ledger closing, then busy when nothing was taken", async () => {
  const { gw, sent } = network(Array.from({ length: 20 }, () => answer("TRY_AGAIN_LATER")));
  // no ledger closes: a wait for one lasts its whole time
  (gw.watcher as { passed: unknown }).passed = (_l: number, ms: number) => Bun.sleep(ms).then(() => false);
  const r = await submitter(gw, { tryAgainLaterMs: 600 }).submit(submission());
  expect(r.kind).toBe("busy");
  expect(sent.length).toBeGreaterThan(1);
});

test("TRY_AGAIN_LATER while ledgers close (the account's transaction queued elsewhere) is retried past tryAgainLaterMs", async () => {
  let ledger = 10;
  const later = () => ({ ...answer("TRY_AGAIN_LATER"), latestLedger: ++ledger });
  const { gw, sent } = network([...Array.from({ length: 12 }, () => later), answer("PENDING")], () => true);
  (gw.watcher as { passed: unknown }).passed = (_l: number, ms: number) =>
    Bun.sleep(Math.min(ms, 100)).then(() => true);
  const r = await submitter(gw, { tryAgainLaterMs: 300 }).submit(submission({ deadline: Date.now() + 5_000 }));
  expect(r.kind).toBe("applied");
  expect(sent.length).toBe(13); // 12 TRY_AGAIN_LATER over about 1.2 s, more than 300 ms
});

test("a fee-bump waiting too long is replaced by a 10x bid; at the cap it waits, and says so", async () => {
  const { gw, sent } = network([]);
  const r = await submitter(gw).submit(
    submission({ innerHash: "aa".repeat(32), rate: 100n, cap: 5000n, deadline: Date.now() + 300 }),
  );
  expect(sent.map((s) => s.fee)).toEqual(["100", "1000"]);
  expect(r).toMatchObject({ kind: "unknown", reason: "fee_cap_reached", rate: 1000n, accepted: true });
});

test("the submission's fee strategy says after how many missed ledgers it is replaced (fast: one, economy: two)", async () => {
  for (const [after, waitedFor] of [
    [1, 10],
    [2, 11],
    [undefined, 10 + RETRY_POLICY.replaceAfterLedgers - 1],
  ] as const) {
    const { gw, sent } = network([]);
    const asked: number[] = [];
    const passed = gw.watcher.passed;
    gw.watcher.passed = (l: number) => {
      asked.push(l);
      return passed(l, 0);
    };
    await submitter(gw).submit(
      submission({
        innerHash: "aa".repeat(32),
        rate: 100n,
        cap: 5000n,
        deadline: Date.now() + 200,
        replaceAfterLedgers: after,
      }),
    );
    // sent at ledger 10: the replacement waits until a ledger after `waitedFor` was read without it
    expect(asked[0]).toBe(waitedFor);
    expect(sent.map((x) => x.fee)).toEqual(["100", "1000"]);
  }
});

test("after a resumed run, an error is checked against the network: found is applied", async () => {
  const { gw } = network([answer("ERROR", errorResult("txBadSeq"))]);
  const found = confirmed("bb".repeat(32));
  const r = await submitter(gw).submit(
    submission({ resumed: { hash: "cc".repeat(32) }, lookup: async () => found, resync: async () => {} }),
  );
  expect(r).toEqual({ kind: "applied", confirmed: found });
});

test("after a resumed run, tx_too_late with nothing found: nothing can be queued, the rejection stands", async () => {
  const { gw, sent } = network([answer("ERROR", errorResult("txTooLate"))]);
  const r = await submitter(gw).submit(submission({ resumed: { hash: "cc".repeat(32) } }));
  expect([r.kind, sent.length]).toEqual(["rejected", 1]);
});

test("a lookup the network cannot answer after a resumed run: unknown, not a guess", async () => {
  const { gw } = network([answer("ERROR", errorResult("txBadSeq"))]);
  const r = await submitter(gw).submit(
    submission({
      resumed: { hash: "cc".repeat(32) },
      lookup: async () => {
        throw new Error("down");
      },
    }),
  );
  expect(r).toMatchObject({ kind: "unknown", reason: "network_unavailable" });
});

test("a send that may have reached the network is sent again, then unknown; one refused outright throws", async () => {
  const timeout = () => {
    throw new RelayError("NETWORK_UNAVAILABLE", "t", { reason: "timeout" });
  };
  const lost = () => {
    throw new RelayError("NETWORK_UNAVAILABLE", "c", { reason: "bad_answer" });
  };
  const refused = () => {
    throw new RelayError("NETWORK_UNAVAILABLE", "r", { reason: "unreachable" });
  };
  const a = network([timeout, lost]);
  expect(await submitter(a.gw).submit(submission())).toMatchObject({ kind: "unknown", reason: "network_unavailable" });
  expect(a.sent).toHaveLength(2);
  expect(a.sent[1]).toEqual(a.sent[0]!); // the same envelope, not another one
  const b = network([refused]);
  await expect(submitter(b.gw).submit(submission())).rejects.toThrow("r");
  expect(b.sent).toHaveLength(1);
});

test("after a lost answer, the same envelope again: DUPLICATE waits for the ledger, an error is checked", async () => {
  const lost = () => {
    throw new RelayError("NETWORK_UNAVAILABLE", "c", { reason: "bad_answer" });
  };
  // the first send was taken: the second is a DUPLICATE, and the ledger has it
  const a = network([lost, answer("DUPLICATE")], () => true);
  const ra = await submitter(a.gw).submit(submission());
  expect(ra).toMatchObject({ kind: "applied", confirmed: { hash: a.sent[0]!.hash } });
  expect(a.sent.map((x) => x.hash)).toEqual([a.sent[0]!.hash, a.sent[0]!.hash]);
  // the first send was applied already: the second is tx_bad_seq, and the record decides
  const b = network([lost, answer("ERROR", errorResult("txBadSeq"))]);
  const rb = await submitter(b.gw).submit(
    submission({ lookup: async (h) => (h === b.sent[0]!.hash ? confirmed(h) : null) }),
  );
  expect(rb).toMatchObject({ kind: "applied", confirmed: { hash: b.sent[0]!.hash } });
  expect(b.sent).toHaveLength(2);
  // nothing of it is anywhere: the resend is simply sent (PENDING) and lands
  const c = network([lost, answer("PENDING")], () => true);
  expect(await submitter(c.gw).submit(submission())).toMatchObject({ kind: "applied" });
});

test("the run asks its caller in steps (build, record, accepted) and holds none of its functions", async () => {
  const { gw, sent } = network([answer("PENDING")], () => true);
  const steps = new Submitter(gw, createLogger("silent"), RETRY_POLICY).steps({
    rate: 100n,
    cap: 1000n,
    deadline: Date.now() + 2_000,
  });
  const asked: string[] = [];
  let next = await steps.next();
  while (!next.done) {
    asked.push(next.value.kind);
    next = await steps.next(next.value.kind === "build" ? tx(next.value.rate) : undefined);
  }
  expect(asked).toEqual(["build", "record", "accepted"]);
  expect(next.value.kind).toBe("applied");
  expect(sent).toHaveLength(1);
});

test("an intent the caller cannot record is thrown into the run: nothing is sent, the failure is the caller's", async () => {
  const { gw, sent } = network([answer("PENDING")], () => true);
  const run = submitter(gw).submit(
    submission({
      record: async () => {
        throw new Error("database down");
      },
    }),
  );
  await expect(run).rejects.toThrow("database down");
  expect(sent).toHaveLength(0);
});

test("an expiry's message names a maxTime no date can hold by its number (no error of its own)", async () => {
  const { expired } = await import("../../src/features/sponsor/outcomes.ts");
  const e = expired("aa".repeat(32), 100n, 10, { maxTime: 2n ** 64n - 1n, maxLedger: 5 });
  expect(e.message).toContain(`maxTime ${2n ** 64n - 1n} (unix seconds)`);
  expect(e.details).toMatchObject({ status: "expired", maxLedger: 5, maxTime: String(2n ** 64n - 1n) });
});
