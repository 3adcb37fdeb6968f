/**
 * The relay against a misbehaving upstream RPC (test/support/fake-rpc.ts, in front of a standalone
 * localnet): down, slow beyond RPC_TIMEOUT_MS, hung, garbage, `{}`, wrong types, wrong ids, HTTP
 * 500, for every method or only sendTransaction / the watcher's. Requests answer within a bound
 * with 503 NETWORK_UNAVAILABLE (504 SUBMISSION_TIMEOUT with the hash once the transaction may have
 * been sent), never 500; /health says down or degraded while the upstream is faulty; and after
 * heal() the relay recovers by itself within seconds while a loop of sponsor requests runs
 * throughout. Testnet is the upstream network here; mainnet stays an embedded localnet.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { Account, Asset, Contract, type Keypair, Operation, TransactionBuilder } from "@stellar/stellar-sdk";
import { startFakeRpc, type FakeRpc, type FaultMode, type FaultOptions } from "../support/fake-rpc.ts";
import { until } from "../support/harness.ts";
import { startTestRelay, type TestRelay } from "../support/relay.ts";
import { Value } from "@sinclair/typebox/value";
import { networkHealth } from "../../src/server/health.routes.ts";
import { NetworkHealth } from "../../src/http/schemas.ts";

const RPC_TIMEOUT_MS = 300;
/** The watcher's poll: health reports a fault, and its end, within a few polls. */
const WATCHER_POLL_MS = 25;
const SUBMISSION_TIMEOUT_MS = 3000;
const CHANNELS = 4;
/** An answer that only waits on RPC calls: a few timed-out calls and some slack. */
const BOUND_MS = RPC_TIMEOUT_MS * 3 + 600;
/** An answer that waited for a confirmation (504). */
const SENT_BOUND_MS = SUBMISSION_TIMEOUT_MS + BOUND_MS;
/** Recovery after heal(): health ok again and a new sponsor request confirmed. */
const RECOVERY_BOUND_MS = 5000;

let fake: FakeRpc;
let r: TestRelay;
let users: Keypair[] = [];
let mode = "healthy";
const figures: Record<string, unknown>[] = [];

type Answer = { status: number; body: any; ms: number };

const nextUser = (): Keypair => {
  const u = users.pop();
  if (!u) throw new Error("out of funded users: fund more in beforeAll");
  return u;
};

/** A signed 1 XLM payment from a fresh user (its sequence number read from the localnet itself, not through the fake). */
function payment(user = nextUser()): { xdr: string; innerHash: string } {
  const seq = fake.localnet.net.account(user.publicKey())!.seqNum;
  const tx = new TransactionBuilder(new Account(user.publicKey(), seq.toString()), {
    fee: "100",
    networkPassphrase: fake.passphrase,
  })
    .addOperation(
      Operation.payment({ destination: fake.localnet.net.root.publicKey(), asset: Asset.native(), amount: "1" }),
    )
    .setTimeout(60)
    .build();
  tx.sign(user);
  return { xdr: tx.toEnvelope().toXdr("base64"), innerHash: Buffer.from(tx.hash()).toString("hex") };
}

/** A contract call (the native asset's `decimals`) to simulate. */
function contractCall(): string {
  const user = users[0];
  const tx = new TransactionBuilder(new Account(user.publicKey(), "1"), {
    fee: "100",
    networkPassphrase: fake.passphrase,
  })
    .addOperation(new Contract(Asset.native().contractId(fake.passphrase)).call("decimals"))
    .setTimeout(60)
    .build();
  return tx.toEnvelope().toXdr("base64");
}

async function timed(path: string, body: unknown): Promise<Answer> {
  const t0 = Date.now();
  const res = await r.post(path, body);
  return { ...res, ms: Date.now() - t0 };
}

/** GET /health (its body as text when it is not JSON: the assertions show it). */
const health = (): Promise<{ status: number; body: any }> => r.http.get("/health");

