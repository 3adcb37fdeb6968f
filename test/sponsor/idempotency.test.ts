/**
 * The Idempotency class (src/features/sponsor/idempotency.ts) over an in-memory IdempotencyStore: the same key
 * and body replay the first outcome, concurrent runs of one key run once, another body is
 * IDEMPOTENCY_KEY_REUSED, outcomes that invite a retry are released rather than kept, and a key
 * claimed but never answered runs again. Concurrent requests of one key each start; the start joins
 * the run under way (the sponsor service's one run per inner transaction). No relay, no database.
 */
import { describe, expect, test } from "bun:test";
import { RelayError, type ErrorCode } from "../../src/kernel/errors.ts";
import { bodyHash, checkIdempotencyKey, Idempotency, type Keyed } from "../../src/features/sponsor/idempotency.ts";
import type { Pending } from "../../src/features/sponsor/run.ts";
import type { IdempotencyRecord, IdempotencyStore, Outcome } from "../../src/store/types.ts";

const TTL_MS = 86_400_000;

/** An IdempotencyStore in a Map, with what was asked of it. */
class MemoryStore implements IdempotencyStore {
  readonly records = new Map<string, IdempotencyRecord>();
  readonly calls: string[] = [];
  readonly ttls: number[] = [];

  async claimKey(scope: string, key: string, hash: string, ttlMs: number): Promise<IdempotencyRecord | null> {
    this.calls.push(`claim ${scope} ${key}`);
    this.ttls.push(ttlMs);
    await Bun.sleep(1); // a round trip: concurrent runs overlap here
    const existing = this.records.get(`${scope}/${key}`);
    if (existing) return { ...existing };
    this.records.set(`${scope}/${key}`, { bodyHash: hash, outcome: null });
    return null;
  }

  async complete(scope: string, key: string, outcome: Outcome): Promise<void> {
    this.calls.push(`complete ${scope} ${key}`);
    this.records.get(`${scope}/${key}`)!.outcome = outcome;
  }

  async release(scope: string, key: string): Promise<void> {
    this.calls.push(`release ${scope} ${key}`);
    this.records.delete(`${scope}/${key}`);
  }
}

const success = (n: number): Outcome => ({
  kind: "success",
  result: { hash: n.toString(16).padStart(64, "0"), feePaid: "200", ledger: n, resultXdr: "AAAA" },
});
const failure = (code: ErrorCode, retryAfter?: number): Outcome => ({
  kind: "failure",
  error: { code, message: `failed: ${code}`, details: { n: 1 }, ...(retryAfter ? { retryAfter } : {}) },
});
const BODY = bodyHash({ transaction: "AAAA", network: "testnet" });
const OTHER_BODY = bodyHash({ transaction: "BBBB", network: "testnet" });

/**
 * A request's start that answers `outcomes` in turn and counts its runs: a request that starts while
 * a run is under way joins it (the sponsor service's one run per inner transaction).
 */
function counted(...outcomes: Outcome[]) {
  let calls = 0;
  let running: Pending | null = null;
  const fn = async (): Promise<Pending> => {
    if (running) return { ...running, joined: true };
    const outcome = outcomes[Math.min(calls++, outcomes.length - 1)]!;
    const run: Pending = { accepted: new Promise(() => {}), outcome: Bun.sleep(5).then(() => outcome) };
    running = run;
    void run.outcome.then(() => (running = null));
    return run;
  };
  return { fn, calls: () => calls };
}

/** What a keyed request is answered: the outcome, and whether it was replayed. */
async function answered(keyed: Promise<Keyed>): Promise<{ outcome: Outcome; replayed: boolean }> {
  const { pending, replayed } = await keyed;
  return { outcome: await pending.outcome, replayed };
}

async function reusedError(p: Promise<unknown>, key: string): Promise<void> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(RelayError);
  expect((e as RelayError).code).toBe("IDEMPOTENCY_KEY_REUSED");
  expect((e as RelayError).details).toEqual({ key });
}

