/**
 * One run per transaction. In this process: a single object per (network, inner hash) that every
 * request for it shares (sync, async, an idempotent retry, a held transaction of order flow); it
 * ends with the outcome, and before that the network's acceptance of a fee-bump of it is told once
 * (the asynchronous answer). Across instances: the instance that holds the inner transaction's lease
 * (Redis) runs it; a request through another waits for that run's recorded outcome (the database
 * row), is answered 202 when that run's submission is accepted, and runs it itself if the lease
 * frees without an outcome; 504 with the hash if neither comes in time.
 */
import { RelayError } from "../../kernel/errors.ts";
import type { Outcome, SubmissionRecord, SubmissionStore } from "../../store/types.ts";
import { finalOutcome, outcomeOf } from "./outcomes.ts";
import type { SponsorAccepted } from "./sponsor.model.ts";

/** The network took a fee-bump of the transaction (202: `submitted`, or already in a ledger). */
export type Accepted = Omit<SponsorAccepted, "status"> & Partial<Pick<SponsorAccepted, "status">>;

/** What a request waits for: the outcome, and the acceptance that may come first. */
export interface Pending {
  /** Resolves when the network accepted a fee-bump (never, for what ends before a send). */
  accepted: Promise<Accepted>;
  outcome: Promise<Outcome>;
  /** This request joined a run another request of this process had started. */
  joined?: boolean;
  /**
   * Whether it is answered from another project's submission (a run or a record this caller cannot
   * look up): known at once for a run joined, at the latest with the outcome for a record read.
   */
  theirs?(): boolean;
}

/** Whether another project's submission answers it. */
export const theirs = (p: Pending): boolean => p.theirs?.() === true;

/**
 * What an asynchronous request answers first: the network's acceptance when it comes before the outcome, unless
 * another project's submission answers it (known at once, or found once accepted): then the outcome.
 */
export async function earliest(p: Pending): Promise<Outcome | Accepted> {
  if (theirs(p)) return await p.outcome;
  const first = await Promise.race([p.outcome, p.accepted]);
  return "kind" in first || !theirs(p) ? first : await p.outcome;
}

export class Run implements Pending {
  readonly accepted: Promise<Accepted>;
  readonly outcome: Promise<Outcome>;
  /** Another project's submission answers it (its record, read before the outcome resolves). */
  foreign = false;
  readonly theirs = () => this.foreign;
  private tell: (a: Accepted) => void = () => {};
  private told = false;

  /** `projectId`: the project whose requests run it (null: the anonymous relay's). */
  constructor(
    readonly projectId: string | null,
    body: (run: Run) => Promise<Outcome>,
  ) {
    this.accepted = new Promise((resolve) => (this.tell = resolve));
    this.outcome = body(this);
  }

  /** A request answered without a run (refused before one, or an outcome recorded: `theirs`, another project's). */
  static ended(outcome: Outcome, theirs = false): Pending {
    const ended: Pending = { accepted: new Promise(() => {}), outcome: Promise.resolve(outcome) };
    if (theirs) ended.theirs = () => true;
    return ended;
  }

  /** The network accepted it: told once, to every request of the run (those joining later at once). */
  accept(a: Accepted): void {
    if (this.told) return;
    this.told = true;
    this.tell(a);
  }
}

/** The coordination of several instances, as far as runs need it. */
export interface SharedRuns {
  claim(name: string, ttlMs: number): Promise<boolean>;
  release(name: string): Promise<void>;
}

/** An inner transaction's lease across instances, held until released. */
export interface Lease {
  release(): Promise<void>;
}

/** Asked of `own` again: a row of the transaction was written meanwhile (by a refusal, or another instance). */
export const AGAIN = Symbol("again");

/** What the run of a transaction is, once this request owns it (`Runs.claim`). */
export interface Owner {
  /** Runs it: its stored row (none, or one with no outcome that stands), the run, whether the row was read again. */
  own(prior: SubmissionRecord | null, run: Run, again: boolean): Promise<Outcome | typeof AGAIN>;
  /** When the run ends, or this request joins another: what it reserved is let go of what it did not use. */
  done(): void;
  /** What the run stays joinable for after its outcome (the outcome's write). */
  kept(): Promise<unknown>;
  /** The lease recovery took already. */
  lease?: Lease;
  /** The project that pays for it (null: the anonymous relay). */
  projectId: string | null;
}

/** How often a request waiting on another instance's run checks for its outcome. */
const POLL_MS = 100;
/** An inner transaction's lease outlives a submission's timeout by this much. */
const MARGIN_MS = 5_000;

/** The runs of this process, by network and inner hash, and the cluster's leases of them. */
export class Runs {
  private readonly byKey = new Map<string, Run>();

  constructor(
    private readonly shared: SharedRuns | null,
    private readonly submissions: SubmissionStore,
    private readonly timeoutMs: number,
  ) {}

  find(network: string, innerHash: string): Run | undefined {
    return this.byKey.get(`${network}:${innerHash}`);
  }

