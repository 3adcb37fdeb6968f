/**
 * POST /v1/sponsor: decode, plan the fee, have the project's actor check the policy and reserve
 * the maximum fee, wrap in a fee-bump whose fee source is a channel account from the pool, record
 * the intent (with the credit reservation), send, wait for the ledger watcher's confirmation, and
 * settle: charge what the network charged and release the rest. The same inner transaction is
 * never paid for twice: concurrent and later requests for an inner hash already sponsored get that
 * submission's outcome (and pay nothing).
 *
 * The func+auth mode (`sponsorOperation`) runs a client's invokeHostFunction operation from a
 * channel account: simulated in enforce mode, assembled, signed by the channel with the sequence
 * number its actor gives, then the same intent / send / settle path.
 *
 * The stages are beside it: admission (fee plan, policy and reservation), sending (approval, the
 * account's order), dispatch (intent, send, acceptance), settlement (outcomes recorded and credits
 * settled, in one place) and outcomes; each takes the attempt (attempt.ts) and ends with a value.
 * This file runs them: one run per inner hash (run.ts) and the requests' answers; recovery.ts
 * resolves what a crash left (and sends what was held).
 */
import { RelayError, isRetryable, type ErrorCode } from "../../kernel/errors.ts";
import type { Gateway } from "../../network/gateway.ts";
import type { NetworkName } from "../../stellar/networks.ts";
import type { Outcome, SettledCredits, SubmissionStore } from "../../store/types.ts";
import type { Logger } from "../../kernel/log.ts";
import { decodeTransaction, sdkInner } from "../tx/decode.ts";
import { summarize, summarizeAll } from "../projects/rules/touches.ts";
import { Operation, type Transaction } from "@stellar/stellar-sdk";
import { innerRate } from "../tx/fee-bump.ts";
import { BASE_FEE } from "../../stellar/protocol.ts";
import { decodeOperation } from "../tx/invoke.ts";
import { feeBumpJob, operationJob, type Job } from "./jobs.ts";
import type { FeePlanner } from "../tx/fee-plan.ts";
import type { Network, Networks } from "../networks/networks.ts";
import type { Payer } from "../projects/principal.ts";
import type { SponsorMetrics } from "../../kernel/metrics.ts";
import { Admission } from "./admission.ts";
import { innerHashTaken } from "../../store/write-errors.ts";
import { finalOutcome, mayStillBeQueued, outcomeOf, withIdentity } from "./outcomes.ts";
import { ParkedLeases } from "./parked-leases.ts";
import { Settlement } from "./settlement.ts";
import { Dispatch } from "./dispatch.ts";
import { type Pending, Run, Runs } from "./run.ts";
import type { Admitted, Attempt } from "./attempt.ts";
import { RunLease, type SharedRuns } from "./run-lease.ts";
import { Ordering } from "./order/ordering.ts";
import { Recovery } from "./recovery.ts";
import { Sending } from "./sending.ts";
import type { UserCaps } from "../projects/rules/user-caps.ts";
import type { Approvals } from "../projects/rules/approval.ts";
import type { OrderLimits } from "./order/sequence-gate.ts";

export { outcomeOf } from "./outcomes.ts";
export type { Accepted, Pending } from "./run.ts";

export interface SponsorConfig {
  /** Highest inclusion rate (stroops per operation) the relay bids when the network asks for more. */
  maxFeeRate: bigint;
  submissionTimeoutMs: number;
  /** Order flow: how long and how many transactions are held for their predecessors. */
  order: OrderLimits;
}

export interface SponsorDeps {
  networks: Networks;
  submissions: SubmissionStore;
  config: SponsorConfig;
  log: Logger;
  /** The fee planner (shared with estimate). */
  fees: FeePlanner;
  /** The projects' actors: a settlement of another project (a resumed submission of that project) is applied to its. */
  projects: { settleJournaled(projectId: string, s: SettledCredits): void };
  /** Outcomes and fees paid, for GET /metrics. */
  metrics?: SponsorMetrics;
  /** End users' days (the policy's perUser caps). */
  userCaps?: UserCaps;
  /** The projects' approval servers (a policy's approval). */
  approvals?: Approvals;
  /** Several instances: one runs an inner transaction at a time (a lease), the others wait for its outcome. */
  shared?: SharedRuns | null;
}

