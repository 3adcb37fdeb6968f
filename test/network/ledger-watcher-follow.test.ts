/**
 * How the ledger watcher reads new ledgers while hashes wait: after its first read it follows the
 * cursor getTransactions left, so one call both notices a new ledger and reads its transactions
 * (no getLatestLedger before it); a busy ledger is read page by page; an idle watcher passes
 * ledgers over with getLatestLedger and reads nothing. A network closing ledgers on demand, called
 * in-process; every RPC call the watcher makes is recorded.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { Asset, Keypair, Networks, Operation, TransactionBuilder, Account } from "@stellar/stellar-sdk";
import { Localnet } from "../../src/localnet/ledger.ts";
import { createRpcMethods, inProcessTransport } from "../../src/localnet/rpc.ts";
import { LedgerWatcher } from "../../src/network/ledger-watcher.ts";
import { RpcClient } from "../../src/network/rpc-client.ts";
import { createLogger } from "../../src/kernel/log.ts";

const STROOPS = 100_000_000_000n;

interface Setup {
  net: Localnet;
  watcher: LedgerWatcher;
  /** Methods called (with a cursor: "getTransactions@cursor"), since the last `calls.length = 0`. */
  calls: string[];
  /** The most calls that were in flight at once (each takes a few ms). */
  inFlight: { now: number; most: number };
  /** A signed payment from the n-th funded account, its hash hex. */
  payment(n: number): { xdr: string; hash: string };
}

let stopAll: (() => void) | null = null;
afterEach(() => stopAll?.());

/**
 * `opaque`: the upstream's cursors are tokens of its own, not TOIDs; `now`: the network's clock (ms);
 * `refusePaging`: while it answers true, getTransactions is a JSON-RPC error.
 */
function setup(
  accounts: number,
  opts: { opaque?: boolean; now?: () => number; refusePaging?: () => boolean } = {},
): Setup {
  const users = Array.from({ length: accounts }, () => Keypair.random());
  const net = new Localnet({
    passphrase: Networks.STANDALONE,
    ledgerCloseMs: 0,
    maxTxSetSize: 10_000,
    now: opts.now,
    genesisAccounts: users.map((u) => ({ id: u.publicKey(), balance: STROOPS })),
  });
  const methods = createRpcMethods(net);
  const inner = inProcessTransport(methods);
  const calls: string[] = [];
  const inFlight = { now: 0, most: 0 };
  const tokens = new Map<string, string>();
  const transport = async (body: string) => {
    const req = JSON.parse(body) as {
      id: unknown;
      method: string;
      params: { startLedger?: number; pagination?: { cursor?: string } };
    };
    if (req.method === "getTransactions" && opts.refusePaging?.()) {
      const error = { code: -32600, message: "start ledger must be between the oldest and the latest ledger" };
      return { status: 200, text: JSON.stringify({ jsonrpc: "2.0", id: req.id, error }) };
    }
    const cursor = req.params.pagination?.cursor;
    calls.push(cursor ? `${req.method}@cursor` : req.method);
    if (cursor && opts.opaque) req.params.pagination!.cursor = tokens.get(cursor) ?? "x";
    inFlight.most = Math.max(inFlight.most, ++inFlight.now);
    await Bun.sleep(2);
    const res = await inner(JSON.stringify(req));
    inFlight.now--;
    if (!opts.opaque) return res;
    const answer = JSON.parse(res.text) as { result?: { cursor?: string } };
    if (answer.result?.cursor) {
      const token = `t${tokens.size}`;
      tokens.set(token, answer.result.cursor);
      answer.result.cursor = token;
    }
    return { ...res, text: JSON.stringify(answer) };
  };
  const log = createLogger("silent");
  const watcher = new LedgerWatcher(new RpcClient(transport, 5000), {
    pollMs: 60_000, // polls only when poked
    fastPollMs: 60_000,
    log,
    network: "testnet",
  });
  stopAll = () => watcher.stop();
  const seqs = new Map<number, bigint>();
  return {
    net,
    watcher,
    calls,
    inFlight,
    payment(n) {
      const u = users[n]!;
      const seq = seqs.get(n) ?? net.account(u.publicKey())!.seqNum;
      seqs.set(n, seq + 1n);
      const tx = new TransactionBuilder(new Account(u.publicKey(), seq.toString()), {
        fee: "100",
        networkPassphrase: net.passphrase,
      })
        .addOperation(
          Operation.payment({
            destination: users[(n + 1) % accounts]!.publicKey(),
            asset: Asset.native(),
            amount: "1",
          }),
        )
        .setTimeout(0)
        .build();
      tx.sign(u);
      return { xdr: tx.toXDR(), hash: Buffer.from(tx.hash()).toString("hex") };
    },
  };
}

