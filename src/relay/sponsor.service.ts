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
import { Account, TransactionBuilder, type FeeBumpTransaction, type Transaction } from "@stellar/stellar-sdk";
import { RelayError } from "../http/errors.ts";
import { X, fromB64 } from "../stellar/xdr.ts";
import type { Gateway, FeePercentile, NetworkName } from "../network/gateway.ts";
import type { Confirmed } from "../network/ledger-watcher.ts";
import type { Outcome, SettledCredits, SubmissionStore } from "../store/types.ts";
import type { Logger } from "../log.ts";
import { decodeTransaction } from "./decode.ts";
import { BASE_FEE, buildFeeBump, innerRate } from "./fee-bump.ts";
import { decodeOperation, type DecodedOperation } from "./invoke.ts";
import { describeEvent } from "./simulate.service.ts";
import type { ChannelPool } from "./channel-pool.ts";
import { clientResultCodes, submissionFailed, type SponsorResponse } from "./outcome.ts";
import type { Payer } from "./project-actors.ts";

export interface SponsorConfig {
  feePercentile: FeePercentile;
  /** Highest inclusion rate (stroops per operation) the relay bids when the network asks for more. */
  maxFeeRate: bigint;
  submissionTimeoutMs: number;
  /** How long TRY_AGAIN_LATER is retried before answering 503. */
  tryAgainLaterMs: number;
}

export interface SponsorDeps {
  gateways: Partial<Record<NetworkName, Gateway>>;
  pools: Partial<Record<NetworkName, ChannelPool>>;
  submissions: SubmissionStore;
  config: SponsorConfig;
  log: Logger;
  /** Applies a settlement to another project's actor (a resumed submission of that project). */
  settleProject(projectId: string, s: SettledCredits): void;
}

/** One request's reservation, settled exactly once. */
interface Hold {
  id: string;
  payer: Payer;
  credits: boolean;
  grant: bigint;
  journaled: boolean;
  done: boolean;
}

/** The account that pays and signs one submission (a fee source, or the source of an own transaction). */
interface Signer {
  envelope(rate: bigint): Transaction | FeeBumpTransaction;
  /** After tx_bad_seq, for an own transaction: re-read the sequence number. */
  badSeq?(): Promise<void>;
  end(charged: bigint, consumed: boolean): void;
}

/** What one request submits: its dedup hash, its fee shape and how its signer is leased. */
interface Job {
  /** The inner transaction's hash, or the operation's (func+auth mode). */
  innerHash: string;
  /** Operations the inclusion fee is bid for (a fee-bump counts one more than its inner transaction). */
  feeOps: bigint;
  resourceFee: bigint;
  signer(pool: ChannelPool, maxFee: bigint): Promise<Signer>;
}

const jobFee = (job: Job, rate: bigint) => rate * job.feeOps + job.resourceFee;
const BAD_SEQ_RETRIES = 3;
/** Ledger time bounds of a transaction the relay builds (func+auth mode). */
const OWN_TX_TIMEOUT_SECONDS = 300;

interface RawSimulation { error?: string; events?: string[]; transactionData?: string; minResourceFee?: string }

interface FeePlan {
  /** The first bid (stroops per operation). */
  rate: bigint;
  /** The lowest valid bid. */
  floor: bigint;
}

const max = (...xs: bigint[]) => xs.reduce((a, b) => (a > b ? a : b));
const min = (a: bigint, b: bigint) => (a < b ? a : b);

const TX_INSUFFICIENT_FEE = "tx_insufficient_fee";
const TX_BAD_SEQ = "tx_bad_seq";
/** Sponsoring draws on credits on mainnet only. */
const CREDIT_NETWORK: NetworkName = "mainnet";

/** A RelayError as an outcome (kept and replayed); anything else is a bug and is rethrown. */
export function outcomeOf(e: unknown): Outcome {
  if (e instanceof RelayError) return { status: e.status, body: { code: e.code, message: e.message, details: e.details, headers: e.headers } };
  throw e;
}
/** A recorded outcome that stands: a success, or a failure the network charged for (its sequence number or nonce is spent). */
function finalOutcome(prior: { outcome: Outcome | null; feeCharged: bigint | null } | null): Outcome | null {
  return prior?.outcome && (prior.outcome.status === 200 || prior.feeCharged !== null) ? prior.outcome : null;
}