describe("the same key and body", () => {
  test("replays the first outcome, replayed: true, without running again", async () => {
    const store = new MemoryStore();
    const idem = new Idempotency(store, TTL_MS);
    const f = counted(success(1), success(2));
    expect(await answered(idem.run("ip:1", "k", BODY, f.fn))).toEqual({ outcome: success(1), replayed: false });
    expect(await answered(idem.run("ip:1", "k", BODY, f.fn))).toEqual({ outcome: success(1), replayed: true });
    expect(await answered(idem.run("ip:1", "k", BODY, f.fn))).toEqual({ outcome: success(1), replayed: true });
    expect(f.calls()).toBe(1);
    expect(store.records.get("ip:1/k")).toEqual({ bodyHash: BODY, outcome: success(1) });
    expect(store.ttls.every((t) => t === TTL_MS)).toBe(true);
  });

  test("a failure that is final (the network refused the transaction) is kept and replayed too", async () => {
    const store = new MemoryStore();
    const idem = new Idempotency(store, TTL_MS);
    const f = counted(failure("SUBMISSION_FAILED"), success(2));
    expect(await answered(idem.run("ip:1", "k", BODY, f.fn))).toEqual({
      outcome: failure("SUBMISSION_FAILED"),
      replayed: false,
    });
    expect(await answered(idem.run("ip:1", "k", BODY, f.fn))).toEqual({
      outcome: failure("SUBMISSION_FAILED"),
      replayed: true,
    });
    expect(f.calls()).toBe(1);
    expect(store.calls.filter((c) => c.startsWith("release"))).toEqual([]);
  });

  test("concurrent runs of one key run it once: the others wait and replay its outcome", async () => {
    const store = new MemoryStore();
    const idem = new Idempotency(store, TTL_MS);
    const f = counted(success(1), success(2));
    const runs = await Promise.all(Array.from({ length: 5 }, () => answered(idem.run("ip:1", "k", BODY, f.fn))));
    expect(f.calls()).toBe(1);
    expect(runs.map((r) => r.outcome)).toEqual(Array(5).fill(success(1)));
    expect(runs.filter((r) => !r.replayed)).toHaveLength(1);
    expect(store.records.get("ip:1/k")).toEqual({ bodyHash: BODY, outcome: success(1) });
  });

  test("keys are per scope: the same key of another caller is its own", async () => {
    const idem = new Idempotency(new MemoryStore(), TTL_MS);
    const f = counted(success(1), success(2));
    expect(await answered(idem.run("ip:1", "k", BODY, f.fn))).toEqual({ outcome: success(1), replayed: false });
    expect(await answered(idem.run("project:p", "k", BODY, f.fn))).toEqual({ outcome: success(2), replayed: false });
    expect(f.calls()).toBe(2);
  });
});

describe("another body with the same key", () => {
  test("after the first answered: IDEMPOTENCY_KEY_REUSED, nothing run", async () => {
    const idem = new Idempotency(new MemoryStore(), TTL_MS);
    const f = counted(success(1));
    await answered(idem.run("ip:1", "k", BODY, f.fn));
    await reusedError(idem.run("ip:1", "k", OTHER_BODY, f.fn), "k");
    expect(f.calls()).toBe(1);
    // the first body still replays
    expect(await answered(idem.run("ip:1", "k", BODY, f.fn))).toEqual({ outcome: success(1), replayed: true });
  });

  test("while the first is running: IDEMPOTENCY_KEY_REUSED at once; the first is answered as if alone", async () => {
    const idem = new Idempotency(new MemoryStore(), TTL_MS);
    const f = counted(success(1));
    const first = idem.run("ip:1", "k", BODY, f.fn);
    await reusedError(idem.run("ip:1", "k", OTHER_BODY, f.fn), "k");
    expect(await answered(first)).toEqual({ outcome: success(1), replayed: false });
    expect(f.calls()).toBe(1);
  });

  test("claimed by another process with another body: IDEMPOTENCY_KEY_REUSED", async () => {
    const store = new MemoryStore();
    store.records.set("ip:1/k", { bodyHash: OTHER_BODY, outcome: null });
    const f = counted(success(1));
    await reusedError(new Idempotency(store, TTL_MS).run("ip:1", "k", BODY, f.fn), "k");
    expect(f.calls()).toBe(0);
  });
});