/** Submits the payments, closes one ledger, and lets the watcher poll once. */
async function closeWith(s: Setup, txs: { xdr: string }[]): Promise<void> {
  const send = createRpcMethods(s.net).sendTransaction!;
  for (const t of txs) expect((send({ transaction: t.xdr }) as { status: string }).status).toBe("PENDING");
  s.net.closeLedger();
  await poll(s);
}

/** Lets the watcher poll once (from 2 ms after the last poll ended, so that `lastPollAt` changes). */
async function poll(s: Setup): Promise<void> {
  await Bun.sleep(2);
  const before = s.watcher.lastPollAt;
  s.watcher.poke();
  while (s.watcher.lastPollAt === before) await Bun.sleep(1);
}

describe("the ledger watcher follows getTransactions' cursor", () => {
  test("after its first read, one call per ledger notices it and resolves its waiters", async () => {
    const s = setup(4);
    await s.watcher.start();
    expect(s.calls).toEqual(["getLatestLedger"]);

    // the first ledger a hash waits for: read from the ledger after the last one seen
    const a = s.payment(0);
    const wa = s.watcher.watch(a.hash, 5000);
    s.calls.length = 0;
    await closeWith(s, [a]);
    expect((await wa.promise)?.hash).toBe(a.hash);
    expect(s.calls).toEqual(["getLatestLedger", "getTransactions"]);

    // from then on: one call, from the cursor, per poll
    for (const n of [1, 2, 3]) {
      const b = s.payment(n);
      const wb = s.watcher.watch(b.hash, 5000);
      s.calls.length = 0;
      await poll(s); // nothing new yet: an empty page, the cursor kept
      await closeWith(s, [b]);
      const c = await wb.promise;
      expect(c?.hash).toBe(b.hash);
      expect(c?.ledger).toBe(s.net.header.sequence);
      expect(s.calls).toEqual(["getTransactions@cursor", "getTransactions@cursor"]);
    }
    expect(s.watcher.latestLedger).toBe(s.net.header.sequence);
  });

  test("a ledger of 450 transactions is read in 3 pages, every waiter resolved once", async () => {
    const s = setup(451);
    await s.watcher.start();
    const first = s.payment(450);
    const w0 = s.watcher.watch(first.hash, 5000);
    await closeWith(s, [first]);
    await w0.promise;

    const txs = Array.from({ length: 450 }, (_, i) => s.payment(i));
    const resolved = new Map<string, number>();
    const waits = txs.map((t) =>
      s.watcher.watch(t.hash, 5000).promise.then((c) => {
        if (c) resolved.set(t.hash, (resolved.get(t.hash) ?? 0) + 1);
      }),
    );
    s.calls.length = 0;
    await closeWith(s, txs);
    await Promise.all(waits);
    expect(resolved.size).toBe(450);
    expect([...resolved.values()].every((k) => k === 1)).toBe(true);
    expect(s.calls).toEqual(["getTransactions@cursor", "getTransactions@cursor", "getTransactions@cursor"]);
  });

  test("nobody waiting: ledgers are passed over unread; the next waiter reads from the latest", async () => {
    const s = setup(3);
    await s.watcher.start();
    const a = s.payment(0);
    const wa = s.watcher.watch(a.hash, 5000);
    await closeWith(s, [a]);
    await wa.promise;

    // while nobody waits, a transaction lands: the watcher only reads the latest ledger's number
    s.calls.length = 0;
    await closeWith(s, [s.payment(1)]);
    expect(s.calls).toEqual(["getLatestLedger"]);
    expect(s.watcher.latestLedger).toBe(s.net.header.sequence);

    const b = s.payment(2);
    const wb = s.watcher.watch(b.hash, 5000);
    s.calls.length = 0;
    await closeWith(s, [b]);
    expect((await wb.promise)?.hash).toBe(b.hash);
    // the cursor was dropped with the ledgers passed over: read from the ledger after the latest
    expect(s.calls).toEqual(["getLatestLedger", "getTransactions"]);
  });
});

