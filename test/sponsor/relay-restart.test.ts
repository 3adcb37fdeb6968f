/**
 * What survives a restart, in one suite:
 *
 * - the embedded network alone: a Localnet with a dataDir keeps its ledger state and recent history
 *   (same passphrase), and the chain continues where it stopped; without a dataDir every start is fresh;
 * - kill -9 under load: the relay and the network in processes of their own, the relay killed while a
 *   few hundred idempotent mainnet requests are in flight and started again on the same database;
 * - a relay stopped and started again on the same DATA_DIR and database, once per database (embedded
 *   PGlite always, Postgres too when TEST_DATABASE_URL is set): idempotency keys and sponsored inner
 *   transactions, credits, keys and policies, rate-limit buckets (Redis checkpoints), keys known at
 *   boot, and the channel pool with its sealed secrets. One relay is set up with all of it, restarted
 *   once, and each test checks one part against what the first relay answered.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  Account,
  Asset,
  Contract,
  Keypair,
  Networks,
  Operation,
  rpc,
  TransactionBuilder,
  xdr,
  type Transaction,
} from "@stellar/stellar-sdk";
import { eq } from "drizzle-orm";
import { Redis } from "ioredis";
import postgres from "postgres";
import { Localnet } from "../../src/localnet/ledger.ts";
import { createLogger } from "../../src/kernel/log.ts";
import { ChannelPool } from "../../src/features/pool/channel-pool.ts";
import { SecretBox } from "../../src/kernel/secret-box.ts";
import { channelKeys } from "../../src/features/pool/channel-keys.ts";
import { ChannelsRepo } from "../../src/store/channels.repo.ts";
import { channels } from "../../src/store/schema.ts";
import { resultSummary } from "../../src/stellar/xdr.ts";
import { balanceOf, channelRow, funderOf, poolView, settled, STARTING, testnetOf } from "../support/channels.ts";
import { expectSettled, projectView } from "../support/credits.ts";
import { expectError, type Res, xdrOf } from "../support/harness.ts";
import { builder, hex, S, startLocalnet, type TestNet } from "../support/localnet.ts";
import { mainnetOf } from "../support/mainnet.ts";
import { seedPglite } from "../support/pglite.ts";
import { spawnLocalnet, spawnRelay, tempDir, type Proc } from "../support/processes.ts";
import { REDIS_URL, redisUp } from "../support/redis.ts";
import { databaseEnv, databaseKinds, startTestRelay, TEST_ADMIN_TOKEN, type TestRelay } from "../support/relay.ts";

describe("the embedded network alone", () => {
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
      outerHash: hex(fb),
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
      const failed = (await t.rpc.getTransaction(before.failedHash)) as { envelopeXdr: xdr.TransactionEnvelope };
      const bad = await fetch(`${t.url}/transactions`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: `tx=${encodeURIComponent(failed.envelopeXdr.toXdr("base64"))}`,
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
});

describe("kill -9 under load", () => {
  const N = 240;
  const CREDITS = 1_000_000_000n;
  const DB = process.env.TEST_DATABASE_URL;
  /** The standalone network's ledgers: the requests are spread over about two of them. */
  const LEDGER_MS = 400;

  let net: Awaited<ReturnType<typeof spawnLocalnet>>;
  let relay: Proc & { url: string };
  const data = tempDir("relay-crash-");
  const schema = `t_${crypto.randomUUID().replace(/-/g, "").slice(0, 16)}`;

  beforeAll(async () => {
    net = await spawnLocalnet({ LEDGER_CLOSE_MS: String(LEDGER_MS) });
    if (!DB) await seedPglite(data.path);
  }, 30_000);
  afterAll(async () => {
    await relay?.kill("SIGTERM").catch(() => {});
    await net?.kill("SIGTERM");
    if (DB) {
      const sql = postgres(DB, { max: 1, onnotice: () => {} });
      await sql.unsafe(`drop schema if exists "${schema}" cascade`);
      await sql.end();
    }
    data.done();
  });

  const json = async (url: string, init?: RequestInit) => {
    const r = await fetch(url, init);
    return { status: r.status, body: (await r.json().catch(() => null)) as any };
  };
  const fund = async (kp: Keypair) => {
    const r = await fetch(`${net.url}/friendbot?addr=${kp.publicKey()}`);
    if (!r.ok) throw new Error(`friendbot ${r.status}`);
  };

  test("after a restart every answer is the network's, paid once, journal = fees", { timeout: 120_000 }, async () => {
    const server = new rpc.Server(net.rpcUrl, { allowHttp: true });
    const funder = Keypair.random();
    const users = Array.from({ length: N }, () => Keypair.random());
    await Promise.all([funder, ...users].map(fund));

    const env: Record<string, string> = {
      DATA_DIR: data.path,
      ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      LEDGER_CLOSE_MS: "100", // the embedded testnet's, unused here: its pool is ready sooner
      WATCHER_POLL_MS: "100",
      RPC_TIMEOUT_MS: "3000",
      SUBMISSION_TIMEOUT_MS: "8000",
      RECOVERY_INTERVAL_MS: "500",
      MAINNET_RPC_URL: net.rpcUrl,
      MAINNET_PASSPHRASE: net.passphrase,
      MAINNET_FUNDER_SECRET: funder.secret(),
      MAINNET_CHANNELS: "8",
      ...(DB ? { DATABASE_URL: DB, DATABASE_SCHEMA: schema } : {}),
    };
    relay = await spawnRelay(env);
    const admin = (method: string, path: string, body?: unknown) =>
      json(`${relay.url}/v1/admin${path}`, {
        method,
        headers: {
          authorization: `Bearer ${TEST_ADMIN_TOKEN}`,
          ...(body ? { "content-type": "application/json" } : {}),
        },
        body: body ? JSON.stringify(body) : undefined,
      });
    for (let i = 0; (await admin("GET", "/channels?network=mainnet")).body?.totals?.active !== 8; i++) {
      if (i > 400) throw new Error("the mainnet pool did not start");
      await Bun.sleep(50);
    }
    const project = (
      await admin("POST", "/projects", { name: "crash", policy: { requestsPerSecond: 10_000, burst: 10_000 } })
    ).body;
    const key = (await admin("POST", `/projects/${project.id}/keys`, { environment: "live" })).body.key as string;
    expect((await admin("POST", `/projects/${project.id}/credits`, { amount: CREDITS.toString() })).status).toBe(200);

    const txs: Transaction[] = await Promise.all(
      users.map(async (u) => {
        const account = await server.getAccount(u.publicKey());
        const tx = new TransactionBuilder(account, { fee: "100", networkPassphrase: net.passphrase })
          .addOperation(Operation.payment({ destination: funder.publicKey(), asset: Asset.native(), amount: "1" }))
          .setTimeout(300)
          .build();
        tx.sign(u);
        return tx;
      }),
    );
    const inner = txs.map(hex);
    const send = (i: number) =>
      json(`${relay.url}/v1/sponsor`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": key, "x-idempotency-key": `crash-${i}` },
        body: JSON.stringify({ transaction: txs[i]!.toEnvelope().toXDR("base64"), network: "mainnet" }),
      });
    const startLedger = (await server.getLatestLedger()).sequence;

    // spread over about two ledgers, so that the relay dies with them in every state
    const answers: ({ status: number; body: any } | null)[] = new Array(N).fill(null);
    const spacing = (2 * LEDGER_MS) / N;
    const firing = Promise.all(
      txs.map(async (_, i) => {
        await Bun.sleep(i * spacing);
        answers[i] = await send(i).catch(() => null);
      }),
    );
    // the moment a quarter of them are in a ledger and the first are answered: the rest are being answered,
    // queued, sent or not yet sent
    const probes = inner.slice(0, N / 4);
    for (let t = 0; t < 400; t++) {
      const got = await Promise.all(probes.map((h) => server.getTransaction(h)));
      if (got.every((g) => g.status !== "NOT_FOUND") && answers.some((a) => a !== null)) break;
      await Bun.sleep(10);
    }
    await relay.kill("SIGKILL");
    await firing;
    const beforeCrash = answers.filter((a) => a && (a.status === 200 || a.status === 422)).length;
    await Bun.sleep(LEDGER_MS + 100); // what was sent before the crash lands in the next ledger
    const landed = (await Promise.all(inner.map((h) => server.getTransaction(h)))).filter(
      (r) => r.status !== "NOT_FOUND",
    ).length;

    relay = await spawnRelay(env);
    const deadline = Date.now() + 60_000;
    const final = (a: { status: number } | null) => a !== null && (a.status === 200 || a.status === 422);
    const retried = new Set<number>();
    while (answers.some((a) => !final(a)) && Date.now() < deadline) {
      await Promise.all(
        answers.map(async (a, i) => {
          if (final(a)) return;
          retried.add(i);
          answers[i] = await send(i);
        }),
      );
      if (answers.some((a) => !final(a))) await Bun.sleep(LEDGER_MS / 2);
    }
    console.log(
      `kill -9: ${N} requests, ${beforeCrash} answered before the crash, ${landed} sent before it (in a ledger after it), ${retried.size} retried`,
    );
    expect(answers.filter((a) => !final(a))).toEqual([]);

    // every answer is what the network did
    let charged = 0n;
    const onChainAll = await Promise.all(inner.map((h) => server.getTransaction(h)));
    for (let i = 0; i < N; i++) {
      const a = answers[i]!;
      const onChain = onChainAll[i]!;
      if (a.status === 200) {
        expect(onChain.status).toBe(S.SUCCESS);
        const ok = onChain as rpc.Api.GetSuccessfulTransactionResponse;
        expect(a.body.ledger).toBe(ok.ledger);
        expect(a.body.feePaid).toBe(resultSummary(ok.resultXdr.toXDR("base64")).feeCharged.toString());
        charged += BigInt(a.body.feePaid);
      } else {
        // a failure the network charged for carries its fee; one it never applied was not included
        if (a.body.error.details?.feePaid) charged += BigInt(a.body.error.details.feePaid);
        else expect(onChain.status).toBe(S.NOT_FOUND);
      }
    }
    // no inner transaction included twice, and no other wrapping of it charged: the channels paid exactly what was answered
    let paidOnChain = 0n;
    const ours = new Set(inner);
    let seen = 0;
    for (let cursor: string | undefined; ; ) {
      const page = await server.getTransactions(
        cursor ? { pagination: { cursor, limit: 200 } } : { startLedger, pagination: { limit: 200 } },
      );
      for (const t of page.transactions) {
        const s = resultSummary(t.resultXdr.toXDR("base64"));
        if (s.innerHash && ours.has(s.innerHash)) {
          paidOnChain += s.feeCharged;
          seen++;
        }
      }
      if (page.transactions.length < 200) break;
      cursor = page.cursor;
    }
    expect(seen).toBe(answers.filter((a) => a!.status === 200 || a!.body.error?.details?.feePaid).length);
    expect(paidOnChain).toBe(charged);

    // the journal: charged exactly the fees, nothing left reserved (recovery settles what no retry did)
    let view: any;
    for (let i = 0; i < 100; i++) {
      view = (await admin("GET", `/projects/${project.id}`)).body;
      if (view.creditReserved === "0" && BigInt(view.creditBalance) === CREDITS - charged) break;
      await Bun.sleep(100);
    }
    expect(view.creditReserved).toBe("0");
    expect(BigInt(view.creditBalance)).toBe(CREDITS - charged);
    if (DB) {
      const sql = postgres(DB, { max: 1, onnotice: () => {} });
      const [j] = await sql.unsafe(
        `select coalesce(sum(amount) filter (where kind = 'charge'), 0)::text as charge,
        coalesce(sum(amount) filter (where kind in ('reserve', 'release')), 0)::text as held, coalesce(sum(amount), 0)::text as balance
        from "${schema}".credit_journal where project_id = $1`,
        [project.id],
      );
      await sql.end();
      expect(BigInt(j!.charge)).toBe(-charged);
      expect(BigInt(j!.held)).toBe(0n);
      expect(BigInt(j!.balance)).toBe(CREDITS - charged);
    }
  });
});

