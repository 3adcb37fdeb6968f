/**
 * Dispatch: an attempt goes through the network's submitter with its fee source from the pool; each
 * envelope's intent is recorded before it is sent (with its attempt), the network's acceptance
 * makes the submission submitted (and tells the requests waiting for it, the asynchronous mode),
 * and the network's verdict becomes the outcome, as a value: settled (recorded by settlement),
 * rejected, expired, 504 or 503 (for the run to record). A transaction held for its predecessor is
 * written here too (`hold`).
 */
import { type RelayError, unavailable } from "../../kernel/errors.ts";
import type { NetworkName } from "../../stellar/networks.ts";
import type { Submitter } from "../../network/submitter.ts";
import type { Networks } from "../networks/networks.ts";
import type { Attempt, Sent } from "./attempt.ts";
import type { Logger } from "../../kernel/log.ts";
import type { Signed } from "../../stellar/envelope.ts";
import type { SubmissionStore } from "../../store/types.ts";
import { jobFee, type Sender } from "./jobs.ts";
import { drive } from "../tx/submit-steps.ts";
import type { Verdict } from "../../network/submit-protocol.ts";
import type { ChannelPool } from "../pool/channel-pool.ts";
import { expired, outcomeOf, submissionFailed, timedOut } from "./outcomes.ts";
import type { ParkedLeases, Settlement } from "./settlement.ts";

export interface DispatchDeps {
  networks: Networks;
  submissions: SubmissionStore;
  submissionTimeoutMs: number;
  log: Logger;
}

const min = (a: bigint, b: bigint) => (a < b ? a : b);

export class Dispatch {
  constructor(
    private readonly deps: DispatchDeps,
    private readonly settlement: Settlement,
    private readonly parked: ParkedLeases,
  ) {}

  pool(network: NetworkName): ChannelPool {
    return this.deps.networks.pool(network);
  }

