/**
 * The channel-account pool end to end against the embedded testnet: resizing under a steady stream
 * of sponsor requests (no request fails, merged channels return their lumens to the funder),
 * sequence-number recovery after an external transaction, top-ups, secrets sealed at rest, and the
 * admin routes' validation. On PGlite, or on Postgres when TEST_DATABASE_URL is set. The pool kept
 * across a restart, and CHANNEL_ENCRYPTION_KEY: relay-restart.test.ts.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { statSync } from "node:fs";
import { join } from "node:path";
import {
  Address,
  Asset,
  Keypair,
  Operation,
  StrKey,
  TransactionBuilder,
  authorizeEntry,
  nativeToScVal,
  rpc,
  type Transaction,
  type xdr,
} from "@stellar/stellar-sdk";
import { eq } from "drizzle-orm";
import { SecretBox } from "../../src/kernel/secret-box.ts";
import { channels } from "../../src/store/schema.ts";
import type { TxRecord } from "../../src/localnet/history.ts";
import {
  balanceOf,
  channelRow,
  funderOf,
  poolView as view,
  settled,
  STARTING,
  testnetOf as net,
} from "../support/channels.ts";
import { type Res, sum, until, xdrOf } from "../support/harness.ts";
import { startTestRelay, TEST_ADMIN_TOKEN, type TestRelay } from "../support/relay.ts";

// every relay a test starts is stopped after it (a test that stops one itself takes it off the list)
const running = new Set<TestRelay>();
async function start(env: Record<string, string> = {}): Promise<TestRelay> {
  const r = await startTestRelay({ MAINNET_CHANNELS: "1", ...env });
  running.add(r);
  return r;
}
afterEach(async () => {
  for (const r of [...running]) {
    running.delete(r);
    await r.stop();
  }
});

/** Applied transactions on the testnet localnet (its record map holds fee-bumps under both hashes). */
const applied = (r: TestRelay): TxRecord[] => [
  ...new Map([...net(r).records.values()].map((x) => [x.hash, x])).values(),
];
/** What the network charged an account as fee source (fee-bumps it paid, and its own transactions). */
const feesPaidBy = (r: TestRelay, id: string) =>
  sum(
    applied(r)
      .filter((x) => x.feeAccount === id)
      .map((x) => x.feeCharged),
  );
/** The SDK's 7-decimal XLM amount in stroops. */
const stroops = (xlm: string) => {
  const [whole, frac = ""] = xlm.split(".");
  return BigInt(whole!) * 10_000_000n + BigInt(frac.padEnd(7, "0"));
};

async function sponsor(r: TestRelay, user: Keypair): Promise<Res> {
  return r.post("/v1/sponsor", { transaction: xdrOf(await r.payment(user, { amount: "0.001" })), network: "testnet" });
}

async function fundMany(r: TestRelay, n: number): Promise<Keypair[]> {
  return Promise.all(Array.from({ length: n }, () => r.funded()));
}

interface Sent {
  status: number;
  body: any;
  started: number;
  ended: number;
}
/** Sponsor requests in a loop per account (sequential per account, concurrent across them) until stopped. */
function stream(r: TestRelay, users: Keypair[]) {
  let on = true;
  const sent: Sent[] = [];
  const loops = users.map(async (u) => {
    while (on) {
      const started = performance.now();
      const res = await sponsor(r, u);
      sent.push({ status: res.status, body: res.body, started, ended: performance.now() });
    }
  });
  return {
    sent,
    async stop(): Promise<Sent[]> {
      on = false;
      await Promise.all(loops);
      return sent;
    },
  };
}

/** Sends a transaction straight to the localnet's RPC (not through the relay) and waits for it to apply. */
async function submitDirect(r: TestRelay, source: Keypair, op: xdr.Operation): Promise<{ hash: string; seq: bigint }> {
  const acc = await r.rpc.getAccount(source.publicKey());
  const tx = new TransactionBuilder(acc, { fee: "100", networkPassphrase: r.passphrase })
    .addOperation(op)
    .setTimeout(60)
    .build();
  tx.sign(source);
  const sent = await r.rpc.sendTransaction(tx);
  expect(sent.status).toBe("PENDING");
  await until(`${sent.hash} to apply`, () => net(r).records.get(sent.hash)?.successful === true);
  return { hash: sent.hash, seq: BigInt(tx.sequence) };
}

