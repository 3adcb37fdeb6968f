/**
 * The sponsor path's stages built directly, without a relay: intake (a request as a value), the
 * outcomes' statuses where the verdict is read, and sending (approval and the account's order) around
 * a dispatch that answers as the test says.
 */
import { describe, expect, test } from "bun:test";
import { Account, Asset, Keypair, Networks as Passphrases, Operation, TransactionBuilder } from "@stellar/stellar-sdk";
import { Intakes } from "../../src/features/sponsor/intake.ts";
import {
  outcomeOf,
  sequenceUse,
  submissionFailed,
  timedOut,
  withIdentity,
} from "../../src/features/sponsor/outcomes.ts";
import { Sending } from "../../src/features/sponsor/sending.ts";
import { Ordering } from "../../src/features/sponsor/order/ordering.ts";
import { ParkedLeases, Settlement } from "../../src/features/sponsor/settlement.ts";
import { DEFAULT_ORDER_LIMITS } from "../../src/features/sponsor/order/holds.ts";
import type { Attempt, Sent } from "../../src/features/sponsor/attempt.ts";
import type { Dispatch } from "../../src/features/sponsor/dispatch.ts";
import type { Outcome } from "../../src/store/types.ts";
import { RelayError } from "../../src/kernel/errors.ts";
import { xdr } from "@stellar/stellar-sdk";
import { createLogger } from "../../src/kernel/log.ts";
import { SecretBox } from "../../src/kernel/secret-box.ts";
import { Approvals } from "../../src/features/projects/rules/approval.ts";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";

const silentLogger = createLogger("silent");

/** Sending with its account orders, closed by a settlement that only ends order slots (nothing is stored here). */
function sendingOf(dispatch: Dispatch, approvals?: Approvals): Sending {
  const ordering = new Ordering(DEFAULT_ORDER_LIMITS, silentLogger);
  const deps = { ordering, projects: { settleJournaled() {} }, shared: false, log: silentLogger };
  const settlement = new Settlement({ ...deps, submissions: {} as never, networks: {} as never }, new ParkedLeases());
  return new Sending({ ordering, dispatch, settlement, approvals });
}

const PASSPHRASE = Passphrases.TESTNET;

/** A signed payment of `source` with sequence number `seq`, as base64 XDR, and its hash. */
function payment(source: Keypair, seq: bigint): { b64: string; hash: string } {
  const tx = new TransactionBuilder(new Account(source.publicKey(), (seq - 1n).toString()), {
    fee: "100",
    networkPassphrase: PASSPHRASE,
  })
    .addOperation(Operation.payment({ destination: Keypair.random().publicKey(), asset: Asset.native(), amount: "1" }))
    .setTimeout(0)
    .build();
  tx.sign(source);
  return { b64: tx.toEnvelope().toXDR("base64"), hash: Buffer.from(tx.hash()).toString("hex") };
}

/** A network as intake reads it: its name and passphrase (a transaction's intake touches nothing else). */
const networks = {
  get(name: string) {
    if (name !== "testnet") throw new RelayError("NETWORK_NOT_SERVED", `not served: ${name}`);
    return { name, passphrase: PASSPHRASE } as never;
  },
  pool() {
    throw new Error("not asked for a transaction");
  },
};
const intakes = new Intakes({ networks, submissions: {}, runs: {}, admission: {}, settlement: {} } as never);