/** Watches `txs`, closes ledgers of `sizes` of them (one after the other, then one poll); how often each resolved. */
async function busy(s: Setup, txs: { xdr: string; hash: string }[], sizes: number[]): Promise<number[]> {
  const resolved = txs.map(() => 0);
  const waits = txs.map((t, i) =>
    s.watcher.watch(t.hash, 5000).promise.then((c) => {
      if (c) resolved[i]!++;
    }),
  );
  const send = createRpcMethods(s.net).sendTransaction!;
  let at = 0;
  for (const size of sizes) {
    for (const t of txs.slice(at, (at += size)))
      expect((send({ transaction: t.xdr }) as { status: string }).status).toBe("PENDING");
    s.net.closeLedger();
  }
  s.calls.length = 0;
  s.inFlight.most = 0;
  await poll(s);
  await Promise.all(waits);
  return resolved;
}

describe("pages fetched ahead (cursors that are TOIDs)", () => {
  /** A watcher that has read one ledger of `size` transactions (accounts `size` to 2 `size` - 1). */
  async function after(size: number, accounts: number, opts: { opaque?: boolean } = {}): Promise<Setup> {
    const s = setup(accounts, opts);
    await s.watcher.start();
    const first = Array.from({ length: size }, (_, i) => s.payment(accounts - 1 - i));
    expect(await busy(s, first, [size])).toEqual(first.map(() => 1));
    return s;
  }

  test("after a ledger of 500, the next one's pages 2 and 3 are asked for together", async () => {
    const s = await after(500, 1000);
    const txs = Array.from({ length: 500 }, (_, i) => s.payment(i));
    expect(await busy(s, txs, [500])).toEqual(txs.map(() => 1));
    expect(s.calls).toEqual(["getTransactions@cursor", "getTransactions@cursor", "getTransactions@cursor"]);
    expect(s.inFlight.most).toBe(2);
  });

  test("a smaller ledger: the page fetched ahead past its end is left unread", async () => {
    const s = await after(500, 800);
    const txs = Array.from({ length: 250 }, (_, i) => s.payment(i));
    expect(await busy(s, txs, [250])).toEqual(txs.map(() => 1));
    expect(s.calls.length).toBe(3); // pages 1 and 2, and the one fetched ahead
  });

  test("a larger ledger: read on page by page past the estimate", async () => {
    const s = await after(250, 900);
    const txs = Array.from({ length: 650 }, (_, i) => s.payment(i));
    expect(await busy(s, txs, [650])).toEqual(txs.map(() => 1));
    expect(s.calls.length).toBe(4);
    expect(s.inFlight.most).toBe(1);
  });

  test("two ledgers at once: a page fetched ahead for the first is dropped, the second read from the cursor", async () => {
    const s = await after(500, 1100);
    const txs = Array.from({ length: 600 }, (_, i) => s.payment(i));
    // 300 + 300: page 2 ends inside the second ledger, so the page asked for at 400 of the first does not follow it
    expect(await busy(s, txs, [300, 300])).toEqual(txs.map(() => 1));
    expect(s.calls.length).toBe(5); // 1-200, 201-400 (and ahead: at 400), then 101-300 of the second, and its end
  });

  test("cursors of the upstream's own (not TOIDs): page by page, every transaction read", async () => {
    const s = await after(500, 1000, { opaque: true });
    const txs = Array.from({ length: 500 }, (_, i) => s.payment(i));
    expect(await busy(s, txs, [500])).toEqual(txs.map(() => 1));
    expect(s.calls.length).toBe(3);
    expect(s.inFlight.most).toBe(1);
  });
});