/** A failure answer as the spec wants it: 503 NETWORK_UNAVAILABLE, or 504 SUBMISSION_TIMEOUT with the hash, in the envelope, within its bound. */
function expectUnavailable(a: Answer, what: string, opts: { sent?: boolean } = {}): void {
  const ctx = `${what} (${mode}): ${a.status} ${JSON.stringify(a.body)} after ${a.ms} ms`;
  expect([503, 504], ctx).toContain(a.status);
  expect(typeof a.body?.error?.requestId, ctx).toBe("string");
  if (a.status === 503) {
    expect(a.body.error.code, ctx).toBe("NETWORK_UNAVAILABLE");
    expect(a.ms, ctx).toBeLessThan(BOUND_MS);
  } else {
    expect(opts.sent, `${ctx}: a 504 although nothing could have been sent`).not.toBe(false);
    expect(a.body.error.code, ctx).toBe("SUBMISSION_TIMEOUT");
    expect(a.body.error.details?.hash, ctx).toMatch(/^[0-9a-f]{64}$/);
    expect(a.ms, ctx).toBeLessThan(SENT_BOUND_MS);
  }
}

/**
 * The testnet's health entry once it is `want` (once it is no longer ok without `want`); every
 * answer on the way must be 200 or 503 with the schema's fields.
 */
async function faultyHealth(
  want?: "down",
): Promise<{ detectMs: number; net: any; httpStatus: number; overall: string }> {
  let last: { status: number; body: any } = { status: 0, body: null };
  const detectMs = await until(
    `health reports the fault${want ? ` as ${want}` : ""}`,
    async () => {
      last = await health();
      expect([200, 503], JSON.stringify(last.body)).toContain(last.status);
      return want ? last.body.networks.testnet.status === want : last.body.networks.testnet.status !== "ok";
    },
    3000,
  );
  const net = last.body.networks.testnet;
  expect(["down", "degraded"]).toContain(net.status);
  expect(last.body.status).not.toBe("ok");
  expect(typeof net.lastError).toBe("string");
  expect(net.lastError).not.toContain("http://"); // no upstream URL (it may carry a key)
  return { detectMs, net, httpStatus: last.status, overall: last.body.status };
}

// ---- continuous traffic: sponsor requests from the first fault until the end -------------------

interface TrafficResult {
  mode: string;
  start: number;
  end: number;
  status: number;
  code?: string;
}
const traffic = { running: false, results: [] as TrafficResult[], workers: [] as Promise<void>[] };

async function trafficWorker(): Promise<void> {
  while (traffic.running) {
    const at = mode;
    const start = Date.now();
    let status = 0;
    let code: string | undefined;
    try {
      const res = await r.post("/v1/sponsor", { transaction: payment().xdr, network: "testnet" });
      status = res.status;
      code = res.body?.error?.code;
    } catch (e) {
      code = e instanceof Error ? e.message : String(e);
    }
    traffic.results.push({ mode: at, start, end: Date.now(), status, code });
    await Bun.sleep(100);
  }
}

/** After heal(): time until health says ok again and until a sponsor request started after heal() is confirmed (200). */
async function recovery(healedAt: number): Promise<{ healthMs: number; sponsorMs: number }> {
  await until("health ok again", async () => (await health()).body.networks.testnet.status === "ok", RECOVERY_BOUND_MS);
  const healthMs = Date.now() - healedAt;
  await until(
    "a sponsor request after heal() confirmed",
    () => traffic.results.some((t) => t.start >= healedAt && t.status === 200),
    RECOVERY_BOUND_MS,
  );
  const first = traffic.results.filter((t) => t.start >= healedAt && t.status === 200).sort((a, b) => a.end - b.end)[0];
  return { healthMs, sponsorMs: first.end - healedAt };
}

beforeAll(async () => {
  fake = await startFakeRpc({ ledgerCloseMs: 50 });
  const [funder] = await fake.fund(1);
  users = await fake.fund(600);
  r = await startTestRelay({
    TESTNET_RPC_URL: fake.url,
    TESTNET_PASSPHRASE: fake.passphrase,
    TESTNET_FUNDER_SECRET: funder.secret(),
    TESTNET_CHANNELS: String(CHANNELS),
    RPC_TIMEOUT_MS: String(RPC_TIMEOUT_MS),
    WATCHER_POLL_MS: String(WATCHER_POLL_MS),
    SUBMISSION_TIMEOUT_MS: String(SUBMISSION_TIMEOUT_MS),
    TRY_AGAIN_LATER_MS: "500",
  });
  // the upstream network's channel pool starts in the background: ready before any fault
  await until(
    "the testnet channel pool is ready",
    async () => {
      const res = await r.admin("GET", "/channels?network=testnet");
      return res.status === 200 && res.body.totals.active >= CHANNELS;
    },
    15_000,
  );
}, 30_000);

afterEach(async () => {
  await fake?.heal(); // a failed test leaves no fault behind
});

