/**
 * Sending a submission: the project's approval server asked (once per submission), its place in its
 * source account's order taken (order flow: held until its predecessor is applied), then submitted;
 * what became of its sequence number is told to the account's order, and one refused as out of order
 * while a predecessor is still to come is held again and sent when it may.
 */
import { RelayError } from "../../kernel/errors.ts";
import type { Gateway, NetworkName } from "../../network/gateway.ts";
import type { Logger } from "../../kernel/log.ts";
import type { Outcome, SubmissionRecord, SubmissionStore } from "../../store/types.ts";
import type { Approvals } from "../projects/rules/approval.ts";
import type { FeePlan } from "../tx/fee-plan.ts";
import { jobFee, type Job } from "./jobs.ts";
import { type Ordering, orderResult } from "./order/ordering.ts";
import type { OrderedTx } from "./order/sequence-gate.ts";
import type { Payer } from "../projects/principal.ts";
import type { Reservation } from "./admission.ts";
import type { SubmissionStage } from "./submission.ts";

export class Sending {
  constructor(
    private readonly deps: {
      ordering: Ordering;
      submitting: () => SubmissionStage;
      submissions: SubmissionStore;
      approvals?: Approvals;
      log: Logger;
    },
  ) {}

  /** Approves, orders and submits a submission (`resume`: an earlier run's intent, sent again as it was). */
  async send(
    gw: Gateway,
    job: Job,
    plan: FeePlan,
    reservation: Reservation,
    id: string,
    resume: SubmissionRecord | null,
    fresh: boolean,
  ): Promise<Outcome> {
    // a client's transaction waits for its predecessors in its account's order (one resumed may be queued: not held)
    const ordered: OrderedTx | null =
      job.order && !resume
        ? { ...job.order, id: job.innerHash, scope: reservation.payer.scope, maxTime: job.validUntil?.maxTime ?? 0n }
        : null;
    try {
      // a new submission (or one sent again after a refusal) is put to the project's approval server once
      if (!resume) await this.approve(gw, job, plan, reservation);
    } catch (e) {
      if (job.order) this.deps.ordering.gate(gw).refusedBefore(job.order.account, job.order.seq);
      throw e;
    }
    if (ordered) await this.deps.ordering.gate(gw).enter(ordered);
    return await this.inOrder(gw, job, plan, reservation, id, resume, fresh, ordered);
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
  private async inOrder(
    gw: Gateway,
    job: Job,
    plan: FeePlan,
    reservation: Reservation,
    id: string,
    resume: SubmissionRecord | null,
    fresh: boolean,
    ordered: OrderedTx | null,
  ): Promise<Outcome> {
    for (let first = true; ; first = false) {
      let outcome: Outcome | RelayError;
      try {
        outcome = await this.deps
          .submitting()
          .submit(gw, job, plan, reservation, id, first ? resume : null, fresh && first);
      } catch (e) {
        if (!ordered || !(e instanceof RelayError)) throw e;
        outcome = e;
      }
      if (ordered) {
        const heldAgain = await this.deps.ordering.gate(gw).ended(ordered, orderResult(outcome));
        if (heldAgain) continue; // its predecessor is applied now: sent again
      }
      if (outcome instanceof RelayError) throw outcome;
      return outcome;
    }
  }
  /** The project's approval server's yes (src/features/projects/rules/approval.ts), when its policy has one; throws its no. */
  private async approve(gw: Gateway, job: Job, plan: FeePlan, reservation: Reservation): Promise<void> {
    const { payer } = reservation;
    const approval = payer.policy?.().approval;
    if (!approval || !payer.projectId || !this.deps.approvals) return;
    await this.deps.approvals.ask(approval, {
      project: payer.projectId,
      network: gw.name,
      innerHash: job.innerHash,
      source: job.about?.user ?? null,
      operations: job.about?.operations() ?? [],
      estimatedFee: jobFee(job, plan.rate).toString(),
    });
  }
}