/** A channel's keypair, decrypted from its row with DATA_DIR's key. */
async function channelKey(r: TestRelay, publicKey: string): Promise<Keypair> {
  const row = await channelRow(r, publicKey);
  return Keypair.fromSecret(SecretBox.open(undefined, r.env.DATA_DIR!).open(row!.secret, `testnet:${publicKey}`));
}

/** A native SAC transfer `from` → `to` with `from`'s signed address credentials (what a func+auth client sends), base64. */
async function signedTransfer(r: TestRelay, from: Keypair, to: Keypair, amount: bigint): Promise<string> {
  const transfer = (auth: xdr.SorobanAuthorizationEntry[]) =>
    Operation.invokeContractFunction({
      contract: Asset.native().contractId(r.passphrase),
      function: "transfer",
      auth,
      args: [
        nativeToScVal(Address.fromString(from.publicKey())),
        nativeToScVal(Address.fromString(to.publicKey())),
        nativeToScVal(amount, { type: "i128" }),
      ],
    });
  // simulated with `to` as the source, so that `from` gets address credentials
  const tx = new TransactionBuilder(await r.rpc.getAccount(to.publicKey()), {
    fee: "100",
    networkPassphrase: r.passphrase,
  })
    .addOperation(transfer([]))
    .setTimeout(60)
    .build();
  const sim = await r.rpc.simulateTransaction(tx);
  if (!rpc.Api.isSimulationSuccess(sim)) throw new Error(`simulation failed: ${JSON.stringify(sim)}`);
  const signed = await authorizeEntry(sim.result!.auth[0]!, from, sim.latestLedger + 100, r.passphrase);
  return transfer([signed]).toXDR("base64");
}