afterAll(async () => {
  traffic.running = false;
  await Promise.all(traffic.workers);
  await r?.stop();
  await fake?.stop();
  console.log(
    "upstream fault figures (RPC_TIMEOUT_MS=%d, WATCHER_POLL_MS=%d, SUBMISSION_TIMEOUT_MS=%d):",
    RPC_TIMEOUT_MS,
    WATCHER_POLL_MS,
    SUBMISSION_TIMEOUT_MS,
  );
  console.table(figures);
});

describe("a healthy upstream", () => {
  test("sponsor, simulate and estimate answer 200 and health is ok", async () => {
    const h = await health();
    expect(h.status).toBe(200);
    expect(h.body.networks.testnet).toMatchObject({
      status: "ok",
      upstream: new URL(fake.url).host,
      lastError: null,
      failingForMs: null,
    });
    const [sponsor, simulate, estimate] = await Promise.all([
      timed("/v1/sponsor", { transaction: payment().xdr, network: "testnet" }),
      timed("/v1/simulate", { transaction: contractCall(), network: "testnet" }),
      timed("/v1/estimate", { transaction: payment(users[1]).xdr, network: "testnet" }),
    ]);
    expect(sponsor.status, JSON.stringify(sponsor.body)).toBe(200);
    expect(simulate.status, JSON.stringify(simulate.body)).toBe(200);
    expect(estimate.status, JSON.stringify(estimate.body)).toBe(200);
    figures.push({
      mode: "healthy",
      health: "ok",
      sponsor: `${sponsor.status} ${sponsor.ms}ms`,
      simulate: `${simulate.status} ${simulate.ms}ms`,
      estimate: `${estimate.status} ${estimate.ms}ms`,
    });
    traffic.running = true;
    traffic.workers = [trafficWorker(), trafficWorker()];
    await until(
      "the traffic loop's first confirmations",
      () => traffic.results.filter((t) => t.status === 200).length >= 2,
      3000,
    );
  });

  test("health stays within its schema (200 or 503) whatever a watcher holds", () => {
    const now = Date.now();
    const watchers = [
      { latestLedger: NaN, latestSeenAt: NaN, lastError: null, failingSince: null, lastFailureAt: NaN, pollMs: NaN },
      { latestLedger: 0, latestSeenAt: 0, lastError: null, failingSince: null, lastFailureAt: 0, pollMs: 50 },
      {
        latestLedger: 5,
        latestSeenAt: now + 10_000,
        lastError: "x".repeat(10_000),
        failingSince: now - 1,
        lastFailureAt: now,
        pollMs: 0,
      },
      {
        latestLedger: Infinity,
        latestSeenAt: -Infinity,
        lastError: "getLatestLedger: https://rpc.example/SECRET-KEY refused",
        failingSince: NaN,
        lastFailureAt: now,
        pollMs: 50,
      },
    ];
    for (const watcher of watchers) {
      const n = networkHealth(
        { upstream: "rpc.example", lastFailure: { at: NaN, message: "m" }, watcher } as never,
        now,
      );
      expect(Value.Check(NetworkHealth, n), JSON.stringify(n)).toBe(true);
      expect(JSON.stringify(n)).not.toContain("SECRET-KEY");
    }
    expect(networkHealth({ upstream: "u", lastFailure: null, watcher: watchers[1] } as never, now).status).toBe("down");
  });
});

describe("every method faulty", () => {
  const modes: [FaultMode, FaultOptions][] = [
    ["down", {}],
    ["slow", { delayMs: RPC_TIMEOUT_MS * 4 }],
    ["hang", {}],
    ["garbage", {}],
    ["empty", {}],
    ["empty_body", {}],
    ["wrong_types", {}],
    ["wrong_id", {}],
    ["http500", {}],
  ];
  test.each(modes)(
    "%s: 503 within the bound, health down, recovery after heal",
    async (fault, opts) => {
      mode = fault;
      fake.setMode(fault, undefined, opts);
      const h = await faultyHealth("down"); // every poll fails
      const [sponsor, simulate, estimate] = await Promise.all([
        timed("/v1/sponsor", { transaction: payment().xdr, network: "testnet" }),
        timed("/v1/simulate", { transaction: contractCall(), network: "testnet" }),
        timed("/v1/estimate", { transaction: payment(users[1]).xdr, network: "testnet" }),
      ]);
      expectUnavailable(sponsor, "sponsor", { sent: fault === "down" ? false : undefined });
      expectUnavailable(simulate, "simulate", { sent: false });
      expectUnavailable(estimate, "estimate", { sent: false });
      await Bun.sleep(300); // a while of faulty upstream under traffic
      const later = await health();
      expect(later.body.networks.testnet.status).toBe("down");
      expect(later.body.networks.testnet.failingForMs).toBeGreaterThanOrEqual(250);
      const healedAt = Date.now();
      await fake.heal();
      mode = `${fault} healed`;
      const rec = await recovery(healedAt);
      const after = await timed("/v1/sponsor", { transaction: payment().xdr, network: "testnet" });
      expect(after.status, JSON.stringify(after.body)).toBe(200);
      figures.push({
        mode: fault,
        detectMs: h.detectMs,
        health: `${h.httpStatus} ${h.overall}/${h.net.status}`,
        lastError: h.net.lastError.slice(0, 70),
        sponsor: `${sponsor.status} ${sponsor.ms}ms`,
        simulate: `${simulate.status} ${simulate.ms}ms`,
        estimate: `${estimate.status} ${estimate.ms}ms`,
        healthOkAfterMs: rec.healthMs,
        sponsor200AfterMs: rec.sponsorMs,
      });
    },
    20_000,
  );
});

