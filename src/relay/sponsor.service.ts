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
 */
import { Account, TransactionBuilder } from "@stellar/stellar-sdk";
import { RelayError, isRetryable, unavailable } from "../errors.ts";
import type { Gateway, NetworkName } from "../network/gateway.ts";
import type { Submitter } from "../network/submitter.ts";
import type { Confirmed } from "../network/ledger-watcher.ts";
import type { Outcome, SettledCredits, SubmissionRecord, SubmissionStore } from "../store/types.ts";
import type { Logger } from "../log.ts";
import { decodeTransaction } from "./decode.ts";
import { innerRate } from "./fee-bump.ts";
import { BASE_FEE } from "../stellar/protocol.ts";
import { decodeOperation, type DecodedOperation } from "./invoke.ts";
import { feeBumpJob, jobFee, operationJob, type Job, type Sender } from "./jobs.ts";
import type { FeePlan, FeePlanner } from "./fee-plan.ts";
import { describeEvents } from "./simulate.service.ts";
import type { ChannelPool, FeeLease } from "./pool/channel-pool.ts";
import { submissionFailed } from "./outcome.ts";
import type { Payer } from "./project-actors.ts";
import type { SponsorMetrics } from "../metrics.ts";
import type { Signed } from "../stellar/envelope.ts";

export interface SponsorConfig {
  /** Highest inclusion rate (stroops per operation) the relay bids when the network asks for more. */
  maxFeeRate: bigint;
  submissionTimeoutMs: number;
}

export interface SponsorDeps {
  gateways: Partial<Record<NetworkName, Gateway>>;
  pools: Partial<Record<NetworkName, ChannelPool>>;
  /** Each network's submit loop (shared with the pool's own transactions). */
  submitters: Partial<Record<NetworkName, Submitter>>;
  submissions: SubmissionStore;
  config: SponsorConfig;
  log: Logger;
  /** The fee planner (shared with estimate). */
  fees: FeePlanner;
  /** Applies a settlement to another project's actor (a resumed submission of that project). */
  settleProject(projectId: string, s: SettledCredits): void;
  /** Outcomes and fees paid, for GET /metrics. */
  metrics?: SponsorMetrics;
  /** Several instances: one runs an inner transaction at a time (a lease), the others wait for its outcome. */
  shared?: {
    claim(name: string, ttlMs: number): Promise<boolean>;
    release(name: string): Promise<void>;
  } | null;
}

/** What a request learns of its submission before its outcome (the asynchronous mode answers at `accepted`). */
export interface SponsorHooks {
  /** The network took a fee-bump of the submission (it is submitted). */
  accepted?(a: { hash: string; innerHash: string }): void;
}

/** One request's reservation, settled exactly once. */
interface Reservation {
  id: string;
  payer: Payer;
  credits: boolean;
  grant: bigint;
  journaled: boolean;
  done: boolean;
  /** The outcome's write, when it was answered before its outcome was durable (settled when it ends). */
  writing?: Promise<void>;
}

/** A run's acceptance by the network: once known, and who waits for it. */
interface Acceptance {
  accepted?: { hash: string; innerHash: string };
  listeners: Set<(a: { hash: string; innerHash: string }) => void>;
}

/** Ledgers after which no envelope sent before can be in any queue (dropped after 4, banned for 10). */
const QUEUE_LEDGERS = 12;
/** Several instances: how often a request waits on another instance's run checks for its outcome. */
const SHARED_POLL_MS = 100;
/** Several instances: an inner transaction's lease outlives a submission's timeout by this much. */
const SHARED_MARGIN_MS = 5_000;
/** Submissions recovery looks at in one pass. */
const RECOVERY_BATCH = 100;

const max = (...xs: bigint[]) => xs.reduce((a, b) => (a > b ? a : b));
const min = (a: bigint, b: bigint) => (a < b ? a : b);

/** Sponsoring draws on credits on mainnet only. */
const CREDIT_NETWORK: NetworkName = "mainnet";

/** A RelayError as an outcome (kept and replayed); anything else is a bug and is rethrown. */
export function outcomeOf(e: unknown): Outcome {
  if (e instanceof RelayError) return { kind: "failure", error: e.data() };
  throw e;
}
/** A recorded outcome that stands: a success, or a failure the network charged for (its sequence or nonce is spent). */
function finalOutcome(prior: { outcome: Outcome | null; feeCharged: bigint | null } | null): Outcome | null {
  return prior?.outcome && (prior.outcome.kind === "success" || prior.feeCharged !== null) ? prior.outcome : null;
}