/** The relay's own refusals of a decoded transaction: kept as rejected submissions. */
const REFUSALS = new Set<ErrorCode>(["POLICY_VIOLATION", "INSUFFICIENT_CREDITS", "FORBIDDEN", "VALIDATION_ERROR"]);

const max = (...xs: bigint[]) => xs.reduce((a, b) => (a > b ? a : b));

export class SponsorService {
  private readonly runs = new Runs();
  private readonly admission: Admission;
  private readonly settlement: Settlement;
  private readonly ordering: Ordering;
  private readonly sending: Sending;
  private readonly lease: RunLease;
  private readonly recovery: Recovery;

  constructor(private readonly deps: SponsorDeps) {
    this.ordering = new Ordering(deps.config.order, deps.log);
    const parked = new ParkedLeases();
    this.admission = new Admission({
      fees: deps.fees,
      maxFeeRate: deps.config.maxFeeRate,
      userCaps: deps.userCaps,
      submissions: deps.submissions,
    });
    this.settlement = new Settlement({ ...deps, shared: Boolean(deps.shared) }, parked);
    const dispatch = new Dispatch(
      { ...deps, submissionTimeoutMs: deps.config.submissionTimeoutMs },
      this.settlement,
      parked,
    );
    this.sending = new Sending({ ...deps, ordering: this.ordering, dispatch });
    this.lease = new RunLease(deps.shared ?? null, deps.submissions, deps.config.submissionTimeoutMs);
    this.recovery = new Recovery({
      ...deps,
      settlement: this.settlement,
      admission: this.admission,
      lease: this.lease,
      running: (network, innerHash) => this.runs.find(network, innerHash) !== undefined,
      start: (net, job, admitted, lease) => void this.start(net, job, admitted, lease),
    });
  }