describe("the watcher's calls faulty while a sponsor request waits for its confirmation", () => {
  // the transaction is sent and included while the watcher cannot read ledgers: once the upstream
  // heals, the watcher scans from where its last good poll ended (its cursor intact) and confirms it
  const cases: [FaultMode, string][] = [
    ["empty", "getLatestLedger"],
    ["wrong_types", "getTransactions"],
    ["hang", "getTransactions"],
  ];
  test.each(cases)(
    "%s on %s: health down, then the waiting request is confirmed (200)",
    async (fault, method) => {
      mode = `${fault} on ${method}`;
      const { xdr, innerHash } = payment();
      fake.setMode(fault, method);
      const t0 = Date.now();
      const pending = timed("/v1/sponsor", { transaction: xdr, network: "testnet" });
      const h = await faultyHealth("down");
      await until("the transaction is in a ledger", () => fake.localnet.net.records.has(innerHash), 2000);
      await Bun.sleep(400);
      const healedAt = Date.now();
      await fake.heal();
      mode = `${fault} on ${method} healed`;
      const res = await pending;
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.hash).toBe(fake.localnet.net.records.get(innerHash)!.hash);
      const rec = await recovery(healedAt);
      figures.push({
        mode: `${fault} on ${method}`,
        detectMs: h.detectMs,
        health: `${h.httpStatus} ${h.overall}/${h.net.status}`,
        lastError: h.net.lastError.slice(0, 70),
        sponsor: `${res.status} ${res.ms}ms (healed after ${healedAt - t0}ms)`,
        healthOkAfterMs: rec.healthMs,
        sponsor200AfterMs: rec.sponsorMs,
      });
    },
    20_000,
  );
});

describe("sendTransaction faulty", () => {
  // forward: the upstream accepted the transaction but its answer was lost or broken
  const cases: [FaultMode, FaultOptions][] = [
    ["garbage", { forward: true }],
    ["hang", { forward: true }],
    ["wrong_id", { forward: true }],
    ["down", { forward: true }],
    ["slow", { delayMs: RPC_TIMEOUT_MS * 4 }],
    ["empty", {}],
    ["http500", {}],
  ];
  test.each(cases)(
    "%s %o: 503 or 504 (never 500); the retry after heal() answers the network's transaction",
    async (fault, opts) => {
      mode = `sendTransaction ${fault}${opts.forward ? " (accepted)" : ""}`;
      fake.setMode(fault, "sendTransaction", opts);
      const { xdr, innerHash } = payment();
      const first = await timed("/v1/sponsor", { transaction: xdr, network: "testnet" });
      // the relay cannot tell an HTTP 500 or `{}` from an upstream that acted and then failed: 504 is allowed
      const sent = opts.forward || fault === "slow";
      expectUnavailable(first, "sponsor");
      const h = await health();
      expect([200, 503]).toContain(h.status);
      await fake.heal();
      if (sent)
        await until(
          `the accepted transaction is in a ledger (the localnet answered ${fake.lastForwarded.get("sendTransaction")})`,
          () => fake.localnet.net.records.has(innerHash),
          2000,
        );
      const retry = await timed("/v1/sponsor", { transaction: xdr, network: "testnet" });
      expect(retry.status, `retry: ${JSON.stringify(retry.body)}`).toBe(200);
      const onNetwork = fake.localnet.net.records.get(innerHash);
      expect(onNetwork, "the inner transaction is on the network").toBeDefined();
      expect(retry.body.hash).toBe(onNetwork!.hash);
      if (first.status === 504) expect(first.body.error.details.hash).toBe(retry.body.hash);
      figures.push({
        mode,
        health: `${h.status} ${h.body.status}/${h.body.networks.testnet.status}`,
        sponsor: `${first.status} ${first.ms}ms`,
        retry: `${retry.status} ${retry.ms}ms`,
      });
    },
    20_000,
  );
});