export class SponsorService {
  private readonly inflight = new Map<string, Promise<Outcome>>();
  /** The runs' acceptance by the network, by the same key as `inflight`. */
  private readonly acceptance = new Map<string, Acceptance>();
  /** Fee-source leases of submissions answered 504 whose fee-bump may still be queued, by submission id. */
  private readonly parked = new Map<string, FeeLease>();
  /** Outcomes answered and still being written. */
  private readonly writes = new Set<Promise<void>>();

  constructor(private readonly deps: SponsorDeps) {}

  gateway(network: NetworkName): Gateway {
    const g = this.deps.gateways[network];
    if (!g) throw unavailable(`network ${network} is not configured`, undefined, 30);
    return g;
  }

  /** Sponsors a client transaction for `payer`; resolves with the outcome to answer (200 body or an error). */
  async sponsor(transaction: string, network: NetworkName, payer: Payer, hooks?: SponsorHooks): Promise<Outcome> {
    let reservation: { reservation: Reservation; plan: FeePlan } | undefined;
    let innerHash: string | undefined;
    try {
      const gw = this.gateway(network);
      const d = decodeTransaction(transaction, gw.passphrase, { signatures: true, sorobanData: true });
      innerHash = d.innerHash;
      const job = feeBumpJob(d, gw.passphrase);
      reservation = await this.reserve(
        gw,
        job,
        payer,
        max(BASE_FEE, innerRate(d)),
        d.isSoroban,
        d.operationTypes,
        d.contractIds,
      );
      return this.observed(network, await this.dedup(gw, job, reservation, hooks), innerHash);
    } catch (e) {
      return this.observed(network, outcomeOf(e), innerHash);
    } finally {
      if (reservation) this.finish(reservation.reservation);
    }
  }

  /**
   * Sponsors a client's invokeHostFunction operation (func+auth mode): a channel account is the
   * transaction's source; the relay simulates it (enforce mode, so the client's signed entries are
   * checked), reserves the fee, assembles, signs and submits.
   */
  async sponsorOperation(
    operation: string,
    network: NetworkName,
    payer: Payer,
    hooks?: SponsorHooks,
  ): Promise<Outcome> {
    let reservation: { reservation: Reservation; plan: FeePlan } | undefined;
    let innerHash: string | undefined;
    try {
      const gw = this.gateway(network);
      const pool = this.pool(network);
      const op = decodeOperation(operation, (a) => pool.isRelayAccount(a));
      innerHash = op.hash;
      // answered or running already: its nonce is spent (or about to be), so it would not simulate again
      const running = this.inflight.get(`${network}:${op.hash}`);
      if (running) return this.observed(network, await this.join(`${network}:${op.hash}`, running, hooks), innerHash);
      const prior = await this.deps.submissions.byInnerHash(network, op.hash);
      const answered = finalOutcome(prior) ?? (prior ? await this.resolved(gw, prior) : null);
      if (answered) return this.observed(network, answered, innerHash);
      // a run that started meanwhile in this process is joined; an earlier run's transaction may still be
      // queued: another one would spend the nonce twice (and pay for a failure)
      const started = this.inflight.get(`${network}:${op.hash}`);
      if (started) return this.observed(network, await this.join(`${network}:${op.hash}`, started, hooks), innerHash);
      if (prior && mayStillBeQueued(prior, gw.watcher.latestLedger)) {
        throw new RelayError(
          "SUBMISSION_TIMEOUT",
          "an earlier submission of this operation may still be in the network's queue; retry to get its outcome",
          { hash: prior.hash, reason: "pending" },
        );
      }
      const sim = await this.simulateOperation(gw, pool, op);
      const job = operationJob(op, sim, gw.passphrase);
      reservation = await this.reserve(gw, job, payer, BASE_FEE, true, ["invokeHostFunction"], op.contractIds);
      return this.observed(network, await this.dedup(gw, job, reservation, hooks), innerHash);
    } catch (e) {
      return this.observed(network, outcomeOf(e), innerHash);
    } finally {
      if (reservation) this.finish(reservation.reservation);
    }
  }

