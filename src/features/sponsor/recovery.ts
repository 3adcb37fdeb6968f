/**
 * Recovery: what a crash, a 504 whose client never came back, or an instance that is gone left
 * behind, resolved without a request running for it. A transaction held for its predecessor and never
 * sent is sent now (held-rows.ts), in its account's order, under its inner transaction's lease; a sent
 * submission the network applied is recorded and settled (charged); one none of whose envelopes can
 * be in a queue any more has its reservation given back (no outcome is recorded: the transaction may
 * still be sent again).
 */
import type { NetworkName } from "../../stellar/networks.ts";
import type { Logger } from "../../kernel/log.ts";
import type { SettledCredits, SubmissionStore } from "../../store/types.ts";
import type { Network, Networks } from "../networks/networks.ts";
import type { Admission } from "./admission.ts";
import type { Admitted } from "./attempt.ts";
import type { Job } from "./jobs.ts";
import { type HeldRow, heldJob, heldReservation, inAccountOrder } from "./order/held-rows.ts";
import { mayStillBeQueued } from "./outcomes.ts";
import type { Lease, Pending, Runs } from "./run.ts";
import type { Settlement } from "./settlement.ts";

/** Submissions recovery looks at in one pass (of each kind). */
const RECOVERY_BATCH = 100;

export interface RecoveryDeps {
  networks: Networks;
  submissions: SubmissionStore;
  config: { submissionTimeoutMs: number };
  log: Logger;
  projects: { settleJournaled(projectId: string, s: SettledCredits): void };
  settlement: Settlement;
  admission: Admission;
  /** The runs under way in this process, and the cluster's leases of them. */
  runs: Runs;
  /** Starts the run of a held row's transaction, holding its lease (released when the run ends). */
  start(net: Network, job: Job, admitted: Pick<Admitted, "reservation" | "plan">, lease: Lease): Pending;
}

export class Recovery {
  constructor(private readonly deps: RecoveryDeps) {}

  /** One pass over a network's held and unsettled submissions; answers what it did. */
  async run(network: NetworkName): Promise<{ settled: number; released: number; resumed: number }> {
    const { submissions, settlement, log } = this.deps;
    const net = this.deps.networks.find(network);
    const gw = net?.gateway;
    const done = { settled: 0, released: 0, resumed: 0 };
    if (!net || !gw?.watcher.latestLedger) return done;
    // held for a predecessor by an instance that is gone (a crash, a restart): sent now, in order
    for (const row of inAccountOrder(await submissions.held(network, RECOVERY_BATCH)))
      if (!this.deps.runs.find(network, row.innerHash) && (await this.resumeHeld(net, row))) done.resumed++;
    const before = new Date(Date.now() - this.deps.config.submissionTimeoutMs);
    for (const row of await submissions.unsettled(network, before, RECOVERY_BATCH)) {
      if (this.deps.runs.find(network, row.innerHash)) continue;
      try {
        if (await settlement.resolved(gw, row)) done.settled++;
        else if (!mayStillBeQueued(row, gw.watcher.latestLedger)) {
          await settlement.expire(row);
          done.released++;
        }
      } catch (e) {
        // one submission the network cannot answer for now does not hold back the others
        const err = e instanceof Error ? e.message : String(e);
        log.warn({ network, submission: row.id, err }, "recovering a submission failed; retrying later");
      }
    }
    if (done.settled || done.released || done.resumed)
      log.info({ network, ...done }, "unsettled submissions recovered");
    return done;
  }

  /**
   * Sends a held row whose instance is gone, under its inner transaction's lease: false when another
   * instance holds that (it is still holding the transaction) or it runs here already.
   */
  private async resumeHeld(net: Network, row: HeldRow): Promise<boolean> {
    try {
      const { job, floor, soroban } = heldJob(row, net.passphrase);
      const plan = await this.deps.admission.plan(net.gateway, floor, soroban);
      const lease = await this.deps.runs.lease(net.name, row.innerHash);
      if (!lease) return false;
      const reservation = heldReservation(row, net.name, this.deps.projects);
      // a run of it that started here meanwhile is joined (the lease let go): nothing more to do
      return !this.deps.start(net, job, { plan, reservation }, lease).joined;
    } catch (e) {
      const err = e instanceof Error ? e.message : String(e);
      this.deps.log.warn({ network: net.name, submission: row.id, err }, "sending a held transaction failed");
      return false;
    }
  }
}