  /**
   * Sponsors a client transaction for `payer`: what the request waits for, from the run of its
   * inner transaction (started here, or joined when one is under way in this process).
   */
  async sponsor(transaction: string, network: NetworkName, payer: Payer): Promise<Pending> {
    let innerHash: string | undefined;
    let order: { gw: Gateway; account: string; seq: bigint } | null = null;
    try {
      const net = this.deps.networks.get(network);
      const decoded = decodeTransaction(transaction, net.passphrase, { signatures: true, sorobanData: true });
      innerHash = decoded.innerHash;
      const running = this.runs.find(network, innerHash);
      if (running) return this.answer(network, running, innerHash, true);
      order = decoded.order && { gw: net.gateway, ...decoded.order };
      const about = {
        user: decoded.source,
        operations: () => summarizeAll(sdkInner(decoded, net.passphrase).operations),
      };
      const job: Job = { ...feeBumpJob(decoded, net.passphrase), about };
      const admitted = await this.admission.reserve(net.gateway, job, payer, {
        floor: max(BASE_FEE, innerRate(decoded)),
        soroban: decoded.isSoroban,
        operationTypes: decoded.operationTypes,
        contractIds: decoded.contractIds,
        ...about,
      });
      return this.answer(network, this.start(net, job, admitted), innerHash);
    } catch (e) {
      // refused by the relay before it was sent: the transactions held after it in its account's order learn it
      if (order) this.ordering.gate(order.gw).refusedBefore(order.account, order.seq);
      const outcome = await this.refused(network, innerHash, payer, outcomeOf(e));
      return this.answer(network, Run.ended(outcome), innerHash);
    }
  }
  /**
   * Sponsors a client's invokeHostFunction operation (func+auth mode): a channel account is the
   * transaction's source; the relay simulates it (enforce mode, so the client's signed entries are
   * checked), reserves the fee, assembles, signs and submits.
   */
  async sponsorOperation(operation: string, network: NetworkName, payer: Payer): Promise<Pending> {
    let innerHash: string | undefined;
    try {
      const net = this.deps.networks.get(network);
      const pool = this.deps.networks.pool(network);
      const op = decodeOperation(operation, (a) => pool.isRelayAccount(a));
      innerHash = op.hash;
      // answered or running already: its nonce is spent (or about to be), so it would not simulate again
      const running = this.runs.find(network, op.hash);
      if (running) return this.answer(network, running, innerHash, true);
      const prior = await this.deps.submissions.byInnerHash(network, op.hash);
      const answered = finalOutcome(prior) ?? (prior ? await this.settlement.resolved(net.gateway, prior) : null);
      if (answered) return this.answer(network, Run.ended(answered), innerHash);
      // a run that started meanwhile in this process is joined; an earlier run's transaction may still be
      // queued: another one would spend the nonce twice (and pay for a failure)
      const started = this.runs.find(network, op.hash);
      if (started) return this.answer(network, started, innerHash, true);
      if (prior && mayStillBeQueued(prior, net.gateway.watcher.latestLedger)) {
        throw new RelayError(
          "SUBMISSION_TIMEOUT",
          "an earlier submission of this operation may still be in the network's queue; retry to get its outcome",
          { hash: prior.hash, reason: "pending" },
        );
      }
      const sim = await this.admission.simulateOperation(net.gateway, pool, op);
      const summary = () => summarize(Operation.fromXDRObject(op.operation) as Transaction["operations"][number]);
      const policy = payer.policy?.();
      // who the end user is costs a simulation: asked only by a policy that needs it
      const user = policy?.perUser || policy?.approval ? await this.admission.endUser(net.gateway, pool, op) : null;
      const about = { user, operations: () => [summary()] };
      const job: Job = { ...operationJob(op, sim, net.passphrase), about };
      const admitted = await this.admission.reserve(net.gateway, job, payer, {
        floor: BASE_FEE,
        soroban: true,
        operationTypes: ["invokeHostFunction"],
        contractIds: op.contractIds,
        ...about,
      });
      return this.answer(network, this.start(net, job, admitted), innerHash);
    } catch (e) {
      return this.answer(network, Run.ended(outcomeOf(e)), innerHash);
    }
  }
  /** What a crash or a gone instance left: recovery.ts. */
  recover(network: NetworkName): Promise<{ settled: number; released: number; resumed: number }> {
    return this.recovery.run(network);
  }
  /** What a transaction held for its predecessor waits for (null: not held by this instance). */
  waitingFor(network: NetworkName, innerHash: string) {
    return this.ordering.waiting(network, innerHash);
  }
  /** Stops holding transactions (shutdown): those held are answered 503, nothing of them sent. */
  stop(): void {
    this.ordering.stop();
  }
  /** Resolves once the outcomes answered so far are written (before shutdown, or a read of the balances). */
  written(): Promise<void> {
    return this.settlement.written();
  }

  /** Submissions this process is sending or waiting on for a network (one per inner transaction). */
  pending(network: string): number {
    return this.runs.count(network);
  }
  /**
   * A transaction refused by the relay's own rules before its reservation (its inner hash known) is
   * kept as a rejected submission (settlement.ts), unless another request of it is under way here.
   */
  private async refused(
    network: NetworkName,
    innerHash: string | undefined,
    payer: Payer,
    outcome: Outcome,
  ): Promise<Outcome> {
    if (!innerHash || outcome.kind !== "failure" || !REFUSALS.has(outcome.error.code)) return outcome;
    if (this.runs.find(network, innerHash)) return outcome; // another request is sending it: its row
    return await this.settlement.refused(network, innerHash, payer, outcome);
  }

  /** A request's answer: the run's acceptance, and its outcome reported to the metrics, with its inner hash. */
  private answer(network: NetworkName, run: Pending, innerHash?: string, joined = run.joined): Pending {
    const outcome = run.outcome.then((o) => {
      this.deps.metrics?.sponsorOutcome(network, o);
      return innerHash ? withIdentity(o, innerHash) : o;
    });
    return { accepted: run.accepted, outcome, joined };
  }

