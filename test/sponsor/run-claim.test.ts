/**
 * `Runs.claim` built directly: the one place that keeps one run per transaction. A row store that
 * answers as each test says stands for the database; `shared` stands for the cluster's leases.
 */
import { describe, expect, test } from "bun:test";
import { AGAIN, type Owner, Runs, type SharedRuns } from "../../src/features/sponsor/run.ts";
import type { Outcome, SubmissionRecord, SubmissionStore } from "../../src/store/types.ts";
import { RelayError } from "../../src/kernel/errors.ts";

const applied = (hash: string): Outcome => ({
  kind: "success",
  result: { hash, feePaid: "100", ledger: 7, resultXdr: "AAAAAAAAAGQAAAAAAAAAAQAAAAAAAAABAAAAAAAAAAA=" },
});

/**
 * A store whose row of every inner hash is `rows[reads]` (the last one once they run out), counting reads;
 * a row is the anonymous relay's unless it names its project.
 */
function store(rows: (Partial<SubmissionRecord> | null)[]) {
  const s = { reads: 0 };
  const row = (r: Partial<SubmissionRecord> | null) => (r ? { projectId: null, ...r } : null);
  const submissions = {
    byInnerHash: async () => row(rows[Math.min(s.reads++, rows.length - 1)] ?? null) as SubmissionRecord | null,
  } as unknown as SubmissionStore;
  return { s, submissions };
}

/**
 * An owner (the anonymous relay's, unless `extra` names a project) whose `own` answers `answers` in turn,
 * recording what it was given; `done` and `kept` counted.
 */
function owner(answers: (Outcome | typeof AGAIN | Error)[], extra: Partial<Owner> = {}) {
  const seen: { prior: unknown; again: boolean }[] = [];
  const counts = { done: 0, kept: 0 };
  let release: () => void = () => {};
  const written = new Promise<void>((r) => (release = r));
  const o: Owner = {
    own: async (prior, _run, again) => {
      seen.push({ prior, again });
      const a = answers[seen.length - 1]!;
      if (a instanceof Error) throw a;
      return a;
    },
    projectId: null,
    done: () => void counts.done++,
    kept: () => {
      counts.kept++;
      return written;
    },
    ...extra,
  };
  return { o, seen, counts, written: () => release() };
}

describe("Runs.claim", () => {
  test("the first request owns the run (its row read once); a second one joins it and lets its own reservation go", async () => {
    const { s, submissions } = store([null]);
    const runs = new Runs(null, submissions, 1000);
    const first = owner([applied("h1")]);
    const second = owner([applied("other")]);
    const a = runs.claim("testnet", "inner1", first.o);
    const b = runs.claim("testnet", "inner1", second.o);
    expect(b.joined).toBe(true);
    expect(second.counts.done).toBe(1); // at once, before the run ends
    expect(await a.outcome).toEqual(applied("h1"));
    expect(await b.outcome).toEqual(applied("h1"));
    expect(second.seen).toHaveLength(0);
    expect(first.seen).toEqual([{ prior: null, again: false }]);
    expect(first.counts.done).toBe(1);
    expect(s.reads).toBe(1);
  });

  test("joinable until its outcome is written, then gone: the database answers later requests", async () => {
    const { submissions } = store([null]);
    const runs = new Runs(null, submissions, 1000);
    const first = owner([applied("h1")]);
    await runs.claim("testnet", "inner1", first.o).outcome;
    await Bun.sleep(0);
    expect(runs.find("testnet", "inner1")).toBeDefined(); // its write not done yet
    first.written();
    await Bun.sleep(0);
    await Bun.sleep(0);
    expect(runs.find("testnet", "inner1")).toBeUndefined();
    expect(runs.count("testnet")).toBe(0);
  });

  test("an outcome recorded already answers without running anything", async () => {
    const recorded = applied("h-recorded");
    const { submissions } = store([{ outcome: recorded, feeCharged: 100n }]);
    const o = owner([applied("never")]);
    const got = await new Runs(null, submissions, 1000).claim("testnet", "inner2", o.o).outcome;
    expect(got).toEqual(recorded);
    expect(o.seen).toHaveLength(0);
    expect(o.counts.done).toBe(1);
  });

  test("AGAIN reads the row once more (written meanwhile) and runs with it", async () => {
    const row = { id: "r1", outcome: null, feeCharged: null, projectId: null };
    const { s, submissions } = store([null, row]);
    const o = owner([AGAIN, applied("h3")]);
    const got = await new Runs(null, submissions, 1000).claim("testnet", "inner3", o.o).outcome;
    expect(got).toEqual(applied("h3"));
    expect(o.seen).toEqual([
      { prior: null, again: false },
      { prior: row, again: true },
    ]);
    expect(s.reads).toBe(2);
  });

  test("what the run throws is its outcome, never a rejection; the lease recovery took is let go", async () => {
    const { submissions } = store([null]);
    let released = 0;
    const lease = { release: async () => void released++ };
    const o = owner([new RelayError("NETWORK_UNAVAILABLE", "the database did not answer")], { lease });
    const got = await new Runs(null, submissions, 1000).claim("testnet", "inner4", o.o).outcome;
    expect(got.kind).toBe("failure");
    expect(got.kind === "failure" && got.error.code).toBe("NETWORK_UNAVAILABLE");
    expect(released).toBe(1);
    expect(o.counts.done).toBe(1);
  });

  test("another instance holds the lease: its recorded outcome answers, nothing runs here", async () => {
    const recorded = applied("h-elsewhere");
    const { submissions } = store([
      { status: "submitted", hash: "outer5", outcome: null, feeCharged: null },
      { outcome: recorded, feeCharged: 100n },
    ]);
    const leases: string[] = [];
    const shared: SharedRuns = {
      claim: async (name) => {
        leases.push(name);
        return false;
      },
      release: async () => {},
    };
    const o = owner([applied("never")]);
    const run = new Runs(shared, submissions, 5000).claim("mainnet", "inner5", o.o);
    expect(await run.accepted).toEqual({ hash: "outer5", innerHash: "inner5" }); // accepted there: told here
    expect(await run.outcome).toEqual(recorded);
    expect(o.seen).toHaveLength(0);
    expect(leases[0]).toBe("inner:mainnet:inner5");
    expect(run.theirs?.()).toBe(false);
  });
});

