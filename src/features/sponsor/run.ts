/**
 * One run per transaction in this process: a single object per (network, inner hash) that every
 * request for it shares (sync, async, an idempotent retry, a held transaction of order flow). It
 * ends with the outcome; before that, the network's acceptance of a fee-bump of it is told once
 * (the asynchronous answer). Across processes the database row and the cluster's lease are the
 * truth (sponsor.service.ts); this is the rule inside one.
 */
import type { Outcome } from "../../store/types.ts";
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
}

export class Run implements Pending {
  readonly accepted: Promise<Accepted>;
  readonly outcome: Promise<Outcome>;
  private tell: (a: Accepted) => void = () => {};
  private told = false;

  constructor(body: (run: Run) => Promise<Outcome>) {
    this.accepted = new Promise((resolve) => (this.tell = resolve));
    this.outcome = body(this);
  }

  /** A request answered without a run (refused before one, or an outcome already recorded). */
  static ended(outcome: Outcome): Pending {
    return { accepted: new Promise(() => {}), outcome: Promise.resolve(outcome) };
  }

  /** The network accepted it: told once, to every request of the run (those joining later at once). */
  accept(a: Accepted): void {
    if (this.told) return;
    this.told = true;
    this.tell(a);
  }
}

/** The runs of this process, by network and inner hash. */
export class Runs {
  private readonly byKey = new Map<string, Run>();

  find(network: string, innerHash: string): Run | undefined {
    return this.byKey.get(`${network}:${innerHash}`);
  }

  /**
   * Starts the run of a transaction (the caller checked `find` first). It stays to be joined until
   * its outcome and then `kept` settle: a request after the answer finds it here, then in the database.
   */
  start(network: string, innerHash: string, body: (run: Run) => Promise<Outcome>, kept: () => Promise<unknown>): Run {
    const key = `${network}:${innerHash}`;
    const run = new Run(body);
    this.byKey.set(key, run);
    void run.outcome
      .then(kept)
      .catch(() => {})
      .finally(() => this.byKey.delete(key));
    return run;
  }

  /** How many runs of a network are under way (GET /metrics). */
  count(network: string): number {
    let n = 0;
    for (const key of this.byKey.keys()) if (key.startsWith(`${network}:`)) n++;
    return n;
  }
}