  /**
   * Resolves submissions that have no outcome and no request running for them (a crash, a 504
   * whose client never came back): one the network applied is recorded and settled (charged);
   * one none of whose envelopes can be in a queue any more has its reservation given back (no
   * outcome is recorded: the transaction may still be sent again). Answers what it did.
   */
  async recover(network: NetworkName): Promise<{ settled: number; released: number }> {
    const gw = this.deps.gateways[network];
    const done = { settled: 0, released: 0 };
    if (!gw?.watcher.latestLedger) return done;
    const before = new Date(Date.now() - this.deps.config.submissionTimeoutMs);
    for (const r of await this.deps.submissions.unsettled(network, before, RECOVERY_BATCH)) {
      if (this.inflight.has(`${network}:${r.innerHash}`)) continue;
      try {
        if (await this.resolved(gw, r)) done.settled++;
        else if (!mayStillBeQueued(r, gw.watcher.latestLedger)) {
          // a request that sent it again meanwhile changed sent_ledger: then this release does nothing
          const s = await this.deps.submissions.release(r.id, r.sentLedger);
          if (s.projectId && s.released > 0n) this.deps.settleProject(s.projectId, s);
          this.unpark(r.id, null);
          done.released++;
        }
      } catch (e) {
        // one submission the network cannot answer for now does not hold back the others
        const err = e instanceof Error ? e.message : String(e);
        this.deps.log.warn({ network, submission: r.id, err }, "recovering a submission failed; retrying later");
      }
    }
    if (done.settled || done.released) this.deps.log.info({ network, ...done }, "unsettled submissions recovered");
    return done;
  }

  /** Resolves once the outcomes answered so far are written (before shutdown, or a read of the balances). */
  async written(): Promise<void> {
    await Promise.all(this.writes);
  }

  /** Submissions this process is sending or waiting on for a network (one per inner transaction). */
  pending(network: string): number {
    let n = 0;
    for (const key of this.inflight.keys()) if (key.startsWith(`${network}:`)) n++;
    return n;
  }

  /** Keeps a fee-bump's lease past a 504 (one per submission). */
  private park(id: string, lease: FeeLease): void {
    this.parked.get(id)?.end(0n);
    this.parked.set(id, lease);
  }

  /** Ends a parked lease once its submission is resolved: with the fee, if its channel paid it. */
  private unpark(id: string, found: Confirmed | null): void {
    const lease = this.parked.get(id);
    if (!lease) return;
    this.parked.delete(id);
    const paid = found && (!("feeSource" in found) || found.feeSource === lease.keypair.publicKey());
    lease.end(paid ? found.feeCharged : 0n);
  }

  /** Reports a request's outcome to the metrics and answers it, with the inner hash and status where it is about one. */
  private observed(network: NetworkName, outcome: Outcome, innerHash?: string): Outcome {
    this.deps.metrics?.sponsorOutcome(network, outcome);
    return innerHash ? withIdentity(outcome, innerHash) : outcome;
  }

  private pool(network: NetworkName): ChannelPool {
    const p = this.deps.pools[network];
    if (!p) throw unavailable(`no channel accounts are configured for ${network}`, undefined, 30);
    return p;
  }

  /** Simulates the operation from a relay channel account in enforce mode: its resource fee and Soroban data. */
  private async simulateOperation(
    gw: Gateway,
    pool: ChannelPool,
    op: DecodedOperation,
  ): Promise<{ resourceFee: bigint; transactionData: string }> {
    const tx = new TransactionBuilder(new Account(pool.simulationSource(), "0"), {
      fee: BASE_FEE.toString(),
      networkPassphrase: gw.passphrase,
    })
      .addOperation(op.operation)
      .setTimeout(0)
      .build();
    const raw = await gw.simulate(tx, "enforce");
    if (raw.error || !raw.transactionData)
      throw new RelayError("SIMULATION_FAILED", raw.error ?? "the simulation returned no transaction data", {
        events: describeEvents(raw.events),
      });
    return { resourceFee: BigInt(raw.minResourceFee ?? "0"), transactionData: raw.transactionData };
  }