/** Turns an outcome back into an answer: the 200 body, or the RelayError it was (thrown). */
export function answer(o: Outcome): SponsorResponse {
  if (o.status === 200) return o.body as SponsorResponse;
  const b = o.body as { code: RelayError["code"]; message: string; details?: Record<string, unknown>; headers?: Record<string, string> };
  throw new RelayError(b.code, b.message, b.details, b.headers);
}

export class SponsorService {
  private readonly inflight = new Map<string, Promise<Outcome>>();

  constructor(private readonly deps: SponsorDeps) {}

  gateway(network: NetworkName): Gateway {
    const g = this.deps.gateways[network];
    if (!g) throw new RelayError("NETWORK_UNAVAILABLE", `network ${network} is not configured`, undefined, { "Retry-After": "30" });
    return g;
  }

  /** Sponsors a client transaction for `payer`; resolves with the outcome to answer (200 body or an error). */
  async sponsor(transaction: string, network: NetworkName, payer: Payer): Promise<Outcome> {
    let hold: { hold: Hold; plan: FeePlan } | undefined;
    try {
      const gw = this.gateway(network);
      const d = decodeTransaction(transaction, gw.passphrase, { signatures: true, sorobanData: true });
      const job: Job = {
        innerHash: d.innerHash, feeOps: BigInt(d.operations + 1), resourceFee: d.resourceFee,
        signer: async (pool, maxFee) => {
          const lease = await pool.assign(maxFee);
          return { envelope: (rate) => buildFeeBump(d, lease.keypair, rate, gw.passphrase), end: (charged) => lease.end(charged) };
        },
      };
      hold = await this.reserve(gw, job, payer, max(BASE_FEE, innerRate(d)), d.isSoroban, d.operationTypes, d.contractIds);
      return await this.dedup(gw, job, hold);
    } catch (e) {
      return outcomeOf(e);
    } finally {
      if (hold) this.finish(hold.hold, { released: 0n, charged: 0n });
    }
  }

  /**
   * Sponsors a client's invokeHostFunction operation (func+auth mode): a channel account is the
   * transaction's source; the relay simulates it (enforce mode, so the client's signed entries are
   * checked), reserves the fee, assembles, signs and submits.
   */
  async sponsorOperation(operation: string, network: NetworkName, payer: Payer): Promise<Outcome> {
    let hold: { hold: Hold; plan: FeePlan } | undefined;
    try {
      const gw = this.gateway(network);
      const pool = this.pool(network);
      const op = decodeOperation(operation, (a) => pool.isRelayAccount(a));
      // answered or running already: its nonce is spent (or about to be), so it would not simulate again
      const running = this.inflight.get(`${network}:${op.hash}`);
      if (running) return await running;
      const answered = finalOutcome(await this.deps.submissions.byInnerHash(network, op.hash));
      if (answered) return answered;
      const sim = await this.simulateOperation(gw, pool, op);
      const job: Job = {
        innerHash: op.hash, feeOps: 1n, resourceFee: sim.resourceFee,
        signer: async (p, maxFee) => {
          const lease = await p.acquire(maxFee);
          return {
            envelope: (rate) => {
              const tx = new TransactionBuilder(new Account(lease.keypair.publicKey(), (lease.seq - 1n).toString()), {
                fee: rate.toString(), networkPassphrase: gw.passphrase, sorobanData: sim.transactionData, // build() adds the resource fee
              }).addOperation(op.operation).setTimeout(OWN_TX_TIMEOUT_SECONDS).build();
              tx.sign(lease.keypair);
              return tx;
            },
            badSeq: () => lease.resync(),
            end: (charged, consumed) => lease.end(charged, consumed),
          };
        },
      };
      hold = await this.reserve(gw, job, payer, BASE_FEE, true, ["invokeHostFunction"], op.contractIds);
      return await this.dedup(gw, job, hold);
    } catch (e) {
      return outcomeOf(e);
    } finally {
      if (hold) this.finish(hold.hold, { released: 0n, charged: 0n });
    }
  }

  private pool(network: NetworkName): ChannelPool {
    const p = this.deps.pools[network];
    if (!p) throw new RelayError("NETWORK_UNAVAILABLE", `no channel accounts are configured for ${network}`, undefined, { "Retry-After": "30" });
    return p;
  }