describe("resizing under load", () => {
  test("2 → 10 → 3 while sponsor requests stream: none fails, merged channels return their lumens to the funder", {
    timeout: 50_000,
  }, async () => {
    const r = await start({ TESTNET_CHANNELS: "2" });
    const funder = funderOf(r).publicKey();
    const two = await settled(r, 2);
    const users = await fundMany(r, 6);
    const s = stream(r, users);
    await until("the stream to start", () => s.sent.length >= 6);

    // grow to 10
    const grow0 = performance.now();
    const grow = await r.admin("PUT", "/channels", { network: "testnet", count: 10 });
    expect(grow.status).toBe(202);
    expect(grow.body).toMatchObject({ network: "testnet", target: 10 });
    const ten = await settled(r, 10);
    const grow1 = performance.now();
    const tenKeys = ten.channels.map((c) => c.publicKey);
    for (const c of two.channels) expect(tenKeys).toContain(c.publicKey); // growing only adds
    for (const pk of tenKeys) expect(balanceOf(r, pk)).toBeDefined();
    // let the ten pay for a while, then shrink: the funder changes only by the merges from here on
    await until("requests paid by the ten", () => s.sent.filter((x) => x.started > grow1).length >= 40, 20_000);
    const funderBefore = balanceOf(r, funder)!;

    const shrink0 = performance.now();
    const shrink = await r.admin("PUT", "/channels", { network: "testnet", count: 3 });
    expect(shrink.status).toBe(202);
    expect(shrink.body).toMatchObject({ network: "testnet", target: 3 });
    const drainingSeen = new Map<string, number>(); // when GET first showed a channel draining
    const three = await settled(r, 3, 15_000, (v, at) => {
      for (const c of v.channels)
        if (c.state === "draining" && !drainingSeen.has(c.publicKey)) drainingSeen.set(c.publicKey, at);
    });
    const shrink1 = performance.now();
    await until("requests after the shrink", () => s.sent.filter((x) => x.started > shrink1).length >= 12, 20_000);
    const sent = await s.stop();

    // no request failed, and requests were in flight through both resizes
    const failed = sent.filter((x) => x.status !== 200);
    expect(failed.map((x) => `${x.status} ${JSON.stringify(x.body)}`)).toEqual([]);
    const during = (t0: number, t1: number) => sent.filter((x) => x.started < t1 && x.ended > t0).length;
    expect(during(grow0, grow1)).toBeGreaterThan(0);
    expect(during(shrink0, shrink1)).toBeGreaterThan(0);

    // the three left are three of the ten; the seven others are merged: gone from the ledger, marked merged
    const threeKeys = three.channels.map((c) => c.publicKey);
    for (const pk of threeKeys) expect(tenKeys).toContain(pk);
    const merged = tenKeys.filter((pk) => !threeKeys.includes(pk));
    expect(merged).toHaveLength(7);
    for (const pk of merged) {
      expect(net(r).account(pk)).toBeUndefined();
      expect((await channelRow(r, pk))?.state).toBe("merged");
    }
    for (const pk of threeKeys) expect((await channelRow(r, pk))?.state).toBe("active");
    expect(three.totals).toMatchObject({ count: 3, active: 3, creating: 0, draining: 0 });
    expect(three.lastError).toBeNull();

    // each merged channel started with STARTING and paid only fees (fee-bumps and its merge): the
    // funder received exactly the rest
    const returned = sum(merged.map((pk) => STARTING - feesPaidBy(r, pk)));
    expect(balanceOf(r, funder)! - funderBefore).toBe(returned);
    expect(returned).toBeGreaterThan(7n * (STARTING - 10_000_000n));
    expect(returned).toBeLessThan(7n * STARTING);
    // and the pool's view of the funder catches up with the ledger
    await until(
      "GET to show the funder's balance",
      async () => (await view(r)).funder.balance === balanceOf(r, funder)!.toString(),
    );

    // the fee-bumps were paid by many channels, never by the funder, and by channels later merged too
    const payers = sent.map((x) => net(r).records.get(x.body.hash)!.feeAccount);
    const distinct = new Set(payers);
    expect(distinct.size).toBeGreaterThanOrEqual(5);
    for (const p of distinct) expect(tenKeys).toContain(p);
    expect(payers.some((p) => merged.includes(p))).toBe(true);
    expect(payers.some((p) => !two.channels.some((c) => c.publicKey === p))).toBe(true); // by channels created by the resize
    // a draining channel takes no new fee-bumps: no request sent after GET showed it draining was paid by it
    expect(drainingSeen.size).toBeGreaterThan(0);
    const late = sent.filter((x, i) => drainingSeen.has(payers[i]!) && x.started > drainingSeen.get(payers[i]!)!);
    expect(late.map((x) => x.body.hash)).toEqual([]);
  });
});