  /** Plans the fee and has the payer's actor check the policy and reserve the most this request may pay. */
  private async reserve(
    gw: Gateway,
    job: Job,
    payer: Payer,
    floor: bigint,
    soroban: boolean,
    operationTypes: string[],
    contractIds: (string | null)[],
  ): Promise<{ reservation: Reservation; plan: FeePlan }> {
    const plan = await this.plan(gw, floor, soroban);
    const credits = gw.name === CREDIT_NETWORK && payer.projectId !== null;
    const id = crypto.randomUUID();
    const grant = await payer.reserve(id, credits, {
      operationTypes,
      contractIds,
      minFee: jobFee(job, plan.floor),
      maxFee: jobFee(job, max(plan.rate, this.deps.config.maxFeeRate)), // bids rise under surge up to MAX_FEE_RATE
    });
    return { reservation: { id, payer, credits, grant, journaled: false, done: false }, plan };
  }

  /** One run per inner hash at a time: a concurrent request for the same one gets its outcome. */
  private async dedup(
    gw: Gateway,
    job: Job,
    h: { reservation: Reservation; plan: FeePlan },
    hooks?: SponsorHooks,
  ): Promise<Outcome> {
    const key = `${gw.name}:${job.innerHash}`;
    const running = this.inflight.get(key);
    if (running) return await this.join(key, running, hooks); // another request pays for it; this one's reservation is released by the caller
    const watchers: Acceptance = { listeners: new Set() };
    if (hooks?.accepted) watchers.listeners.add(hooks.accepted);
    this.acceptance.set(key, watchers);
    const run = this.exclusive(gw, job, () => this.once(gw, job, h.plan, h.reservation));
    this.inflight.set(key, run);
    // joined until its outcome is written: a request after the answer finds it here, then in the database
    void run
      .then(() => h.reservation.writing)
      .catch(() => {})
      .finally(() => {
        this.inflight.delete(key);
        this.acceptance.delete(key);
      });
    return await run;
  }

  /** Joins a run of this process: its outcome, and its acceptance (at once if it was accepted already). */
  private async join(key: string, run: Promise<Outcome>, hooks?: SponsorHooks): Promise<Outcome> {
    const watchers = this.acceptance.get(key);
    if (hooks?.accepted && watchers) {
      if (watchers.accepted) hooks.accepted(watchers.accepted);
      else watchers.listeners.add(hooks.accepted);
    }
    return await run;
  }

  /**
   * The network took a fee-bump of a run: its submission is submitted, and the run's requests are
   * told once that is written (an asynchronous answer is never ahead of a look-up).
   */
  private accept(network: NetworkName, innerHash: string, id: string, hash: string, answer: string): void {
    const watchers = this.acceptance.get(`${network}:${innerHash}`);
    const tell = () => {
      if (!watchers || watchers.accepted) return;
      watchers.accepted = { hash, innerHash };
      for (const listener of watchers.listeners) listener(watchers.accepted);
      watchers.listeners.clear();
    };
    this.deps.submissions.recordAccepted(id, hash, answer).then(tell, (e) => {
      this.deps.log.warn({ network, submission: id, err: String(e) }, "recording an accepted submission failed");
      tell();
    });
  }

  /**
   * Several instances: runs `fn` while holding the inner transaction's lease (for as long as a
   * submission may take); while another instance holds it, waits for that run's recorded outcome,
   * and runs `fn` if the lease frees without one. 504 with the hash if neither comes in time.
   */
  private async exclusive(gw: Gateway, job: Job, fn: () => Promise<Outcome>): Promise<Outcome> {
    const shared = this.deps.shared;
    if (!shared) return await fn();
    const name = `inner:${gw.name}:${job.innerHash}`;
    const { submissionTimeoutMs } = this.deps.config;
    const deadline = Date.now() + submissionTimeoutMs;
    for (;;) {
      if (await shared.claim(name, submissionTimeoutMs + SHARED_MARGIN_MS)) {
        try {
          return await fn();
        } finally {
          await shared.release(name).catch(() => {}); // it lapses by itself otherwise
        }
      }
      const prior = await this.deps.submissions.byInnerHash(gw.name, job.innerHash);
      const answered = finalOutcome(prior);
      if (answered) return answered;
      if (Date.now() > deadline)
        throw new RelayError("SUBMISSION_TIMEOUT", "another instance is still submitting this transaction", {
          hash: prior?.hash ?? job.innerHash,
          reason: "pending",
        });
      await Bun.sleep(SHARED_POLL_MS);
    }
  }

  /** The first bid: the network's fee statistics, at least `floor`, at most MAX_FEE_RATE. */
  private plan(gw: Gateway, floor: bigint, soroban: boolean): Promise<FeePlan> {
    return this.deps.fees.plan(gw, floor, soroban);
  }