describe("sendTransaction batches", () => {
  /** `n` sponsor requests at once: their sends leave in the same turn, as one JSON-RPC batch. */
  const together = (n: number) => {
    const payments = Array.from({ length: n }, () => payment());
    const answers = Promise.all(payments.map((p) => timed("/v1/sponsor", { transaction: p.xdr, network: "testnet" })));
    return { payments, answers };
  };

  test("requests that arrive together are sent in one batch, each answered with its own transaction", async () => {
    mode = "batch";
    const before = fake.batchSizes.length;
    const { payments, answers } = together(6);
    const got = await answers;
    for (const [i, a] of got.entries()) {
      expect(a.status, JSON.stringify(a.body)).toBe(200);
      expect(a.body.hash).toBe(fake.localnet.net.records.get(payments[i]!.innerHash)!.hash);
    }
    expect(Math.max(0, ...fake.batchSizes.slice(before))).toBeGreaterThanOrEqual(2);
  });

  test("a batch the upstream took but whose answer was lost: each request 504 with its hash, each retry 200", async () => {
    mode = "batch garbage (accepted)";
    const before = fake.batchSizes.length;
    fake.setMode("garbage", "sendTransaction", { forward: true });
    const { payments, answers } = together(6);
    const first = await answers;
    expect(Math.max(0, ...fake.batchSizes.slice(before))).toBeGreaterThanOrEqual(2);
    await fake.heal();
    for (const [i, a] of first.entries()) {
      expectUnavailable(a, "sponsor in a batch");
      const { xdr, innerHash } = payments[i]!;
      await until("the accepted transaction is in a ledger", () => fake.localnet.net.records.has(innerHash), 2000);
      const retry = await timed("/v1/sponsor", { transaction: xdr, network: "testnet" });
      expect(retry.status, JSON.stringify(retry.body)).toBe(200);
      expect(retry.body.hash).toBe(fake.localnet.net.records.get(innerHash)!.hash);
      if (a.status === 504) expect(a.body.error.details.hash).toBe(retry.body.hash);
    }
  });
});

describe("under continuous traffic", () => {
  test("every sponsor request of the loop answered 200, 503 or 504 within its bound, and 200 again after each heal", async () => {
    traffic.running = false;
    await Promise.all(traffic.workers);
    const results = traffic.results;
    expect(results.length).toBeGreaterThan(20);
    const bad = results.filter((t) => ![200, 503, 504].includes(t.status) || t.end - t.start >= SENT_BOUND_MS);
    expect(bad).toEqual([]);
    const by = new Map<string, Record<string, number>>();
    for (const t of results) {
      const m = by.get(t.mode) ?? {};
      m[t.status] = (m[t.status] ?? 0) + 1;
      m.maxMs = Math.max(m.maxMs ?? 0, t.end - t.start);
      by.set(t.mode, m);
    }
    console.log("continuous traffic: %d sponsor requests, by phase (status: count, maxMs):", results.length);
    console.table(Object.fromEntries(by));
  });
});

// last: a refusal turns batches off for the rest of this relay's life (the way it is refused: test/network/rpc-client.test.ts)
describe("an upstream that refuses batches", () => {
  test("the refused batch's requests are sent again one by one and answered 200, and so are later ones", async () => {
    mode = "batches refused";
    fake.refuseBatches = "http400";
    for (const round of ["refused", "later"]) {
      const before = fake.batchSizes.length;
      const payments = Array.from({ length: 6 }, () => payment());
      const got = await Promise.all(
        payments.map((p) => timed("/v1/sponsor", { transaction: p.xdr, network: "testnet" })),
      );
      for (const [i, a] of got.entries()) {
        expect(a.status, JSON.stringify(a.body)).toBe(200);
        expect(a.body.hash).toBe(fake.localnet.net.records.get(payments[i]!.innerHash)!.hash);
      }
      expect(fake.batchSizes.length - before, round).toBe(round === "refused" ? 1 : 0);
    }
  });
});
