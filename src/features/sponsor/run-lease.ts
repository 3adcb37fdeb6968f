/**
 * One run per transaction across instances: the instance that holds the inner transaction's lease
 * (Redis) runs it; a request through another waits for that run's recorded outcome (the database
 * row), is answered 202 when that run's submission is accepted, and runs it itself if the lease
 * frees without an outcome. 504 with the hash if neither comes in time.
 */
import { RelayError } from "../../kernel/errors.ts";
import type { Outcome, SubmissionStore } from "../../store/types.ts";
import type { Admitted } from "./attempt.ts";
import { finalOutcome } from "./outcomes.ts";

/** The coordination of several instances, as far as runs need it. */
export interface SharedRuns {
  claim(name: string, ttlMs: number): Promise<boolean>;
  release(name: string): Promise<void>;
}

/** How often a request waiting on another instance's run checks for its outcome. */
const POLL_MS = 100;
/** An inner transaction's lease outlives a submission's timeout by this much. */
const MARGIN_MS = 5_000;

export class RunLease {
  constructor(
    private readonly shared: SharedRuns | null,
    private readonly submissions: SubmissionStore,
    private readonly timeoutMs: number,
  ) {}

  /** Runs `fn` while holding the attempt's lease (one instance alone: at once). */
  async exclusive(a: Admitted, fn: () => Promise<Outcome>): Promise<Outcome> {
    if (!this.shared) return await fn();
    const { name: network } = a.network;
    const innerHash = a.job.innerHash;
    const deadline = Date.now() + this.timeoutMs;
    for (;;) {
      const held = await this.claim(network, innerHash);
      if (held) {
        try {
          return await fn();
        } finally {
          await held.release();
        }
      }
      const prior = await this.submissions.byInnerHash(network, innerHash);
      const answered = finalOutcome(prior);
      if (answered) return answered;
      // the other instance's run was accepted by the network, or holds it for its predecessor (a pending
      // submission): an asynchronous request is answered now
      if (prior?.status === "submitted") a.run.accept({ hash: prior.hash, innerHash });
      else if (prior?.held) a.run.accept({ hash: innerHash, innerHash, status: "pending" });
      if (Date.now() > deadline)
        throw new RelayError("SUBMISSION_TIMEOUT", "another instance is still submitting this transaction", {
          hash: prior?.hash ?? innerHash,
          reason: "pending",
        });
      await Bun.sleep(POLL_MS);
    }
  }

  /**
   * Takes an inner transaction's lease, or null when another instance holds it. Renewed while held (a
   * transaction held for its predecessor may wait longer than a submission's timeout), until released.
   */
  async claim(network: string, innerHash: string): Promise<{ release(): Promise<void> } | null> {
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