  /**
   * Starts the run of an admitted transaction, or joins the one that started meanwhile in this
   * process (which pays for it: this request's reservation is dropped).
   */
  private start(
    network: Network,
    job: Job,
    admitted: Pick<Admitted, "reservation" | "plan">,
    claimed?: { release(): Promise<void> },
  ): Pending {
    const running = this.runs.find(network.name, job.innerHash);
    if (running) {
      this.settlement.finish(admitted.reservation);
      return { accepted: running.accepted, outcome: running.outcome, joined: true };
    }
    const { reservation, plan } = admitted;
    return this.runs.start(
      network.name,
      job.innerHash,
      async (run) => {
        try {
          const attempt = { network, run, job, plan, reservation };
          return claimed ? await this.once(attempt) : await this.lease.exclusive(attempt, () => this.once(attempt));
        } catch (e) {
          return outcomeOf(e);
        } finally {
          this.settlement.finish(reservation);
          await claimed?.release();
        }
      },
      // joined until its outcome is written: a request after the answer finds it here, then in the database
      () => reservation.writing ?? Promise.resolve(),
    );
  }

  /**
   * One submission per inner hash: reuse a recorded outcome, settle one the network applied, or
   * submit (a recorded intent resumes: its last envelope is sent again first).
   */
  private async once(a: Admitted, again = false): Promise<Outcome> {
    const gw = a.network.gateway;
    const { job, reservation } = a;
    const prior = await this.deps.submissions.byInnerHash(gw.name, job.innerHash);
    const answered = finalOutcome(prior);
    if (answered) return answered;
    // a submission's record never moves to another project: each project's look-ups stay its own
    if (prior && prior.projectId !== reservation.payer.projectId)
      throw new RelayError(
        "FORBIDDEN",
        "this transaction's submission belongs to another project (or the anonymous relay), which refused it or " +
          "has not settled it: it is not sent again through this one",
        { reason: "another_project" },
      );
    // an earlier run (with no outcome, or one that does not stand) may have been applied since (one held
    // and never sent can be in no ledger through the relay)
    if (prior && !(prior.held && !prior.envelope)) {
      const outcome = await this.settlement.resolved(gw, prior, reservation);
      if (outcome) return outcome;
    }
    const id = prior?.id ?? crypto.randomUUID();
    // its last envelope may still be queued: it is sent again first, and errors are checked against the network
    const resume = prior && !prior.outcome && !prior.releasedAt && prior.envelope ? prior : null;
    const attempt = { ...a, row: { id, resume, fresh: prior === null } };
    try {
      const sent = await this.sending.send(attempt);
      return sent.recorded ? sent.outcome : await this.close(attempt, prior === null, sent.outcome);
    } catch (e) {
      // a row of this inner hash written meanwhile (a refusal, by another request or instance): resume it
      if (prior === null && !again && innerHashTaken(e)) return await this.once(a, true);
      throw e;
    }
  }

  /**
   * Records an outcome the send ended with and settlement has not recorded: a refusal before anything
   * was written (`fresh`, and still no row) is kept as a rejected submission; a failure that stands (not
   * worth retrying) is recorded and its reservation settled; a retryable one leaves the intent for a retry
   * or recovery (the reservation stays journaled), a held one answered 504 no longer held.
   */
  private async close(a: Attempt, fresh: boolean, o: Outcome): Promise<Outcome> {
    const { network, job, reservation } = a;
    if (fresh && !(await this.deps.submissions.byInnerHash(network.name, job.innerHash)))
      return await this.settlement.refused(network.name, job.innerHash, reservation.payer, o);
    if (o.kind === "success" || !isRetryable(o.error.code))
      await this.settlement.reject(network.name, reservation, a.row.id, o);
    // a held one answered 504 is owed no more than any submission answered so: recovery resolves it as one
    else if (o.error.code === "SUBMISSION_TIMEOUT" && job.order) await this.deps.submissions.clearHeld(a.row.id);
    return o;
  }
}