describe("sequence numbers moved outside the relay", () => {
  test("a channel's merge and the funder's createAccount recover from tx_bad_seq by re-reading the sequence number", {
    timeout: 30_000,
  }, async () => {
    const r = await start({ TESTNET_CHANNELS: "2" });
    const funder = funderOf(r);
    const v = await settled(r, 2);
    const [a, b] = v.channels.map((c) => c.publicKey) as [string, string];
    const original = net(r).account(a)!.seqNum;
    expect(v.channels[0]!.sequence).toBe(original.toString());

    // move the channel's sequence number with its own key, taken from the database
    const kp = await channelKey(r, a);
    expect(kp.publicKey()).toBe(a);
    const bump = await submitDirect(r, kp, Operation.bumpSequence({ bumpTo: (original + 5n).toString() }));
    expect(bump.seq).toBe(original + 1n);
    expect(net(r).account(a)!.seqNum).toBe(original + 5n);
    // the relay does not know: its next own transaction from `a` would use original + 1
    expect((await view(r)).channels.find((c) => c.publicKey === a)!.sequence).toBe(original.toString());

    // fee-bumps do not use the channel's sequence number: sponsoring still works
    const user = await r.funded();
    const paid = await sponsor(r, user);
    expect(paid.status).toBe(200);

    // retiring merges it: the stale number is rejected (tx_bad_seq), re-read, and the merge goes through
    const del = await r.admin("DELETE", `/channels/${a}?network=testnet`);
    expect(del.status).toBe(202);
    expect(del.body).toEqual({ network: "testnet", publicKey: a, state: "draining" });
    const one = await settled(r, 1);
    expect(one.channels.map((c) => c.publicKey)).toEqual([b]);
    expect(one.lastError).toBeNull();
    expect(net(r).account(a)).toBeUndefined();
    expect((await channelRow(r, a))?.state).toBe("merged");
    const fromA = applied(r)
      .filter((x) => x.sourceAccount === a && !x.feeBump)
      .sort((x, y) => x.ledger - y.ledger);
    expect(fromA.map((x) => [x.seqNum, x.successful])).toEqual([
      [original + 1n, true],
      [original + 6n, true],
    ]); // the bump, then the merge after it
    expect(TransactionBuilder.fromXDR(fromA[1]!.envelopeXdr, r.passphrase) as Transaction).toMatchObject({
      operations: [{ type: "accountMerge", destination: funder.publicKey() }],
    });
    // a channel that is gone cannot be retired again
    const again = await r.admin("DELETE", `/channels/${a}?network=testnet`);
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe("NOT_FOUND");

    // the funder's sequence number moved too: growing the pool still creates the channel
    const moved = await submitDirect(
      r,
      funder,
      Operation.payment({ destination: net(r).root.publicKey(), asset: Asset.native(), amount: "1" }),
    );
    const grow = await r.admin("PUT", "/channels", { network: "testnet", count: 2 });
    expect(grow.status).toBe(202);
    const two = await settled(r, 2);
    expect(two.lastError).toBeNull();
    const created = two.channels.find((c) => c.publicKey !== b)!.publicKey;
    expect(balanceOf(r, created)).toBe(STARTING);
    const creates = applied(r).filter((x) => x.sourceAccount === funder.publicKey() && x.seqNum > moved.seq);
    expect(creates.map((x) => [x.seqNum, x.successful])).toEqual([[moved.seq + 1n, true]]);
    expect(TransactionBuilder.fromXDR(creates[0]!.envelopeXdr, r.passphrase) as Transaction).toMatchObject({
      operations: [{ type: "createAccount", destination: created }],
    });
    expect((await sponsor(r, user)).status).toBe(200);
  });

  test("func+auth mode: the channel's stale sequence number is rejected, re-read, and the operation runs with the next one", {
    timeout: 30_000,
  }, async () => {
    const r = await start({ TESTNET_CHANNELS: "1" });
    const [channel] = (await settled(r, 1)).channels.map((c) => c.publicKey) as [string];
    const original = net(r).account(channel)!.seqNum;
    await submitDirect(r, await channelKey(r, channel), Operation.bumpSequence({ bumpTo: (original + 3n).toString() }));
    expect(net(r).account(channel)!.seqNum).toBe(original + 3n);
    expect((await view(r)).channels[0]!.sequence).toBe(original.toString()); // stale: the relay would use original + 1

    const [from, to] = await fundMany(r, 2);
    const to0 = balanceOf(r, to.publicKey())!;
    const first = await r.post("/v1/sponsor", {
      operation: await signedTransfer(r, from, to, 5_000_000n),
      network: "testnet",
    });
    expect(first.status).toBe(200);
    const rec = net(r).records.get(first.body.hash)!;
    expect([rec.sourceAccount, rec.feeBump, rec.successful, rec.seqNum]).toEqual([channel, false, true, original + 4n]);
    expect(balanceOf(r, to.publicKey())).toBe(to0 + 5_000_000n);
    expect((await view(r)).channels[0]!.sequence).toBe((original + 4n).toString());

    // the next one uses the next number; only the bump and the two transfers ever reached a ledger from the channel
    const second = await r.post("/v1/sponsor", {
      operation: await signedTransfer(r, from, to, 1_000_000n),
      network: "testnet",
    });
    expect(second.status).toBe(200);
    expect(net(r).records.get(second.body.hash)!.seqNum).toBe(original + 5n);
    const fromChannel = applied(r)
      .filter((x) => x.sourceAccount === channel)
      .map((x) => x.seqNum)
      .sort((x, y) => (x < y ? -1 : 1));
    expect(fromChannel).toEqual([original + 1n, original + 4n, original + 5n]);
    const v = await view(r);
    expect(v.channels[0]!.sequence).toBe((original + 5n).toString());
    expect(v.channels[0]!.inFlight).toEqual({ count: 0, fees: "0" });
    expect(v.lastError).toBeNull();
  });
});