describe("passed", () => {
  test("true once a ledger after the given one is read; false after the timeout, or at stop", async () => {
    const s = setup(1);
    await s.watcher.start();
    const at = s.net.header.sequence;
    expect(await s.watcher.passed(at - 1, 1000)).toBe(true); // already read
    const next = s.watcher.passed(at, 5000);
    const late = s.watcher.passed(at + 5, 30);
    const stopped = s.watcher.passed(at + 5, 5000);
    s.net.closeLedger();
    await poll(s);
    expect(await next).toBe(true);
    expect(await late).toBe(false);
    s.watcher.stop();
    expect(await stopped).toBe(false);
  });
});

describe("bounds: when no later ledger can include a transaction", () => {
  /** Whether `p` has resolved (true/false) after the watcher's poll, or is still waiting (null). */
  const settled = (p: Promise<boolean>) => Promise.race([p, Bun.sleep(20).then(() => null)]);

  test("past maxTime once a ledger read closed after it; past maxLedger once the ledger before it is read", async () => {
    let clock = Date.UTC(2026, 0, 1);
    const s = setup(2, { now: () => clock });
    await s.watcher.start();
    const waiting = s.payment(0); // a watched hash keeps the watcher reading ledgers
    const w = s.watcher.watch(waiting.hash, 5000);
    const maxTime = BigInt(clock / 1000) + 5n;
    const byTime = s.watcher.beyond({ maxTime, maxLedger: 0 }, s.watcher.readMark(), 5000);
    const maxLedger = s.net.header.sequence + 3;
    const byLedger = s.watcher.beyond({ maxTime: 0n, maxLedger }, s.watcher.readMark(), 5000);
    const none = s.watcher.beyond({ maxTime: 0n, maxLedger: 0 }, s.watcher.readMark(), 5000);

    clock += 5000; // closes at maxTime: still valid for it
    await closeWith(s, []);
    expect(await settled(byTime.promise)).toBeNull();
    expect(await settled(byLedger.promise)).toBeNull();
    clock += 1000; // closes after maxTime, and is the ledger before maxLedger
    await closeWith(s, []);
    expect(await settled(byTime.promise)).toBe(true);
    expect(await settled(byLedger.promise)).toBe(true);
    expect(s.watcher.past({ maxTime, maxLedger: 0 })).toBe(true);
    expect(s.watcher.past({ maxTime: maxTime + 1n, maxLedger: 0 })).toBe(false);
    expect(await none.promise).toBe(false); // no bounds: never past them
    w.cancel();
  });

  test("ledgers the network would not page are not read: a waiter marked before them never counts them", async () => {
    let refuse = false;
    const s = setup(2, { refusePaging: () => refuse });
    await s.watcher.start();
    const w = s.watcher.watch(s.payment(0).hash, 5000); // a hash waits: the watcher reads ledgers
    const mark = s.watcher.readMark();
    const maxLedger = s.net.header.sequence + 2;
    const marked = s.watcher.beyond({ maxTime: 0n, maxLedger }, mark, 2000);
    await closeWith(s, []); // read: the ledger before maxLedger, but the cursor was lost below
    expect(await settled(marked.promise)).toBe(true);

    const mark2 = s.watcher.readMark();
    const later = s.watcher.beyond({ maxTime: 0n, maxLedger: s.net.header.sequence + 2 }, mark2, 2000);
    refuse = true;
    for (let i = 0; i < 2; i++) {
      // refused: a page after a cursor drops the cursor; one from the ledger after the last read skips them
      s.net.closeLedger();
      await poll(s);
    }
    expect(s.watcher.readMark()).toBeGreaterThan(mark2); // skipped
    refuse = false;
    await closeWith(s, []);
    expect(await settled(later.promise)).toBeNull(); // past the bound, but a ledger of it was never read
    later.cancel();
    w.cancel();
  });

  test("a waiter is cancelled, or stopped with the watcher: false", async () => {
    const s = setup(1);
    await s.watcher.start();
    const a = s.watcher.beyond({ maxTime: 0n, maxLedger: s.net.header.sequence + 10 }, 0, 5000);
    a.cancel();
    expect(await a.promise).toBe(false);
    const b = s.watcher.beyond({ maxTime: 0n, maxLedger: s.net.header.sequence + 10 }, 0, 5000);
    s.watcher.stop();
    expect(await b.promise).toBe(false);
  });
});