describe("outcomes that invite a retry are released, not kept", () => {
  for (const code of ["NETWORK_UNAVAILABLE", "SUBMISSION_TIMEOUT"] as const) {
    test(`${code}: answered once, then the key is free and the retry runs again`, async () => {
      const store = new MemoryStore();
      const idem = new Idempotency(store, TTL_MS);
      const f = counted(failure(code, 5), success(2));
      expect(await answered(idem.run("ip:1", "k", BODY, f.fn))).toEqual({ outcome: failure(code, 5), replayed: false });
      expect(store.records.has("ip:1/k")).toBe(false);
      expect(store.calls).toEqual(["claim ip:1 k", "release ip:1 k"]);
      expect(await answered(idem.run("ip:1", "k", BODY, f.fn))).toEqual({ outcome: success(2), replayed: false });
      expect(f.calls()).toBe(2);
      expect(store.records.get("ip:1/k")).toEqual({ bodyHash: BODY, outcome: success(2) });
      // and a retry with another body is not refused: nothing was kept
      expect((await answered(idem.run("ip:2", "x", BODY, counted(failure(code)).fn))).replayed).toBe(false);
      expect((await answered(idem.run("ip:2", "x", OTHER_BODY, counted(success(3)).fn))).outcome).toEqual(success(3));
    });
  }

  test("concurrent runs that wait on a retryable outcome get it too (replayed); the next run after it runs again", async () => {
    const idem = new Idempotency(new MemoryStore(), TTL_MS);
    const f = counted(failure("SUBMISSION_TIMEOUT"), success(2));
    const [a, b] = await Promise.all([
      answered(idem.run("ip:1", "k", BODY, f.fn)),
      answered(idem.run("ip:1", "k", BODY, f.fn)),
    ]);
    expect([a.outcome, b.outcome]).toEqual([failure("SUBMISSION_TIMEOUT"), failure("SUBMISSION_TIMEOUT")]);
    expect([a.replayed, b.replayed].sort()).toEqual([false, true]);
    expect(await answered(idem.run("ip:1", "k", BODY, f.fn))).toEqual({ outcome: success(2), replayed: false });
    expect(f.calls()).toBe(2);
  });
});

describe("a key claimed but never answered", () => {
  test("(another process claimed it, then stopped) runs again with its body, and is kept", async () => {
    const store = new MemoryStore();
    store.records.set("ip:1/k", { bodyHash: BODY, outcome: null });
    const idem = new Idempotency(store, TTL_MS);
    const f = counted(success(1));
    expect(await answered(idem.run("ip:1", "k", BODY, f.fn))).toEqual({ outcome: success(1), replayed: false });
    expect(store.records.get("ip:1/k")).toEqual({ bodyHash: BODY, outcome: success(1) });
    expect(await answered(idem.run("ip:1", "k", BODY, f.fn))).toEqual({ outcome: success(1), replayed: true });
    expect(f.calls()).toBe(1);
  });

  test("(the run threw) stays claimed; the next run runs it again", async () => {
    const store = new MemoryStore();
    const idem = new Idempotency(store, TTL_MS);
    const boom = idem.run("ip:1", "k", BODY, async () => {
      throw new Error("the process failed mid-request");
    });
    await expect(boom).rejects.toThrow("the process failed mid-request");
    expect(store.records.get("ip:1/k")).toEqual({ bodyHash: BODY, outcome: null });
    const f = counted(success(1));
    expect(await answered(idem.run("ip:1", "k", BODY, f.fn))).toEqual({ outcome: success(1), replayed: false });
    expect(f.calls()).toBe(1);
  });
});

describe("keys and bodies", () => {
  test("a key is 1 to 255 visible ASCII characters", () => {
    for (const key of ["k", "!~", "a-b_c.d:e@f", "x".repeat(255)]) expect(() => checkIdempotencyKey(key)).not.toThrow();
    for (const key of ["", "x".repeat(256), "a b", "tab\t", "é", "nul\u0000"]) {
      let error: unknown;
      try {
        checkIdempotencyKey(key);
      } catch (e) {
        error = e;
      }
      expect(error, JSON.stringify(key)).toBeInstanceOf(RelayError);
      expect((error as RelayError).code).toBe("VALIDATION_ERROR");
      expect((error as RelayError).details).toEqual({ field: "X-Idempotency-Key", reason: "bad_idempotency_key" });
    }
  });

  test("the body hash is the body's: the same body the same hash, any difference another", () => {
    const body = { transaction: "AAAA", operation: undefined, network: "testnet" };
    expect(bodyHash(body)).toBe(bodyHash({ ...body }));
    expect(bodyHash(body)).toMatch(/^[0-9a-f]{64}$/);
    expect(bodyHash({ ...body, network: "mainnet" })).not.toBe(bodyHash(body));
    expect(bodyHash({ ...body, transaction: "AAAB" })).not.toBe(bodyHash(body));
  });
});