  /**
   * What a request of `projectId` joining the run of `innerHash` under way here waits for (never paid
   * twice: another project's run is joined too, and `theirs`); undefined: none is.
   */
  join(network: string, innerHash: string, projectId: string | null): Pending | undefined {
    const run = this.find(network, innerHash);
    if (!run) return undefined;
    const theirs = run.projectId === projectId ? run.theirs : () => true;
    return { accepted: run.accepted, outcome: run.outcome, joined: true, theirs };
  }

  /**
   * The one place that keeps one run per transaction. A run under way here is joined (`done` at once:
   * this request's reservation is dropped). Else this request's run starts, under the transaction's
   * lease across instances (taken here, or by recovery: `lease`): its stored row is read, an outcome
   * recorded there answers it, and otherwise `own` runs it with that row (AGAIN: read it once more, a row
   * written meanwhile). `done` when it ends; it stays to be joined until its outcome and then `kept`
   * settle: a request after the answer finds it here, then in the database.
   */
  claim(network: string, innerHash: string, o: Owner): Pending {
    const running = this.join(network, innerHash, o.projectId);
    if (running) {
      o.done();
      void o.lease?.release();
      return running;
    }
    const key = `${network}:${innerHash}`;
    const run = new Run(o.projectId, async (r) => {
      try {
        const owned = () => this.owned(network, innerHash, r, o.own);
        // a lease taken already (recovery's), or one instance alone: run at once
        return o.lease || !this.shared ? await owned() : await this.exclusive(r, network, innerHash, owned);
      } catch (e) {
        return outcomeOf(e);
      } finally {
        o.done();
        await o.lease?.release();
      }
    });
    this.byKey.set(key, run);
    void run.outcome
      .then(o.kept)
      .catch(() => {})
      .finally(() => this.byKey.delete(key));
    return run;
  }

  /** The run of a transaction whose lease this instance holds: its row read, then answered or run. */
  private async owned(network: string, innerHash: string, run: Run, own: Owner["own"]): Promise<Outcome> {
    for (let again = false; ; again = true) {
      const prior = await this.submissions.byInnerHash(network, innerHash);
      const answered = this.answeredBy(run, prior);
      const outcome = answered ?? (await own(prior, run, again));
      if (outcome !== AGAIN) return outcome;
    }
  }

  /** The outcome a stored row has that stands (never paid twice: another project's too, then `foreign`). */
  private answeredBy(run: Run, prior: SubmissionRecord | null): Outcome | null {
    const answered = finalOutcome(prior);
    if (answered && prior!.projectId !== run.projectId) run.foreign = true;
    return answered;
  }

  /** How many runs of a network are under way (GET /metrics). */
  count(network: string): number {
    let n = 0;
    for (const key of this.byKey.keys()) if (key.startsWith(`${network}:`)) n++;
    return n;
  }

  /**
   * Runs `fn` (the run of `innerHash`) while holding its lease across instances; while
   * another instance holds it, its row tells the outcome, or the acceptance an asynchronous request waits for.
   */
  private async exclusive(run: Run, network: string, innerHash: string, fn: () => Promise<Outcome>): Promise<Outcome> {
    const deadline = Date.now() + this.timeoutMs;
    for (;;) {
      const held = await this.lease(network, innerHash);
      if (held) {
        try {
          return await fn();
        } finally {
          await held.release();
        }
      }
      const prior = await this.submissions.byInnerHash(network, innerHash);
      const answered = this.answeredBy(run, prior);
      if (answered) return answered;
      // another project's run there: its outcome answers this one, never its acceptance (a record not this caller's)
      if (prior && prior.projectId !== run.projectId) run.foreign = true;
      // the other instance's run was accepted by the network, or holds it for its predecessor (a pending
      // submission): an asynchronous request is answered now
      else if (prior?.status === "submitted") run.accept({ hash: prior.hash, innerHash });
      else if (prior?.held) run.accept({ hash: innerHash, innerHash, status: "pending" });
      if (Date.now() > deadline) {
        // its own record's fee-bump and status; another project's are not this caller's to be told
        const own = prior && !run.foreign ? prior : null;
        const status = own?.status === "submitted" ? "submitted" : "pending";
        const details = { hash: own?.hash ?? innerHash, reason: "pending", status };
        return outcomeOf(
          new RelayError("SUBMISSION_TIMEOUT", "another instance is still submitting this transaction", details),
        );
      }
      await Bun.sleep(POLL_MS);
    }
  }

  /**
   * Takes an inner transaction's lease, or null when another instance holds it. Renewed while held (a
   * transaction held for its predecessor may wait longer than a submission's timeout), until released.
   */
  async lease(network: string, innerHash: string): Promise<Lease | null> {
    const shared = this.shared;
    if (!shared) return { release: async () => {} };
    const lease = `inner:${network}:${innerHash}`;
    const ttl = this.timeoutMs + MARGIN_MS;
    if (!(await shared.claim(lease, ttl))) return null;
    const renew = setInterval(() => void shared.claim(lease, ttl).catch(() => {}), Math.max(ttl / 3, POLL_MS));
    return {
      release: async () => {
        clearInterval(renew);
        await shared.release(lease).catch(() => {}); // it lapses by itself otherwise
      },
    };
  }
}