describe.each(databaseKinds)("a relay restarted on %s", (kind) => {
  const CHANNEL_KEY = randomBytes(32).toString("hex");
  const prefix = `test-${crypto.randomUUID().slice(0, 8)}:`;
  /** Anonymous clients are told apart by X-Forwarded-For (TRUST_PROXY): each part of the suite has its own. */
  const from = (ip: string) => ({ "x-forwarded-for": ip });
  let first: TestRelay;
  let second: TestRelay | undefined;
  let firstStopped = false;

  // what the first relay answered, for the tests of the second
  const idempotent = {} as { body: { transaction: string; network: string }; answer: Res };
  const credits = {} as {
    p: { id: string; liveKey: string };
    user: Keypair;
    revoked: string;
    before: Awaited<ReturnType<typeof projectView>>;
  };
  const bucket = {} as { p: { id: string; liveKey: string }; body: { transaction: string } };
  const known = {} as { p: { testKey: string } };
  const pool = {} as { keys: string[]; user: Keypair };

  /** An unknown key's two requests take their IP's two tokens; the third is refused before any lookup. */
  async function exhaust(r: TestRelay, ip: string) {
    for (let i = 0; i < 2; i++) {
      const res = await r.post("/v1/estimate", {}, { ...from(ip), "x-api-key": `sr_test_${"Q".repeat(40)}${i}` });
      expectError(res, 401, "UNAUTHORIZED");
    }
    const res = await r.post("/v1/estimate", {}, { ...from(ip), "x-api-key": `sr_test_${"Q".repeat(43)}` });
    expectError(res, 429, "RATE_LIMIT_EXCEEDED");
  }

  beforeAll(async () => {
    first = await startTestRelay({
      ...databaseEnv(kind),
      TESTNET_CHANNELS: "1",
      CHANNEL_ENCRYPTION_KEY: CHANNEL_KEY,
      // two requests per client address, refilled once in 100 s
      ANONYMOUS_POLICY: JSON.stringify({ requestsPerSecond: 0.01, burst: 2 }),
      TRUST_PROXY: "true",
      ...(redisUp ? { REDIS_URL, REDIS_PREFIX: prefix, CHECKPOINT_DEBOUNCE_MS: "10" } : {}),
    });
    const m1 = mainnetOf(first);

    // the parts are independent of each other: set up at once
    await Promise.all([
      (async () => {
        // a sponsored payment with an idempotency key (anonymous: scoped by the client's address)
        const user = await first.funded();
        idempotent.body = { transaction: xdrOf(await first.payment(user)), network: "testnet" };
        idempotent.answer = await first.post("/v1/sponsor", idempotent.body, {
          ...from("198.51.100.1"),
          "x-idempotency-key": "restart-key",
        });
        expect(idempotent.answer.status).toBe(200);
      })(),
      (async () => {
        // credits spent, a policy changed and a key revoked
        const p = await first.project({ credits: 1_000_000n });
        const [user] = (await m1.fund(1)) as [Keypair];
        const paid = await m1.sponsor(p.liveKey, await m1.payment(user));
        expect(paid.status).toBe(200);
        const patched = await first.admin("PATCH", `/projects/${p.id}`, {
          policy: { maxFee: "150000", requestsPerSecond: 7, burst: 9 },
        });
        expect(patched.status).toBe(200);
        expect(patched.body.policy).toMatchObject({ maxFee: "150000", requestsPerSecond: 7, burst: 9 });
        const extra = await first.admin("POST", `/projects/${p.id}/keys`, { environment: "live", label: "to revoke" });
        expect(extra.status).toBe(201);
        const del = await first.admin("DELETE", `/projects/${p.id}/keys/${extra.body.id}`);
        expect(del.status).toBe(200);
        expect(del.body.revokedAt).toEqual(expect.any(String));
        const refused = await first.post(
          "/v1/sponsor",
          { transaction: xdrOf(await m1.payment(user)), network: "mainnet" },
          { ...from("198.51.100.2"), "x-api-key": extra.body.key },
        );
        expectError(refused, 401, "UNAUTHORIZED");
        await expectSettled(first, p.id);
        const before = await projectView(first, p.id);
        expect(before.creditBalance).toBe((1_000_000n - BigInt(paid.body.feePaid)).toString());
        Object.assign(credits, { p, user, revoked: extra.body.key, before });
      })(),
      (async () => {
        if (!redisUp) return;
        // a project's rate-limit bucket emptied and checkpointed to Redis
        const p = await first.project({ policy: { requestsPerSecond: 0.01, burst: 2 }, credits: 300_000n });
        const kp = Keypair.random();
        const net = first.networks.get("mainnet").localnet!;
        const tx = new TransactionBuilder(new Account(kp.publicKey(), "1"), {
          fee: "100",
          networkPassphrase: net.passphrase,
        })
          .addOperation(Operation.payment({ destination: net.root.publicKey(), asset: Asset.native(), amount: "1" }))
          .setTimeout(60)
          .build();
        const body = { transaction: xdrOf(tx) };
        const remaining: (string | null)[] = [];
        for (let i = 0; i < 2; i++) {
          const res = await first.post("/v1/estimate", body, { "x-api-key": p.liveKey });
          expect(res.status).toBe(200);
          remaining.push(res.headers.get("ratelimit-remaining"));
        }
        expect(remaining).toEqual(["1", "0"]);
        const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
        await redis.connect();
        try {
          let saved = 0;
          for (let i = 0; i < 50 && !saved; i++) {
            await Bun.sleep(10); // the debounced checkpoint
            saved = await redis.exists(`${prefix}project:${p.id}`);
          }
          expect(saved).toBe(1);
        } finally {
          await redis.quit();
        }
        Object.assign(bucket, { p, body });
      })(),
      (async () => {
        // a key created while the relay runs is known: it never costs its IP a token
        const p = await first.project();
        await exhaust(first, "192.0.2.44");
        const keyed = await first.post("/v1/estimate", {}, { ...from("192.0.2.44"), "x-api-key": p.testKey });
        expectError(keyed, 400, "VALIDATION_ERROR"); // authenticated: the body is looked at
        expect(keyed.headers.get("ratelimit-limit")).toBe("100"); // the project's bucket
        known.p = p;
      })(),
      (async () => {
        // the pool grown by the operator beyond TESTNET_CHANNELS, secrets sealed with CHANNEL_ENCRYPTION_KEY
        expect((await first.admin("PUT", "/channels", { network: "testnet", count: 3 })).status).toBe(202);
        const v = await settled(first, 3);
        pool.keys = v.channels.map((c) => c.publicKey).sort();
        expect(existsSync(join(first.env.DATA_DIR!, "channel-encryption.key"))).toBe(false);
        const row = await channelRow(first, pool.keys[0]!);
        const secret = SecretBox.open(CHANNEL_KEY, first.env.DATA_DIR!).open(row!.secret, `testnet:${pool.keys[0]}`);
        expect(Keypair.fromSecret(secret).publicKey()).toBe(pool.keys[0]!);
        pool.user = await first.funded();
        const paid = await first.post(
          "/v1/sponsor",
          { transaction: xdrOf(await first.payment(pool.user, { amount: "0.001" })), network: "testnet" },
          from("198.51.100.3"),
        );
        expect(paid.status).toBe(200);
      })(),
    ]);
    await first.stop({ keepData: true });
    firstStopped = true;
    second = await startTestRelay(first.env); // TESTNET_CHANNELS is still 1
  }, 60_000);

  afterAll(async () => {
    if (!firstStopped) await first?.stop();
    await second?.stop();
    if (redisUp) {
      const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
      await redis.connect();
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length) await redis.del(...keys);
      await redis.quit();
    }
  });

  test("an idempotency key replays its outcome, a sponsored inner transaction is answered from the database, and the ledger is kept", async () => {
    const r = second!;
    const replay = await r.post("/v1/sponsor", idempotent.body, {
      ...from("198.51.100.1"),
      "x-idempotency-key": "restart-key",
    });
    expect(replay.status).toBe(200);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body).toEqual(idempotent.answer.body);
    const again = await r.post("/v1/sponsor", idempotent.body, from("198.51.100.4")); // no key: the inner hash was sponsored already
    expect(again.body).toEqual(idempotent.answer.body);
    expect((await r.rpc.getTransaction(idempotent.answer.body.hash)).status).toBe(S.SUCCESS);
  });

  test("/health names the database and the checkpoint store it was started with", async () => {
    const health = await second!.http.get("/health");
    expect(health.body.storage).toEqual({ database: kind, status: "ok", checkpoints: redisUp ? "redis" : "memory" });
  });

  test("credits, keys and policies are kept: the live key pays, capped by the kept maxFee; the revoked key stays revoked", async () => {
    const r = second!;
    const { p, user, revoked, before } = credits;
    const m2 = mainnetOf(r);
    const after = await projectView(r, p.id);
    expect(after.creditBalance).toBe(before.creditBalance);
    expect(after.policy).toEqual(before.policy);
    expect((await expectSettled(r, p.id)).balance).toBe(BigInt(before.creditBalance));

    // the live key still pays; the reservation is capped by the kept policy's maxFee
    const paid = await m2.sponsor(p.liveKey, await m2.payment(user));
    expect(paid.status).toBe(200);
    const { entries, balance } = await expectSettled(r, p.id);
    expect(balance).toBe(BigInt(before.creditBalance) - BigInt(paid.body.feePaid));
    const latest = entries.filter((e) => e.txHash === paid.body.hash);
    expect(latest.map((e) => [e.kind, e.amount]).sort()).toEqual([
      ["charge", `-${paid.body.feePaid}`],
      ["release", "150000"],
      ["reserve", "-150000"],
    ]);

    const refused = await r.post(
      "/v1/sponsor",
      { transaction: xdrOf(await m2.payment(user)), network: "mainnet" },
      { ...from("198.51.100.2"), "x-api-key": revoked },
    );
    expectError(refused, 401, "UNAUTHORIZED");
    const keys = await r.admin("GET", `/projects/${p.id}/keys`);
    expect(keys.body.keys.filter((k: { revokedAt: string | null }) => k.revokedAt !== null)).toHaveLength(1);
  });

  test.skipIf(!redisUp)(
    "a rate-limit bucket comes back from its Redis checkpoint; the balance from the journal",
    async () => {
      const r = second!;
      const res = await r.post("/v1/estimate", bucket.body, { "x-api-key": bucket.p.liveKey });
      expectError(res, 429, "RATE_LIMIT_EXCEEDED");
      expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
      const { balance } = await expectSettled(r, bucket.p.id);
      expect(balance).toBe(300_000n);
      expect((await projectView(r, bucket.p.id)).creditBalance).toBe("300000");
    },
  );

  test("keys live at boot are known: they never cost their IP a token", async () => {
    const r = second!;
    await exhaust(r, "192.0.2.45");
    const keyed = await r.post("/v1/estimate", {}, { ...from("192.0.2.45"), "x-api-key": known.p.testKey });
    expectError(keyed, 400, "VALIDATION_ERROR");
  });

  test("the pool is kept: same channels, active, the operator's target over TESTNET_CHANNELS; no account created", async () => {
    const r = second!;
    const funder = funderOf(r).publicKey();
    const funderAtStart = balanceOf(r, funder)!;
    const after = await poolView(r);
    expect(after.target).toBe(3);
    expect(after.current).toBe(3);
    expect(after.lastError).toBeNull();
    expect(after.channels.map((c) => c.publicKey).sort()).toEqual(pool.keys);
    for (const c of after.channels) {
      expect(c.state).toBe("active");
      // balances and sequence numbers are read from the network at start
      expect(c.balance).toBe(balanceOf(r, c.publicKey)!.toString());
      expect(c.sequence).toBe(testnetOf(r).account(c.publicKey)!.seqNum.toString());
    }

    const res = await r.post(
      "/v1/sponsor",
      { transaction: xdrOf(await r.payment(pool.user, { amount: "0.001" })), network: "testnet" },
      from("198.51.100.3"),
    );
    expect(res.status).toBe(200);
    expect(pool.keys).toContain(testnetOf(r).records.get(res.body.hash)!.feeAccount);
    await Bun.sleep(300); // a few ledgers in which the pool could (wrongly) create or top up channels
    const rows = await r.database.select().from(channels).where(eq(channels.network, "testnet"));
    expect(rows.map((x) => x.publicKey).sort()).toEqual(pool.keys);
    expect(rows.every((x) => x.state === "active")).toBe(true);
    expect(balanceOf(r, funder)).toBe(funderAtStart);
    expect((await poolView(r)).channels.map((c) => c.publicKey).sort()).toEqual(pool.keys);
  });

  test("CHANNEL_ENCRYPTION_KEY: still no key file; a pool with another key refuses to start on the same database", async () => {
    const r = second!;
    expect(existsSync(join(r.env.DATA_DIR!, "channel-encryption.key"))).toBe(false);
    // the same database opened with another key: the pool does not start (it fails before any network call)
    const wrongKey = randomBytes(32).toString("hex");
    const refused = new ChannelPool({
      network: "testnet",
      gateway: undefined as never,
      submitter: undefined as never,
      funder: funderOf(r),
      repo: new ChannelsRepo(r.database),
      keys: channelKeys(SecretBox.open(wrongKey, r.env.DATA_DIR!), null, "sealed"),
      log: createLogger("silent"),
      config: {
        channels: 1,
        startingBalance: STARTING,
        topUpThreshold: STARTING / 2n,
        waitMs: 0,
        feePercentile: "p70",
      },
    }).start();
    await expect(refused).rejects.toThrow("CHANNEL_ENCRYPTION_KEY is not the key it was sealed with");
    const message = String(await refused.catch((e) => e));
    const channel = pool.keys.find((pk) => message.includes(`the testnet channel ${pk} cannot be decrypted`));
    expect(channel, message).toBeDefined();
    expect(message).not.toContain(wrongKey);
  });

  test("stopped, it leaves nothing behind", async () => {
    const dataDir = second!.env.DATA_DIR!;
    await second!.stop();
    second = undefined;
    expect(existsSync(dataDir)).toBe(false);
  });
});
