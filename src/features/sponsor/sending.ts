/**
 * Sending an attempt: the project's approval server asked (once per submission), its place in its
 * source account's order taken (order flow: held until its predecessor is applied), then dispatched;
 * what became of its sequence number is told to the account's order, and one refused as out of order
 * while a predecessor is still to come is held again and sent when it may. Ends with a value (`Sent`):
 * a refusal of the approval server or of the account's order is an outcome like the network's.
 */
import type { Approvals } from "../projects/rules/approval.ts";
import { jobFee } from "./jobs.ts";
import type { Ordering } from "./order/ordering.ts";
import type { OrderedTx } from "./order/sequence-gate.ts";
import type { Attempt, Sent } from "./attempt.ts";
import type { Dispatch } from "./dispatch.ts";
import { outcomeOf } from "./outcomes.ts";
import type { Settlement } from "./settlement.ts";

export class Sending {
  constructor(
    private readonly deps: {
      ordering: Ordering;
      dispatch: Dispatch;
      /** Ends what sending took: an ordered transaction's slot in its account's order. */
      settlement: Pick<Settlement, "endOrder" | "refusedInOrder">;
      approvals?: Approvals;
    },
  ) {}

  /** Approves, orders and dispatches an attempt (`row.resume`: an earlier run's intent, sent again as it was). */
  async send(a: Attempt): Promise<Sent> {
    const { job, reservation } = a;
    // a client's transaction waits for its predecessors in its account's order (one resumed may be queued: not held)
    const ordered: OrderedTx | null =
      job.order && !a.row.resume
        ? { ...job.order, id: job.innerHash, scope: reservation.payer.scope, maxTime: job.validUntil?.maxTime ?? 0n }
        : null;
    // a new submission (or one sent again after a refusal) is put to the project's approval server once
    const ask = a.row.resume ? null : this.approval(a);
    const refused = ask ? await this.approved(ask) : null;
    if (refused) {
      if (job.order) this.deps.settlement.refusedInOrder(a.network.name, job.order);
      return { outcome: refused, recorded: false };
    }
    // held: written as a pending submission first (sent after a crash; 202 at once under respond-async)
    if (ordered) {
      const gate = this.deps.ordering.gate(a.network.gateway);
      const never = gate.passesAlone(ordered) ? null : await gate.enter(ordered, () => this.deps.dispatch.hold(a));
      if (never) return { outcome: outcomeOf(never), recorded: false }; // a gap, a rejected predecessor, 429
    }
    return await this.inOrder(a, ordered);
  }

  /**
   * Dispatches, and tells the account's order what became of the transaction's sequence number. One
   * refused as out of order while a predecessor is still to come is held again, and sent when it may.
   */
  private async inOrder(a: Attempt, order: OrderedTx | null): Promise<Sent> {
    const { resume, fresh } = a.row;
    for (let first = true; ; first = false) {
      const row = { ...a.row, resume: first ? resume : null, fresh: fresh && first };
      const sent = await this.deps.dispatch.submit({ ...a, row });
      if (!order) return sent;
      const after = await this.deps.settlement.endOrder(a.network, order, sent.outcome, () =>
        this.deps.dispatch.hold(a),
      );
      if (after === "stands") return sent;
      if (after !== "again") return { outcome: outcomeOf(after), recorded: false }; // never its turn again: a gap, 429
      // its predecessor is applied now: sent again
    }
  }
  /**
   * The attempt's question to its project's approval server (src/features/projects/rules/approval.ts);
   * null when the project asks none (known at once: no promise for the usual case).
   */
  private approval({ network, job, plan, reservation: { payer } }: Attempt): (() => Promise<unknown>) | null {
    const approval = payer.policy?.().approval;
    const { approvals } = this.deps;
    const project = payer.projectId;
    if (!approval || !project || !approvals) return null;
    return () =>
      approvals.ask(approval, {
        project,
        network: network.name,
        innerHash: job.innerHash,
        source: job.about?.user ?? null,
        operations: job.about?.operations() ?? [],
        estimatedFee: jobFee(job, plan.rate).toString(),
      });
  }

  /** The approval server's no as an outcome; null: yes. */
  private async approved(ask: () => Promise<unknown>) {
    try {
      await ask();
      return null;
    } catch (e) {
      return outcomeOf(e);
    }
  }
}
