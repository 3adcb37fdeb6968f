/**
 * Sending a submission: the project's approval server asked (once per submission), its place in its
 * source account's order taken (order flow: held until its predecessor is applied), then submitted;
 * what became of its sequence number is told to the account's order, and one refused as out of order
 * while a predecessor is still to come is held again and sent when it may.
 */
import { RelayError } from "../../kernel/errors.ts";
import type { NetworkName } from "../../stellar/networks.ts";
import type { Logger } from "../../kernel/log.ts";
import type { Outcome, SubmissionStore } from "../../store/types.ts";
import type { Approvals } from "../projects/rules/approval.ts";
import { jobFee } from "./jobs.ts";
import { type Ordering, orderResult } from "./order/ordering.ts";
import type { OrderedTx } from "./order/sequence-gate.ts";
import type { Payer } from "../projects/principal.ts";
import type { Attempt } from "./attempt.ts";
import type { SubmissionStage } from "./submission.ts";

export class Sending {
  constructor(
    private readonly deps: {
      ordering: Ordering;
      submitting: SubmissionStage;
      submissions: SubmissionStore;
      approvals?: Approvals;
      log: Logger;
    },
  ) {}

  /** Approves, orders and submits an attempt (`submission.resume`: an earlier run's intent, sent again as it was). */
  async send(a: Attempt): Promise<Outcome> {
    const { job, reservation } = a;
    const gw = a.network.gateway;
    // a client's transaction waits for its predecessors in its account's order (one resumed may be queued: not held)
    const ordered: OrderedTx | null =
      job.order && !a.submission.resume
        ? { ...job.order, id: job.innerHash, scope: reservation.payer.scope, maxTime: job.validUntil?.maxTime ?? 0n }
        : null;
    try {
      // a new submission (or one sent again after a refusal) is put to the project's approval server once
      if (!a.submission.resume) await this.approve(a);
    } catch (e) {
      if (job.order) this.deps.ordering.gate(gw).refusedBefore(job.order.account, job.order.seq);
      throw e;
    }
    // held: written as a pending submission first (sent after a crash; 202 at once under respond-async)
    if (ordered) await this.deps.ordering.gate(gw).enter(ordered, () => this.deps.submitting.hold(a));
    return await this.inOrder(a, ordered);
  }

  /** A submission refused before anything of it was sent, kept as a rejected submission (to be looked up). */
  async keepRefused(network: NetworkName, innerHash: string, payer: Payer, outcome: Outcome): Promise<Outcome> {
    const { scope: caller, projectId } = payer;
    await this.deps.submissions
      .recordRefusal({ network, innerHash, caller, projectId, outcome })
      .catch((e) => this.deps.log.warn({ network, innerHash, err: String(e) }, "recording a refusal failed"));
    return outcome;
  }

  /**
   * Submits, and tells the account's order what became of the transaction's sequence number. One
   * refused as out of order while a predecessor is still to come is held again, and sent when it may.
   */
  private async inOrder(a: Attempt, ordered: OrderedTx | null): Promise<Outcome> {
    const { resume, fresh } = a.submission;
    for (let first = true; ; first = false) {
      let outcome: Outcome | RelayError;
      try {
        const submission = { ...a.submission, resume: first ? resume : null, fresh: fresh && first };
        outcome = await this.deps.submitting.submit({ ...a, submission });
      } catch (e) {
        if (!ordered || !(e instanceof RelayError)) throw e;
        outcome = e;
      }
      if (ordered) {
        const gate = this.deps.ordering.gate(a.network.gateway);
        const heldAgain = await gate.ended(ordered, orderResult(outcome), () => this.deps.submitting.hold(a));
        if (heldAgain) continue; // its predecessor is applied now: sent again
      }
      if (outcome instanceof RelayError) throw outcome;
      return outcome;
    }
  }
  /** The project's approval server's yes (src/features/projects/rules/approval.ts), when its policy has one; throws its no. */
  private async approve({ network, job, plan, reservation }: Attempt): Promise<void> {
    const { payer } = reservation;
    const approval = payer.policy?.().approval;
    if (!approval || !payer.projectId || !this.deps.approvals) return;
    await this.deps.approvals.ask(approval, {
      project: payer.projectId,
      network: network.name,
      innerHash: job.innerHash,
      source: job.about?.user ?? null,
      operations: job.about?.operations() ?? [],
      estimatedFee: jobFee(job, plan.rate).toString(),
    });
  }
}
