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
    const lease = `inner:${network}:${innerHash}`;
    // (a transaction held for its predecessor may outlive its lease: a copy of it sent through another
    // instance meanwhile can then run there too; the network includes one, and one is charged)
    const deadline = Date.now() + this.timeoutMs;
    for (;;) {
      if (await this.shared.claim(lease, this.timeoutMs + MARGIN_MS)) {
        try {
          return await fn();
        } finally {
          await this.shared.release(lease).catch(() => {}); // it lapses by itself otherwise
        }
      }
      const prior = await this.submissions.byInnerHash(network, innerHash);
      const answered = finalOutcome(prior);
      if (answered) return answered;
      // the other instance's run was accepted by the network: an asynchronous request is answered now
      if (prior?.status === "submitted") a.run.accept({ hash: prior.hash, innerHash });
      if (Date.now() > deadline)
        throw new RelayError("SUBMISSION_TIMEOUT", "another instance is still submitting this transaction", {
          hash: prior?.hash ?? innerHash,
          reason: "pending",
        });
      await Bun.sleep(POLL_MS);
    }
  }
}