describe("top-ups", () => {
  test("a channel under the threshold is topped up by the funder to the starting balance", {
    timeout: 30_000,
  }, async () => {
    const start2 = 20_000_000n; // 2 XLM
    const r = await start({
      TESTNET_CHANNELS: "1",
      CHANNEL_STARTING_BALANCE: start2.toString(),
      CHANNEL_TOPUP_THRESHOLD: "19999900",
    });
    const funder = funderOf(r).publicKey();
    const [channel] = (await settled(r, 1)).channels.map((c) => c.publicKey) as [string];
    expect(balanceOf(r, channel)).toBe(start2);
    const user = await r.funded();
    const mark = net(r).header.sequence;
    const funderBefore = balanceOf(r, funder)!;

    const fees: bigint[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await sponsor(r, user);
      expect(res.status).toBe(200);
      expect(net(r).records.get(res.body.hash)!.feeAccount).toBe(channel);
      fees.push(BigInt(res.body.feePaid));
    }
    expect(sum(fees)).toBeGreaterThan(0n);

    // the ledger's balance and the pool's view return to the starting balance
    await until("the channel to be topped up", async () => {
      const c = (await view(r)).channels[0]!;
      return balanceOf(r, channel) === start2 && c.balance === start2.toString() && c.inFlight?.count === 0;
    });
    const c = (await view(r)).channels[0]!;
    expect(c.available).toBe((start2 - 10_000_000n).toString()); // less the 1 XLM reserve
    expect((await view(r)).lastError).toBeNull();

    // by funder → channel payments that add up to the fees the channel paid
    const topUps = applied(r).filter((x) => x.ledger > mark && x.sourceAccount === funder);
    expect(topUps.length).toBeGreaterThanOrEqual(1);
    const payments = topUps.flatMap(
      (x) => (TransactionBuilder.fromXDR(x.envelopeXdr, r.passphrase) as Transaction).operations,
    );
    for (const op of payments)
      expect(op).toMatchObject({ type: "payment", destination: channel, asset: Asset.native() });
    const paidIn = sum(payments.map((op) => stroops((op as { amount: string }).amount)));
    expect(paidIn).toBe(sum(fees));
    // the funder paid the top-ups and their fees, nothing else
    expect(funderBefore - balanceOf(r, funder)!).toBe(paidIn + sum(topUps.map((x) => x.feeCharged)));
  });
});