  /** Simulates the operation from a relay channel account in enforce mode: its resource fee and Soroban data. */
  private async simulateOperation(gw: Gateway, pool: ChannelPool, op: DecodedOperation): Promise<{ resourceFee: bigint; transactionData: string }> {
    const tx = new TransactionBuilder(new Account(pool.simulationSource(), "0"), { fee: BASE_FEE.toString(), networkPassphrase: gw.passphrase })
      .addOperation(op.operation).setTimeout(0).build();
    const raw = (await gw.call("simulateTransaction", (s) => s._simulateTransaction(tx, undefined, "enforce"))) as RawSimulation;
    if (raw.error || !raw.transactionData) throw new RelayError("SIMULATION_FAILED", raw.error ?? "the simulation returned no transaction data", { events: (raw.events ?? []).map(describeEvent) });
    return { resourceFee: BigInt(raw.minResourceFee ?? "0"), transactionData: raw.transactionData };
  }

  /** Plans the fee and has the payer's actor check the policy and reserve the most this request may pay. */
  private async reserve(gw: Gateway, job: Job, payer: Payer, floor: bigint, soroban: boolean, operationTypes: string[], contractIds: (string | null)[]): Promise<{ hold: Hold; plan: FeePlan }> {
    const plan = await this.plan(gw, floor, soroban);
    const credits = gw.name === CREDIT_NETWORK && payer.projectId !== null;
    const id = crypto.randomUUID();
    const grant = await payer.reserve(id, credits, {
      operationTypes, contractIds,
      minFee: jobFee(job, plan.floor), maxFee: jobFee(job, max(plan.rate, this.deps.config.maxFeeRate)), // bids double on tx_insufficient_fee up to MAX_FEE_RATE
    });
    return { hold: { id, payer, credits, grant, journaled: false, done: false }, plan };
  }

  /** One run per inner hash at a time: a concurrent request for the same one gets its outcome. */
  private async dedup(gw: Gateway, job: Job, h: { hold: Hold; plan: FeePlan }): Promise<Outcome> {
    const key = `${gw.name}:${job.innerHash}`;
    const running = this.inflight.get(key);
    if (running) return await running; // another request pays for it; this one's hold is released by the caller
    const run = this.once(gw, job, h.plan, h.hold).finally(() => this.inflight.delete(key));
    this.inflight.set(key, run);
    return await run;
  }

  /** The first bid: the network's fee statistics, at least `floor`, at most MAX_FEE_RATE. */
  private async plan(gw: Gateway, floor: bigint, soroban: boolean): Promise<FeePlan> {
    const rate = max(floor, await gw.feeRate(this.deps.config.feePercentile, soroban));
    return { floor, rate: rate > this.deps.config.maxFeeRate ? max(this.deps.config.maxFeeRate, floor) : rate };
  }

  /** Ends a hold once: the journal's release and charge (for a credit hold) or the fee paid (for the daily spend). */
  private finish(hold: Hold, s: SettledCredits): void {
    if (hold.done) return;
    hold.done = true;
    hold.payer.settle(hold.id, { ...s, journaled: hold.journaled });
  }

  /** One submission per inner hash: reuse a recorded outcome, resume a recorded intent, or submit. */
  private async once(gw: Gateway, job: Job, plan: FeePlan, hold: Hold): Promise<Outcome> {
    const prior = await this.deps.submissions.byInnerHash(gw.name, job.innerHash);
    const answered = finalOutcome(prior);
    if (answered) return answered;
    if (prior && !prior.outcome) {
      // an intent without an outcome (the relay stopped mid-way): did the network include it?
      const found = await this.lookup(gw, prior.hash);
      if (found) return this.settle(gw.name, prior.id, found, hold);
    }
    const id = prior?.id ?? crypto.randomUUID();
    try {
      return await this.submit(gw, job, plan, hold, id);
    } catch (e) {
      const o = outcomeOf(e);
      // 503 and 504 are not final: a retry looks the intent up on the network again (the reservation stays journaled)
      if (o.status !== 503 && o.status !== 504) this.applySettlement(gw.name, hold, await this.deps.submissions.recordOutcome(id, o, null, gw.name === CREDIT_NETWORK), 0n);
      return o;
    }
  }

  private async lookup(gw: Gateway, hash: string): Promise<Confirmed | null> {
    const r = (await gw.call("getTransaction", (s) => s._getTransaction(hash))) as { status: string; ledger?: number; resultXdr?: string };
    if (r.status === "NOT_FOUND" || !r.resultXdr) return null;
    return { hash, successful: r.status === "SUCCESS", ledger: r.ledger!, resultXdr: r.resultXdr, feeCharged: X.result.decode(fromB64(r.resultXdr)).feeCharged };
  }