describe("intake", () => {
  test("a signed transaction becomes a value: its inner hash, its account's order, its network", () => {
    const source = Keypair.random();
    const { b64, hash } = payment(source, 42n);
    const taken = intakes.transaction(b64, "testnet");
    if ("refused" in taken) throw new Error(JSON.stringify(taken.refused));
    expect(taken.kind).toBe("transaction");
    expect(taken.innerHash).toBe(hash);
    expect(taken.order).toMatchObject({ account: source.publicKey(), seq: 42n });
    expect(taken.refusalKept).toBe(true);
  });

  test("its job and what admission checks: the fee-bump of that inner hash, bidding at least the base fee", async () => {
    const { b64, hash } = payment(Keypair.random(), 7n);
    const taken = intakes.transaction(b64, "testnet");
    if ("refused" in taken) throw new Error("refused");
    const prepared = await intakes.prepare(taken, { projectId: null, scope: "ip:test" } as never);
    if (!("job" in prepared)) throw new Error("answered before its run");
    expect(prepared.job.innerHash).toBe(hash);
    expect(prepared.job.feeBump).toBe(true);
    expect(prepared.job.feeOps).toBe(2n);
    expect(prepared.wanted.floor).toBe(100n);
    expect(prepared.wanted.operationTypes).toEqual(["payment"]);
  });

  test("what cannot be decoded, or is for a network not served, is refused as a value", () => {
    const bad = intakes.transaction("not base64 at all", "testnet");
    expect("refused" in bad && bad.refused.kind === "failure" && bad.refused.error.code).toBe("VALIDATION_ERROR");
    const elsewhere = intakes.transaction(payment(Keypair.random(), 1n).b64, "mainnet");
    expect("refused" in elsewhere && elsewhere.refused.kind === "failure" && elsewhere.refused.error.code).toBe(
      "NETWORK_NOT_SERVED",
    );
  });
});

/** A transaction result of `code` (no operation results), as base64 XDR. */
const resultXdr = (code: "txBadSeq" | "txFailed" | "txBadAuth") =>
  new xdr.TransactionResult({
    feeCharged: xdr.Int64.fromString("100"),
    result:
      code === "txFailed"
        ? xdr.TransactionResultResult.txFailed([])
        : code === "txBadSeq"
          ? xdr.TransactionResultResult.txBadSeq()
          : xdr.TransactionResultResult.txBadAuth(),
    ext: xdr.TransactionResultExt.v0(),
  }).toXDR("base64");

describe("outcomes carry the status the verdict gave them", () => {
  const hash = "ab".repeat(32);
  test("rejected before a ledger, or failed in one", () => {
    expect(submissionFailed(hash, resultXdr("txBadAuth")).data().details?.status).toBe("rejected");
    const applied = submissionFailed(hash, resultXdr("txFailed"), { ledger: 9, feePaid: 200n });
    expect(applied.data().details).toMatchObject({ status: "failed", ledger: 9, feePaid: "200" });
  });

  test("what each says of its sequence number, for the account's order", () => {
    const success: Outcome = { kind: "success", result: { hash, feePaid: "100", ledger: 3, resultXdr: "" } };
    expect(sequenceUse(success)).toBe("applied");
    const failed = outcomeOf(submissionFailed(hash, resultXdr("txFailed"), { ledger: 3, feePaid: 100n }));
    expect(sequenceUse(failed)).toBe("applied");
    expect(sequenceUse(outcomeOf(submissionFailed(hash, resultXdr("txBadSeq"))))).toBe("out_of_order");
    expect(sequenceUse(outcomeOf(submissionFailed(hash, resultXdr("txBadAuth"))))).toBe("rejected");
    expect(sequenceUse(outcomeOf(timedOut(hash, 100n, 30_000)))).toBe("unknown");
    expect(sequenceUse(outcomeOf(new RelayError("NETWORK_UNAVAILABLE", "busy")))).toBe("unknown");
  });

  test("an answer adds the inner hash and keeps the status; one recorded before statuses gets its own", () => {
    const rejected = withIdentity(outcomeOf(submissionFailed(hash, resultXdr("txBadAuth"))), "cd".repeat(32));
    expect(rejected.kind === "failure" && rejected.error.details).toMatchObject({
      hash,
      innerHash: "cd".repeat(32),
      status: "rejected",
    });
    const old: Outcome = {
      kind: "failure",
      error: { code: "SUBMISSION_FAILED", message: "x", details: { hash, ledger: 4 } },
    };
    const answered = withIdentity(old, "cd".repeat(32));
    expect(answered.kind === "failure" && answered.error.details?.status).toBe("failed");
    const policy = outcomeOf(new RelayError("POLICY_VIOLATION", "no"));
    expect(withIdentity(policy, "cd".repeat(32))).toEqual(policy);
  });
});