  /** Drops what is left of a request's reservation once its outcome's write (if any) has ended. */
  private finish(reservation: Reservation): void {
    const drop = () => this.endReservation(reservation, { released: 0n, charged: 0n });
    if (reservation.writing) void reservation.writing.finally(drop);
    else drop();
  }

  /** Ends a reservation once: the journal's release and charge (credits) or the fee paid (for the daily spend). */
  private endReservation(reservation: Reservation, s: SettledCredits): void {
    if (reservation.done) return;
    reservation.done = true;
    reservation.payer.settle(reservation.id, { ...s, journaled: reservation.journaled });
  }

  /**
   * One submission per inner hash: reuse a recorded outcome, settle one the network applied, or
   * submit (a recorded intent resumes: its last envelope is sent again first).
   */
  private async once(gw: Gateway, job: Job, plan: FeePlan, reservation: Reservation): Promise<Outcome> {
    const prior = await this.deps.submissions.byInnerHash(gw.name, job.innerHash);
    const answered = finalOutcome(prior);
    if (answered) return answered;
    if (prior) {
      // an earlier run (with no outcome, or one that does not stand) may have been applied since
      const outcome = await this.resolved(gw, prior, reservation);
      if (outcome) return outcome;
    }
    const id = prior?.id ?? crypto.randomUUID();
    // its last envelope may still be queued: it is sent again first, and errors are checked against the network
    const resume = prior && !prior.outcome && !prior.releasedAt ? prior : null;
    try {
      return await this.submit(gw, job, plan, reservation, id, resume, prior === null);
    } catch (e) {
      const o = outcomeOf(e);
      // retryable errors are not final: the intent stays for a retry or recovery (the reservation stays journaled)
      if (o.kind === "success" || !isRetryable(o.error.code))
        this.applySettlement(
          gw.name,
          reservation,
          await this.deps.submissions.recordOutcome(id, o, null, gw.name === CREDIT_NETWORK),
          0n,
        );
      return o;
    }
  }

  /** The outcome of a recorded submission the network applied (recorded and settled now), or null. */
  private async resolved(gw: Gateway, r: SubmissionRecord, reservation?: Reservation): Promise<Outcome | null> {
    const found = await this.found(gw, r.innerHash, r.hash);
    return found ? this.settle(gw.name, r.id, found, reservation) : null;
  }

  /**
   * The relay's own applied transaction for an inner hash (any wrapping) or an envelope hash (an
   * own transaction), or null. A wrapping whose fee another account paid is not the relay's.
   */
  private async found(gw: Gateway, innerHash: string, hash: string): Promise<Confirmed | null> {
    const f = (await gw.find(innerHash)) ?? (hash !== innerHash ? await gw.find(hash) : null);
    return f && this.deps.pools[gw.name]?.isRelayAccount(f.feeSource) ? f : null;
  }

  /**
   * Records the network's verdict and settles its project's credits (this request's reservation, if
   * any). A submission this request started (`fresh`: no other run or project has journaled
   * anything for it) is answered as soon as the verdict is known: its reservation is settled at
   * once as the journal will settle it (the reserve released, the fee charged), and the outcome is
   * written after (`reservation.writing`). The intent is durable, so if the relay stops before that
   * write, a retry or recovery finds the transaction on the network and settles it the same way.
   * With several instances the outcome is written before the answer (another instance's views
   * cannot wait for this one's writes).
   */
  private async settle(
    network: NetworkName,
    id: string,
    c: Confirmed,
    reservation?: Reservation,
    fresh = false,
  ): Promise<Outcome> {
    const outcome: Outcome = c.successful
      ? {
          kind: "success",
          result: { hash: c.hash, feePaid: c.feeCharged.toString(), ledger: c.ledger, resultXdr: c.resultXdr },
        }
      : outcomeOf(submissionFailed(c.hash, c.resultXdr, { ledger: c.ledger, feePaid: c.feeCharged }));
    this.unpark(id, c);
    this.deps.metrics?.feePaid(network, c.feeCharged);
    const written = this.deps.submissions.recordOutcome(id, outcome, c.feeCharged, network === CREDIT_NETWORK);
    // several instances: written first, so that every instance's views show it once it is answered
    if (!reservation || !fresh || this.deps.shared) {
      this.applySettlement(network, reservation, await written, c.feeCharged);
      return outcome;
    }
    const told = expectedSettlement(network, reservation, c.feeCharged);
    this.applySettlement(network, reservation, told, c.feeCharged);
    const writing = written.then(
      (s) => this.correct(network, id, told, s),
      (e) => {
        const err = e instanceof Error ? e.message : String(e);
        this.deps.log.warn(
          { network, submission: id, err },
          "an answered outcome was not recorded; recovery settles it",
        );
        this.correct(network, id, told, null);
      },
    );
    reservation.writing = writing;
    this.writes.add(writing);
    void writing.finally(() => this.writes.delete(writing));
    return outcome;
  }