describe("Runs.claim: another project's submission answers, and says so", () => {
  test("another project's request joins a run under way (never paid twice), and is told it is theirs", async () => {
    const { submissions } = store([null]);
    const runs = new Runs(null, submissions, 1000);
    const first = owner([applied("h6")], { projectId: "p1" });
    const a = runs.claim("mainnet", "inner6", first.o);
    const same = runs.join("mainnet", "inner6", "p1")!;
    const other = runs.join("mainnet", "inner6", "p2")!;
    const late = runs.claim("mainnet", "inner6", owner([applied("never")], { projectId: "p2" }).o);
    expect([same.joined, other.joined, late.joined]).toEqual([true, true, true]);
    expect([a.theirs?.(), same.theirs?.(), other.theirs?.(), late.theirs?.()]).toEqual([false, false, true, true]);
    expect(await other.outcome).toEqual(applied("h6"));
  });

  test("another project's recorded outcome answers a run, then theirs; its own project's is not", async () => {
    const recorded = applied("h7");
    const theirs = new Runs(null, store([{ outcome: recorded, feeCharged: 100n, projectId: "p1" }]).submissions, 1000);
    const run = theirs.claim("mainnet", "inner7", owner([applied("never")], { projectId: "p2" }).o);
    expect(await run.outcome).toEqual(recorded);
    expect(run.theirs?.()).toBe(true);
    const own = new Runs(null, store([{ outcome: recorded, feeCharged: 100n, projectId: "p1" }]).submissions, 1000);
    const mine = own.claim("mainnet", "inner7", owner([applied("never")], { projectId: "p1" }).o);
    expect(await mine.outcome).toEqual(recorded);
    expect(mine.theirs?.()).toBe(false);
  });

  test("another instance's run of another project: its acceptance is not told here, its outcome answers", async () => {
    const recorded = applied("h8");
    const { submissions } = store([
      { status: "submitted", hash: "outer8", outcome: null, feeCharged: null, projectId: "p1" },
      { outcome: recorded, feeCharged: 100n, projectId: "p1" },
    ]);
    const shared: SharedRuns = { claim: async () => false, release: async () => {} };
    const run = new Runs(shared, submissions, 5000).claim("mainnet", "inner8", owner([], { projectId: "p2" }).o);
    let accepted = false;
    void run.accepted.then(() => (accepted = true));
    expect(await run.outcome).toEqual(recorded);
    await Bun.sleep(0);
    expect(accepted).toBe(false);
    expect(run.theirs?.()).toBe(true);
  });

  test("another instance's run outlasts the wait: 504 with its own record's fee-bump and status, not another's", async () => {
    const row = { status: "submitted", hash: "outer9", outcome: null, feeCharged: null, projectId: "p1" };
    const shared: SharedRuns = { claim: async () => false, release: async () => {} };
    const details = async (projectId: string) => {
      const runs = new Runs(shared, store([row]).submissions, 150);
      const o = await runs.claim("mainnet", "inner9", owner([], { projectId }).o).outcome;
      return o.kind === "failure" ? o.error.details : null;
    };
    expect(await details("p1")).toMatchObject({ hash: "outer9", reason: "pending", status: "submitted" });
    expect(await details("p2")).toMatchObject({ hash: "inner9", reason: "pending", status: "pending" });
  });
});