  /**
   * Submits a job through the network's submitter and turns its verdict into the outcome: settled
   * (applied), SUBMISSION_FAILED (rejected, expired), 504 (not known yet: the fee source keeps its
   * hold while an envelope may be queued) or 503 (no fee source, or the network too busy to take it).
   */
  async submit(a: Attempt): Promise<Sent> {
    const { job, plan, reservation } = a;
    const gw = a.network.gateway;
    const { id, resume, fresh } = a.row;
    // the highest bid the reservation covers
    const cap = (reservation.grant - job.resourceFee) / job.feeOps;
    const parked = this.parked.take(id);
    let sender: Sender;
    try {
      sender = await job.sender(
        this.pool(gw.name),
        jobFee(job, cap),
        job.feeBump ? (resume?.envelope ?? null) : null,
        parked,
        { until: Date.now() + this.deps.submissionTimeoutMs, scope: reservation.payer.scope },
      );
    } catch (e) {
      if (parked) this.parked.putBack(id, parked);
      return { outcome: outcomeOf(e), recorded: false };
    }
    let result: Verdict | null = null;
    let recorded = 0; // intents of this submission written (or tried) by this run
    let accepting: Promise<void> | undefined; // the last acceptance's write
    try {
      const steps = this.submitter(gw.name).steps({
        innerHash: job.feeBump ? job.innerHash : undefined,
        rate: sender.resumed?.rate ?? min(plan.rate, cap),
        cap,
        replaceAfterLedgers: plan.replaceAfterLedgers,
        deadline: Date.now() + this.deps.submissionTimeoutMs,
        validUntil: job.feeBump ? job.validUntil : undefined,
        resumed: resume ? { hash: resume.hash, envelope: sender.resumed?.envelope } : undefined,
        resyncable: sender.badSeq !== undefined,
      });
      result = await drive(steps, {
        build: (rate) => sender.envelope(rate),
        record: (envelope, hash, rate) =>
          this.record(a, envelope, hash, rate, sender.channel, fresh && recorded++ === 0),
        accepted: (hash, answer) => void (accepting = this.accept(a, hash, answer)),
        resync: sender.badSeq,
        lookup: (hash) => this.settlement.found(gw, job.innerHash, hash),
      });
      // the acceptance is written before the outcome: its status event (submitted) comes first
      await accepting;
      return await this.sentOf(a, result, cap, { written: recorded > 0, resumed: Boolean(sender.resumed) });
    } finally {
      // a transaction answered 504 may still be queued: its channel keeps the hold (a fee-bump's fee) or the
      // transaction (one of its own: the next would be refused while it is queued) until the submission is resolved
      // (nothing of it was sent when no intent was written: nothing to wait for); settlement decides which
      this.settlement.endLease(id, sender, result, recorded > 0);
    }
  }
  /**
   * The network's verdict as the outcome: settled (applied), SUBMISSION_FAILED (rejected), 504 (not
   * known yet), 422 expired, or 503 (the network took none of its envelopes). `written`: this run
   * wrote an intent of it; `resumed`: it resumes an earlier run's.
   */
  private async sentOf(
    a: Attempt,
    r: Verdict,
    cap: bigint,
    { written, resumed }: { written: boolean; resumed: boolean },
  ): Promise<Sent> {
    const { job, plan, reservation } = a;
    const gw = a.network.gateway;
    const bid = () => ({ cap, cleared: gw.watcher.clearing.recent(gw.watcher.latestLedger), strategy: plan.strategy });
    const unrecorded = (e: RelayError) => ({ outcome: outcomeOf(e), recorded: false });
    switch (r.kind) {
      case "applied": {
        const outcome = await this.settlement.settle(gw.name, a.row.id, r.confirmed, reservation, a.row.fresh);
        return { outcome, recorded: true };
      }
      case "rejected":
        return unrecorded(submissionFailed(r.hash, r.resultXdr, undefined, gw.passphrase));
      case "unknown":
        return unrecorded(timedOut(r.hash, r.rate, this.deps.submissionTimeoutMs, r.reason, r.accepted, bid()));
      case "expired":
        // in no ledger up to one past its bounds: none will include it, and its hold ends with this answer
        // the bid is quoted only when a fee-bump of it was sent (by this run, or by the one it resumes)
        return unrecorded(expired(r.hash, written || resumed ? r.rate : null, r.ledger, job.validUntil!, bid()));
      case "busy":
        // the network accepted none of this request's attempts: its reservation is given back now
        await this.settlement.giveBack(reservation, a.row.id);
        return unrecorded(unavailable("the network asked to try again later", { hash: r.hash }, 5));
      default:
        return r satisfies never;
    }
  }
  /**
   * The network took a fee-bump of a run: its submission is submitted, and the run's requests are
   * told once that is written (an asynchronous answer is never ahead of a look-up).
   */
  private accept(a: Attempt, hash: string, answer: string): Promise<void> {
    const { innerHash } = a.job;
    const tell = () => a.run.accept({ hash, innerHash });
    return this.deps.submissions.recordAccepted(a.row.id, hash, answer).then(tell, (e) => {
      const { name: network } = a.network;
      this.deps.log.warn({ network, submission: a.row.id, err: String(e) }, "recording an accepted submission failed");
      tell();
    });
  }
  private submitter(network: NetworkName): Submitter {
    return this.deps.networks.get(network).submitter;
  }
  /**
   * A transaction held for its predecessor (order flow) is a submission from then: written pending, with
   * what recovery needs to send it (`held`), its reservation journaled; then its requests are told (202
   * under respond-async). Nothing of it is sent yet; `held` stays until its outcome is recorded (or its
   * run answers 504), so that recovery sends it again after a crash.
   */
  async hold(a: Attempt): Promise<void> {
    const { job, reservation } = a;
    const order = job.order!;
    const journaled = await this.deps.submissions.recordIntent(
      {
        ...this.intentOf(a),
        hash: job.innerHash,
        maxFee: reservation.grant,
        envelope: null,
        sentLedger: null,
        feeBid: null,
        channel: null,
        held: { transaction: order.transaction, account: order.account, sequence: order.seq.toString() },
      },
      reservation.credits ? reservation.grant : 0n,
      a.row.fresh,
    );
    reservation.journaled ||= journaled;
    if (reservation.user) reservation.userOnRow = true;
    a.row.fresh = false; // its row is written: the intent that sends it updates it
    a.run.accept({ hash: job.innerHash, innerHash: job.innerHash, status: "pending" });
  }
  /** The columns every intent of an attempt shares. */
  private intentOf(a: Attempt) {
    const { job, reservation } = a;
    return {
      id: a.row.id,
      network: a.network.name,
      innerHash: job.innerHash,
      caller: reservation.payer.scope,
      projectId: reservation.payer.projectId,
      endUser: job.about?.user ?? null,
      userHold: reservation.user ? { day: reservation.user.key.day, grant: reservation.user.grant } : null,
    };
  }
  /** Writes the intent (with the envelope, before it is sent) and journals the reservation once (`first`). */
  private async record(
    a: Attempt,
    envelope: Signed,
    hash: string,
    rate: bigint,
    channel: string,
    first: boolean,
  ): Promise<void> {
    const { job, reservation } = a;
    const gw = a.network.gateway;
    const journaled = await this.deps.submissions.recordIntent(
      {
        ...this.intentOf(a),
        hash,
        maxFee: jobFee(job, rate),
        envelope: envelope.xdr,
        sentLedger: gw.watcher.latestLedger,
        feeBid: rate,
        channel,
        held: null,
      },
      reservation.credits ? reservation.grant : 0n,
      first,
    );
    reservation.journaled ||= journaled;
    if (reservation.user) reservation.userOnRow = true; // its hold is the submission's now
  }
}
