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
 * number its actor gives. The two modes differ only in their intake (intake.ts); then one pipeline.
 *
 * The stages are beside it: intake (the job), admission (fee plan, policy and reservation),
 * sending (approval, the account's order), dispatch (intent, send, acceptance), settlement
 * (outcomes recorded and credits settled, in one place) and outcomes; each ends with a value. This
 * file runs them: one run per inner hash (run.ts) and the requests' answers; recovery.ts resolves
 * what a crash left (and sends what was held).
 */
import { RelayError, type ErrorCode } from "../../kernel/errors.ts";
import type { NetworkName } from "../../stellar/networks.ts";
import type { Outcome, SettledCredits, SubmissionRecord, SubmissionStore } from "../../store/types.ts";
import type { Logger } from "../../kernel/log.ts";
import type { Job } from "./jobs.ts";
import type { FeePlanner } from "../tx/fee-plan.ts";
import type { Network, Networks } from "../networks/networks.ts";
import type { Payer } from "../projects/principal.ts";
import type { SponsorMetrics } from "../../kernel/metrics.ts";
import { Admission } from "./admission.ts";
import { innerHashTaken } from "../../store/write-errors.ts";
import { outcomeOf, withIdentity } from "./outcomes.ts";
import { ParkedLeases, Settlement } from "./settlement.ts";
import { Dispatch } from "./dispatch.ts";
import { AGAIN, type Lease, type Owner, type Pending, Run, Runs, type SharedRuns } from "./run.ts";
import type { Admitted } from "./attempt.ts";
import { Ordering } from "./order/ordering.ts";
import { Recovery } from "./recovery.ts";
import { type Intake, Intakes, type Taken } from "./intake.ts";
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

export class SponsorService {
  private readonly runs: Runs;
  private readonly admission: Admission;
  private readonly settlement: Settlement;
  private readonly ordering: Ordering;
  private readonly sending: Sending;
  private readonly recovery: Recovery;
  private readonly intake: Intakes;

  constructor(private readonly deps: SponsorDeps) {
    this.ordering = new Ordering(deps.config.order, deps.log);
    this.runs = new Runs(deps.shared ?? null, deps.submissions, deps.config.submissionTimeoutMs);
    const parked = new ParkedLeases();
    this.admission = new Admission({
      fees: deps.fees,
      maxFeeRate: deps.config.maxFeeRate,
      userCaps: deps.userCaps,
      submissions: deps.submissions,
    });
    this.settlement = new Settlement({ ...deps, shared: Boolean(deps.shared), ordering: this.ordering }, parked);
    const dispatch = new Dispatch(
      { ...deps, submissionTimeoutMs: deps.config.submissionTimeoutMs },
      this.settlement,
      parked,
    );
    this.sending = new Sending({ ...deps, ordering: this.ordering, dispatch, settlement: this.settlement });
    this.intake = new Intakes({ ...deps, runs: this.runs, admission: this.admission, settlement: this.settlement });
    this.recovery = new Recovery({
      ...deps,
      settlement: this.settlement,
      admission: this.admission,
      runs: this.runs,
      start: (net, job, admitted, lease) => this.start(net, job, admitted, lease),
    });
  }

  /**
   * Sponsors a client transaction for `payer`: what the request waits for, from the run of its
   * inner transaction (started here, or joined when one is under way in this process).
   */
  sponsor(transaction: string, network: NetworkName, payer: Payer): Promise<Pending> {
    return this.pipeline(network, payer, this.intake.transaction(transaction, network));
  }
  /**
   * Sponsors a client's invokeHostFunction operation (func+auth mode): a channel account is the
   * transaction's source; the relay simulates it (enforce mode, so the client's signed entries are
   * checked), reserves the fee, assembles, signs and submits.
   */
  sponsorOperation(operation: string, network: NetworkName, payer: Payer): Promise<Pending> {
    return this.pipeline(network, payer, this.intake.operation(operation, network));
  }

  /**
   * The path every sponsorship takes, whatever its job: intake (decoded, its inner hash known), its run
   * (`runOf`), the answer. Refused before its run: the outcome is the refusal, kept as a rejected submission.
   */
  private async pipeline(network: NetworkName, payer: Payer, intake: Intake): Promise<Pending> {
    if ("refused" in intake) return this.answer(network, Run.ended(intake.refused));
    const run = await this.runOf(intake, payer).catch((e: unknown) => ({ refused: outcomeOf(e) }));
    if ("refused" in run) return await this.refused(network, intake, payer, run.refused);
    return this.answer(network, run, intake.innerHash);
  }

  /**
   * A taken transaction's run: the one under way here joined (before its job is prepared: a duplicate
   * pays for no simulation or reservation), else its job prepared, admission (policy, caps,
   * reservation), and its run claimed; or the refusal that ended it.
   */
  private async runOf(intake: Taken, payer: Payer): Promise<Pending | { refused: Outcome }> {
    const running = this.runs.join(intake.net.name, intake.innerHash, payer.projectId);
    if (running) return running;
    const preparing = this.intake.prepare(intake, payer);
    const prepared = preparing instanceof Promise ? await preparing : preparing;
    if (!("job" in prepared)) return prepared;
    const admitted = await this.admission.reserve(intake.net.gateway, prepared.job, payer, prepared.wanted);
    return "refused" in admitted ? admitted : this.start(intake.net, prepared.job, admitted);
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
   * A request refused before its run, answered with its refusal: the transactions held after it in its
   * account's order learn it, and a refusal by the relay's own rules is kept as a rejected submission
   * (settlement.ts) when its intake keeps refusals, unless another request of it is under way here.
   */
  private async refused(network: NetworkName, taken: Taken, payer: Payer, o: Outcome): Promise<Pending> {
    const { order, innerHash } = taken;
    if (order) this.settlement.refusedInOrder(network, order);
    const kept =
      taken.refusalKept && o.kind === "failure" && REFUSALS.has(o.error.code) && !this.runs.find(network, innerHash);
    if (kept) await this.settlement.refused(network, innerHash, payer, o);
    return this.answer(network, Run.ended(o), innerHash);
  }

  /** A request's answer: the run's acceptance, and its outcome reported to the metrics, with its inner hash. */
  private answer(network: NetworkName, run: Pending, innerHash?: string): Pending {
    const outcome = run.outcome.then((o) => {
      this.deps.metrics?.sponsorOutcome(network, o);
      return innerHash ? withIdentity(o, innerHash) : o;
    });
    return { accepted: run.accepted, outcome, joined: run.joined, theirs: run.theirs };
  }

  /**
   * The run of an admitted transaction, claimed (run.ts): started here, or the one that started
   * meanwhile in this process joined (which pays for it: this request's reservation is dropped).
   */
  private start(network: Network, job: Job, admitted: Pick<Admitted, "reservation" | "plan">, lease?: Lease): Pending {
    const { reservation, plan } = admitted;
    const owner: Owner = {
      own: (prior, run, again) => this.once({ network, run, job, plan, reservation }, prior, again),
      done: () => this.settlement.finish(reservation),
      // joined until its outcome is written: a request after the answer finds it here, then in the database
      kept: () => reservation.writing ?? Promise.resolve(),
      lease,
      projectId: reservation.payer.projectId,
    };
    return this.runs.claim(network.name, job.innerHash, owner);
  }

  /**
   * The run of a transaction whose stored row has no outcome that stands (`prior`, or none): settle one
   * the network applied, or submit (a recorded intent resumes: its last envelope is sent again first).
   */
  private async once(a: Admitted, prior: SubmissionRecord | null, again: boolean): Promise<Outcome | typeof AGAIN> {
    const gw = a.network.gateway;
    const { reservation } = a;
    // a submission's record never moves to another project: each project's look-ups stay its own
    if (prior && prior.projectId !== reservation.payer.projectId) {
      const another = new RelayError(
        "FORBIDDEN",
        "this transaction's submission belongs to another project (or the anonymous relay), which refused it or " +
          "has not settled it: it is not sent again through this one",
        { reason: "another_project" },
      );
      return outcomeOf(another);
    }
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
      return sent.recorded ? sent.outcome : await this.settlement.close(attempt, prior === null, sent.outcome);
    } catch (e) {
      // a row of this inner hash written meanwhile (a refusal, by another request or instance): resume it
      if (prior === null && !again && innerHashTaken(e)) return AGAIN;
      throw e;
    }
  }
}