describe("sending", () => {
  const gateway = {
    name: "testnet",
    accounts: async () => new Map(),
    watcher: { latestLedger: 1, passed: async () => true },
  };
  const applied = (innerHash: string): Sent => ({
    outcome: { kind: "success", result: { hash: innerHash, feePaid: "100", ledger: 2, resultXdr: "" } },
    recorded: true,
  });

  /** A dispatch that holds each submit until the test lets it end, and logs what it was asked. */
  function scriptedDispatch() {
    const calls: string[] = [];
    const ends = new Map<string, (s: Sent) => void>();
    const dispatch = {
      submit: (a: Attempt) => {
        calls.push(`submit ${a.job.innerHash}`);
        return new Promise<Sent>((resolve) => ends.set(a.job.innerHash, resolve));
      },
      hold: async (a: Attempt) => {
        calls.push(`hold ${a.job.innerHash}`);
      },
    };
    return { calls, ends, dispatch: dispatch as unknown as Dispatch };
  }

  const attempt = (innerHash: string, order?: { account: string; seq: bigint }, approval?: object): Attempt =>
    ({
      network: { name: "testnet", gateway },
      run: { accept() {} },
      job: {
        innerHash,
        order: order && { ...order, bytes: 100, transaction: "AAAA" },
        feeBump: true,
        feeOps: 2n,
        resourceFee: 0n,
      },
      plan: { rate: 100n },
      reservation: {
        payer: {
          projectId: "p1",
          scope: "project:p1",
          policy: () => (approval ? { approval } : {}),
        },
      },
      row: { id: crypto.randomUUID(), resume: null, fresh: true },
    }) as never;

  test("an approval server's no is the outcome, as a value: nothing is dispatched", async () => {
    const { calls, dispatch } = scriptedDispatch();
    const asked: unknown[] = [];
    const server = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: async (req) => {
        asked.push(await req.json());
        return Response.json({ approved: false, reason: "not today" });
      },
    });
    const box = SecretBox.open(randomBytes(32).toString("base64"), tmpdir());
    const approvals = new Approvals({ box, allowPrivate: true, log: silentLogger });
    const policy = {
      url: `http://127.0.0.1:${server.port}/approve`,
      timeoutMs: 2000,
      onFailure: "deny" as const,
      sealedSecret: approvals.seal("p1", `whsec_${randomBytes(24).toString("base64")}`),
    };
    try {
      const sending = sendingOf(dispatch, approvals);
      const sent = await sending.send(attempt("aa".repeat(32), undefined, policy));
      expect(sent.recorded).toBe(false);
      expect(sent.outcome.kind === "failure" && sent.outcome.error).toMatchObject({
        code: "SPONSORSHIP_DENIED",
        details: { reason: "not today" },
      });
      expect(asked).toHaveLength(1);
      expect(calls).toEqual([]);
    } finally {
      server.stop(true);
    }
  });

  test("an account's second transaction is held (written first) and dispatched once the first is applied", async () => {
    const { calls, ends, dispatch } = scriptedDispatch();
    const sending = sendingOf(dispatch);
    const account = Keypair.random().publicKey();
    const [first, second] = ["01".repeat(32), "02".repeat(32)];
    const one = sending.send(attempt(first, { account, seq: 10n }));
    await Bun.sleep(5);
    const two = sending.send(attempt(second, { account, seq: 11n }));
    await Bun.sleep(20);
    expect(calls).toEqual([`submit ${first}`, `hold ${second}`]);
    ends.get(first)!(applied(first));
    expect((await one).outcome.kind).toBe("success");
    for (let i = 0; i < 100 && !ends.has(second); i++) await Bun.sleep(5);
    expect(calls).toEqual([`submit ${first}`, `hold ${second}`, `submit ${second}`]);
    ends.get(second)!(applied(second));
    expect(await two).toEqual(applied(second));
  });
});