describe("a pool of three that the tests leave as it is", () => {
  let r: TestRelay;
  let v: Awaited<ReturnType<typeof settled>>;
  beforeAll(async () => {
    r = await startTestRelay({ TESTNET_CHANNELS: "3", MAINNET_CHANNELS: "1" });
    v = await settled(r, 3);
  }, 30_000);
  afterAll(() => r.stop());

  test("retiring a channel named like a member of Object.prototype: 404, nothing retired (the fuzzer's find)", async () => {
    for (const name of ["valueOf", "__proto__", "constructor", "toString", "hasOwnProperty"]) {
      const res = await r.admin("DELETE", `/channels/${name}?network=testnet`);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe("NOT_FOUND");
    }
    expect(
      r.networks
        .get("testnet")
        .pool!.list()
        .channels.filter((c) => c.state === "active"),
    ).toHaveLength(3);
  });

  test("secrets at rest: rows hold sealed secrets bound to their channel and DATA_DIR's key; GET never shows a secret", async () => {
    const rows = await r.database.select().from(channels).where(eq(channels.network, "testnet"));
    expect(rows.map((x) => x.publicKey).sort()).toEqual(v.channels.map((c) => c.publicKey).sort());
    const keyFile = join(r.env.DATA_DIR!, "channel-encryption.key");
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const box = SecretBox.open(undefined, r.env.DATA_DIR!);
    const other = SecretBox.open(randomBytes(32).toString("base64"), r.env.DATA_DIR!);

    const secrets: string[] = [];
    for (const [i, row] of rows.entries()) {
      const secret = box.open(row.secret, `testnet:${row.publicKey}`);
      expect(StrKey.isValidEd25519SecretSeed(secret)).toBe(true);
      expect(Keypair.fromSecret(secret).publicKey()).toBe(row.publicKey);
      secrets.push(secret);
      // no plaintext: not the S... key, nor its raw seed, in the column or in its decoded bytes
      const seed = Buffer.from(StrKey.decodeEd25519SecretSeed(secret));
      const sealed = Buffer.from(row.secret, "base64");
      expect(row.secret).not.toContain(secret);
      expect(row.secret).not.toContain(seed.toString("hex"));
      expect(row.secret).not.toContain(seed.toString("base64").replace(/=+$/, ""));
      expect(sealed.includes(Buffer.from(secret))).toBe(false);
      expect(sealed.includes(seed)).toBe(false);
      // another key, another channel's or another network's associated data: refused
      expect(() => other.open(row.secret, `testnet:${row.publicKey}`)).toThrow();
      expect(() => box.open(row.secret, `testnet:${rows[(i + 1) % rows.length]!.publicKey}`)).toThrow();
      expect(() => box.open(row.secret, `mainnet:${row.publicKey}`)).toThrow();
    }
    expect(new Set(secrets).size).toBe(3);

    const raw = await r.http.raw("/v1/admin/channels?network=testnet", {
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
    });
    expect(raw.status).toBe(200);
    const text = await raw.text();
    for (const pk of v.channels.map((c) => c.publicKey)) expect(text).toContain(pk);
    for (const secret of [...secrets, funderOf(r).secret()]) expect(text).not.toContain(secret);
    for (const row of rows) expect(text).not.toContain(row.secret);
  });

  test("admin routes: validation, authentication and unknown channels", async () => {
    const bad = async (method: string, path: string, body?: unknown) => {
      const res = await r.admin(method, path, body);
      expect(`${method} ${path} ${JSON.stringify(body)} → ${res.status} ${res.body?.error?.code}`).toBe(
        `${method} ${path} ${JSON.stringify(body)} → 400 VALIDATION_ERROR`,
      );
      return res;
    };
    for (const count of [0, 1001, -1, 2.5, "three", null]) {
      const res = await bad("PUT", "/channels", { network: "testnet", count });
      expect(res.body.error.details.field).toBe("count");
    }
    await bad("PUT", "/channels", { network: "testnet" });
    await bad("PUT", "/channels", { network: "testnet", count: 2, extra: true });
    await bad("PUT", "/channels", { network: "futurenet", count: 2 });
    await bad("PUT", "/channels", "{not json");
    await bad("GET", "/channels?network=futurenet");
    await bad("DELETE", `/channels/${v.channels[0]!.publicKey}?network=futurenet`);

    for (const headers of [
      {},
      { authorization: "Bearer not-the-admin-token-000" },
      { authorization: TEST_ADMIN_TOKEN },
    ] as Record<string, string>[]) {
      for (const [method, body] of [
        ["GET", undefined],
        ["PUT", { network: "testnet", count: 5 }],
      ] as const) {
        const res = await r.http.request(
          method,
          `/v1/admin/channels${method === "GET" ? "?network=testnet" : ""}`,
          body,
          headers,
        );
        expect(res.status).toBe(401);
        expect(res.headers.get("www-authenticate")).toBe("Bearer");
        expect(res.body.error.code).toBe("UNAUTHORIZED");
      }
    }
    const del = await r.http.request("DELETE", `/v1/admin/channels/${v.channels[0]!.publicKey}?network=testnet`);
    expect(del.status).toBe(401);

    for (const pk of [Keypair.random().publicKey(), "not-a-key", funderOf(r).publicKey()]) {
      const res = await r.admin("DELETE", `/channels/${pk}?network=testnet`);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe("NOT_FOUND");
    }
    // a channel of the other network is unknown here
    const mainnetChannel = (await view(r, "mainnet")).channels[0]!.publicKey;
    expect((await r.admin("DELETE", `/channels/${mainnetChannel}?network=testnet`)).status).toBe(404);

    // nothing above changed the pool
    await Bun.sleep(200);
    const after = await view(r);
    expect(after.target).toBe(3);
    expect(after.channels.map((c) => [c.publicKey, c.state])).toEqual(v.channels.map((c) => [c.publicKey, "active"]));
    expect((await view(r, "mainnet")).target).toBe(1);
  });
});