  /**
   * After an answered outcome's write: the project's actor is told the difference between what it
   * was told and what the journal did (`s`; null: nothing was written, recovery settles it later).
   */
  private correct(network: NetworkName, id: string, told: SettledCredits, s: SettledCredits | null): void {
    if (network !== CREDIT_NETWORK || !told.projectId) return;
    const released = (s?.released ?? 0n) - told.released;
    const charged = (s?.charged ?? 0n) - told.charged;
    if (released === 0n && charged === 0n) return;
    if (s) this.deps.log.error({ network, submission: id }, "the journal settled an answered outcome otherwise");
    this.deps.settleProject(told.projectId, { projectId: told.projectId, released, charged });
  }

  /**
   * Gives the journal's settlement to the project it belongs to (the submission's, whose
   * reservation was outstanding): this request's reservation, or another project's actor when this
   * request (or recovery) resumed that project's submission (this request's own reservation is then dropped).
   */
  private applySettlement(
    network: NetworkName,
    reservation: Reservation | undefined,
    s: SettledCredits,
    feeCharged: bigint,
  ): void {
    const owner = s.projectId ?? null;
    if (reservation && network !== CREDIT_NETWORK)
      this.endReservation(reservation, {
        released: 0n,
        charged: owner === reservation.payer.projectId ? feeCharged : 0n,
      });
    else if (reservation && owner === reservation.payer.projectId) this.endReservation(reservation, s);
    else if (owner && network === CREDIT_NETWORK) this.deps.settleProject(owner, s);
  }

  /**
   * Submits a job through the network's submitter and turns what the network did into the
   * outcome: settled (applied), SUBMISSION_FAILED (rejected), 504 (not known yet: the fee source
   * keeps its hold while an envelope may be queued) or 503 (the network was too busy to take it).
   */
  private async submit(
    gw: Gateway,
    job: Job,
    plan: FeePlan,
    reservation: Reservation,
    id: string,
    resume: SubmissionRecord | null,
    fresh: boolean,
  ): Promise<Outcome> {
    const { config } = this.deps;
    // the highest bid the reservation covers
    const cap = (reservation.grant - job.resourceFee) / job.feeOps;
    const parked = this.parked.get(id) ?? null;
    this.parked.delete(id);
    let sender: Sender;
    try {
      sender = await job.sender(
        this.pool(gw.name),
        jobFee(job, cap),
        job.feeBump ? (resume?.envelope ?? null) : null,
        parked,
      );
    } catch (e) {
      if (parked) this.parked.set(id, parked);
      throw e;
    }
    let charged = 0n;
    let consumed = false;
    let unresolved = false;
    let written = false; // an intent of this submission was written (or tried)
    try {
      const r = await this.submitter(gw.name).submit({
        innerHash: job.feeBump ? job.innerHash : undefined,
        rate: sender.resumed?.rate ?? min(plan.rate, cap),
        cap,
        deadline: Date.now() + config.submissionTimeoutMs,
        resumed: resume ? { hash: resume.hash, envelope: sender.resumed?.envelope } : undefined,
        build: (rate) => sender.envelope(rate),
        beforeSend: (envelope, hash, rate) => {
          const first = fresh && !written;
          written = true;
          return this.record(gw, job, reservation, id, envelope, hash, rate, sender.channel, first);
        },
        accepted: (hash, answer) => this.accept(gw.name, job.innerHash, id, hash, answer),
        resync: sender.badSeq,
        lookup: (hash) => this.found(gw, job.innerHash, hash),
      });
      // after a timeout it may still be included: its fee room and sequence number stay counted
      consumed = r.kind === "applied" || (r.kind !== "busy" && r.accepted);
      switch (r.kind) {
        case "applied":
          charged = r.confirmed.feeCharged;
          return await this.settle(gw.name, id, r.confirmed, reservation, fresh);
        case "rejected":
          throw submissionFailed(r.hash, r.resultXdr);
        case "unknown":
          unresolved = true;
          throw timedOut(r.hash, r.rate, config.submissionTimeoutMs, r.reason, r.accepted);
        case "busy":
          // the network accepted none of this request's attempts: its reservation is given back now
          if (reservation.journaled) this.endReservation(reservation, await this.deps.submissions.release(id));
          throw unavailable("the network asked to try again later", { hash: r.hash }, 5);
        default:
          return r satisfies never;
      }
    } finally {
      // a fee-bump answered 504 may still be queued: its channel keeps the hold until the submission is resolved
      if (unresolved && sender.lease) this.park(id, sender.lease);
      else sender.end(charged, consumed);
    }
  }