  /** Records the network's verdict and settles the credits of the submission's project. */
  private async settle(network: NetworkName, id: string, c: Confirmed, hold: Hold): Promise<Outcome> {
    const outcome: Outcome = c.successful
      ? { status: 200, body: { hash: c.hash, feePaid: c.feeCharged.toString(), ledger: c.ledger, resultXdr: c.resultXdr } satisfies SponsorResponse }
      : outcomeOf(submissionFailed(c.hash, c.resultXdr, { ledger: c.ledger, feePaid: c.feeCharged }));
    this.applySettlement(network, hold, await this.deps.submissions.recordOutcome(id, outcome, c.feeCharged, network === CREDIT_NETWORK), c.feeCharged);
    return outcome;
  }

  /**
   * Gives the journal's settlement to the project it belongs to (the submission's, whose
   * reservation was outstanding): this request's hold, or another project's actor when this
   * request resumed that project's submission (this request's own hold is then dropped).
   */
  private applySettlement(network: NetworkName, hold: Hold, s: SettledCredits, feeCharged: bigint): void {
    const owner = s.projectId ?? null;
    if (network !== CREDIT_NETWORK) return this.finish(hold, { released: 0n, charged: owner === hold.payer.projectId ? feeCharged : 0n });
    if (owner === hold.payer.projectId) return this.finish(hold, s);
    if (owner) this.deps.settleProject(owner, s);
  }

  private async submit(gw: Gateway, job: Job, plan: FeePlan, hold: Hold, id: string): Promise<Outcome> {
    const { config } = this.deps;
    const deadline = Date.now() + config.submissionTimeoutMs;
    const tryAgainUntil = Date.now() + config.tryAgainLaterMs;
    // the highest bid the reservation covers
    const cap = (hold.grant - job.resourceFee) / job.feeOps;
    let rate = min(plan.rate, cap);
    const signer = await job.signer(this.pool(gw.name), jobFee(job, cap));
    let charged = 0n;
    let consumed = false;
    try {
      for (let attempt = 0, badSeq = 0; ; attempt++) {
        const envelope = signer.envelope(rate);
        const hash = Buffer.from(envelope.hash()).toString("hex");
        const journaled = await this.deps.submissions.recordIntent(
          { id, network: gw.name, innerHash: job.innerHash, hash, caller: hold.payer.scope, projectId: hold.payer.projectId, maxFee: jobFee(job, rate) },
          hold.credits ? hold.grant : 0n,
        );
        hold.journaled ||= journaled;
        const watch = gw.watcher.watch(hash, Math.max(1, deadline - Date.now()));
        const sent = (await gw.call("sendTransaction", (s) => s._sendTransaction(envelope)).catch((e) => { watch.cancel(); throw e; })) as { status: string; errorResultXdr?: string };
        if (sent.status === "PENDING" || sent.status === "DUPLICATE") {
          const c = await watch.promise;
          consumed = true; // after a timeout it may still be included: its fee room and sequence number stay counted
          if (!c) throw new RelayError("SUBMISSION_TIMEOUT", `no confirmation within ${config.submissionTimeoutMs} ms`, { hash });
          charged = c.feeCharged;
          return await this.settle(gw.name, id, c, hold);
        }
        watch.cancel();
        if (sent.status === "TRY_AGAIN_LATER") {
          if (Date.now() + 250 > tryAgainUntil) {
            // the network accepted none of this request's attempts: its reservation is given back now
            if (hold.journaled) this.finish(hold, { released: await this.deps.submissions.releaseOutstanding(id), charged: 0n });
            throw new RelayError("NETWORK_UNAVAILABLE", "the network asked to try again later", { hash }, { "Retry-After": "5" });
          }
          await Bun.sleep(Math.min(250 * 2 ** Math.min(attempt, 3), Math.max(0, tryAgainUntil - Date.now())));
          continue;
        }
        const codes = clientResultCodes(sent.errorResultXdr!);
        if (codes.network === TX_INSUFFICIENT_FEE && rate < cap) {
          rate = min(rate * 2n, cap);
          continue;
        }
        // the relay's own sequence number was stale (an external transaction moved it): re-read, retry
        if (codes.network === TX_BAD_SEQ && signer.badSeq && badSeq++ < BAD_SEQ_RETRIES) {
          await signer.badSeq();
          continue;
        }
        throw submissionFailed(hash, sent.errorResultXdr!);
      }
    } finally {
      signer.end(charged, consumed);
    }
  }
}