  private submitter(network: NetworkName): Submitter {
    const s = this.deps.submitters[network];
    if (!s) throw unavailable(`network ${network} is not configured`, undefined, 30);
    return s;
  }

  /** Writes the intent (with the envelope, before it is sent) and journals the reservation once. */
  private async record(
    gw: Gateway,
    job: Job,
    reservation: Reservation,
    id: string,
    envelope: Signed,
    hash: string,
    rate: bigint,
    channel: string,
    fresh: boolean,
  ): Promise<void> {
    const journaled = await this.deps.submissions.recordIntent(
      {
        id,
        network: gw.name,
        innerHash: job.innerHash,
        hash,
        caller: reservation.payer.scope,
        projectId: reservation.payer.projectId,
        maxFee: jobFee(job, rate),
        envelope: envelope.xdr,
        sentLedger: gw.watcher.latestLedger,
        feeBid: rate,
        channel,
      },
      reservation.credits ? reservation.grant : 0n,
      fresh,
    );
    reservation.journaled ||= journaled;
  }
}

/**
 * What the journal settles for a submission only this request journaled for: its reserve released
 * and the fee charged (credits), or nothing (another network: the fee counts toward the daily spend).
 */
function expectedSettlement(network: NetworkName, r: Reservation, feeCharged: bigint): SettledCredits {
  const journal = network === CREDIT_NETWORK && r.journaled;
  return {
    projectId: r.payer.projectId,
    released: journal ? r.grant : 0n,
    charged: journal ? feeCharged : 0n,
  };
}

/** Whether an envelope of this submission may still be queued: sent, not released, within QUEUE_LEDGERS ledgers. */
function mayStillBeQueued(r: SubmissionRecord, latestLedger: number): boolean {
  return !r.outcome && !r.releasedAt && r.sentLedger !== null && latestLedger <= r.sentLedger + QUEUE_LEDGERS;
}

/** 504: the relay cannot know the outcome yet; the client's retry (or recovery) finds it by the inner hash. */
function timedOut(hash: string, rate: bigint, timeoutMs: number, reason?: string, accepted = false): RelayError {
  const message =
    reason === "fee_cap_reached"
      ? `not in a ledger within ${timeoutMs} ms; the fee bid reached its cap of ${rate} stroops per operation`
      : reason === "network_unavailable"
        ? "the network did not confirm receiving the transaction; retry to get its outcome"
        : `no confirmation within ${timeoutMs} ms`;
  const status = accepted ? "submitted" : "pending";
  return new RelayError("SUBMISSION_TIMEOUT", message, { hash, status, ...(reason ? { reason } : {}) });
}

/**
 * An outcome about a transaction carries its inner hash (what the client signed) beside `hash` (the
 * fee-bump), and its status: a result is `success`; SUBMISSION_FAILED is `failed` when the network
 * applied it (and charged its fee), else `rejected`; SUBMISSION_TIMEOUT says what it knows.
 */
function withIdentity(o: Outcome, innerHash: string): Outcome {
  if (o.kind === "success") return { kind: "success", result: { ...o.result, innerHash, status: "success" } };
  const details = o.error.details as Record<string, unknown> | undefined;
  if (!details || typeof details.hash !== "string") return o;
  const status =
    o.error.code === "SUBMISSION_FAILED"
      ? details.ledger === undefined
        ? "rejected"
        : "failed"
      : o.error.code === "SUBMISSION_TIMEOUT"
        ? (details.status ?? "pending")
        : undefined;
  return { kind: "failure", error: { ...o.error, details: { ...details, innerHash, ...(status ? { status } : {}) } } };
}
