/**
 * POST /v1/sponsor: decode, plan the fee, have the project's actor check the policy and reserve
 * the maximum fee, wrap in a fee-bump signed by the network's sponsor account, record the intent
 * (with the credit reservation), send, wait for the ledger watcher's confirmation, and settle:
 * charge what the network charged and release the rest. The same inner transaction is never paid
 * for twice: concurrent and later requests for an inner hash already sponsored get that
 * submission's outcome (and pay nothing).
 */
import type { Keypair } from "@stellar/stellar-sdk";
import { RelayError } from "../http/errors.ts";
import { X, fromB64 } from "../stellar/xdr.ts";
import type { Gateway, FeePercentile, NetworkName } from "../network/gateway.ts";
import type { Confirmed } from "../network/ledger-watcher.ts";
import type { Outcome, SettledCredits, SubmissionStore } from "../store/types.ts";
import type { Logger } from "../log.ts";
import { decodeTransaction, type DecodedTx } from "./decode.ts";
import { BASE_FEE, buildFeeBump, feeBumpFee, innerRate } from "./fee-bump.ts";
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
  sponsors: Partial<Record<NetworkName, Keypair>>;
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

interface FeePlan {
  /** The first bid (stroops per operation). */
  rate: bigint;
  /** The lowest valid bid. */
  floor: bigint;
}

const max = (...xs: bigint[]) => xs.reduce((a, b) => (a > b ? a : b));
const min = (a: bigint, b: bigint) => (a < b ? a : b);

const TX_INSUFFICIENT_FEE = "tx_insufficient_fee";
/** Sponsoring draws on credits on mainnet only. */
const CREDIT_NETWORK: NetworkName = "mainnet";

/** A RelayError as an outcome (kept and replayed); anything else is a bug and is rethrown. */
export function outcomeOf(e: unknown): Outcome {
  if (e instanceof RelayError) return { status: e.status, body: { code: e.code, message: e.message, details: e.details, headers: e.headers } };
  throw e;
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
    let hold: Hold | undefined;
    try {
      const gw = this.gateway(network);
      const d = decodeTransaction(transaction, gw.passphrase, { signatures: true, sorobanData: true });
      const plan = await this.plan(gw, d);
      const credits = network === CREDIT_NETWORK && payer.projectId !== null;
      const id = crypto.randomUUID();
      const grant = await payer.reserve(id, credits, {
        operationTypes: d.operationTypes, contractIds: d.contractIds,
        minFee: feeBumpFee(d, plan.floor), maxFee: feeBumpFee(d, max(plan.rate, this.deps.config.maxFeeRate)), // bids double on tx_insufficient_fee up to MAX_FEE_RATE
      });
      hold = { id, payer, credits, grant, journaled: false, done: false };
      const key = `${network}:${d.innerHash}`;
      const running = this.inflight.get(key);
      if (running) return await running; // another request pays for it; this one's hold is released below
      const run = this.once(gw, d, plan, hold).finally(() => this.inflight.delete(key));
      this.inflight.set(key, run);
      return await run;
    } catch (e) {
      return outcomeOf(e);
    } finally {
      if (hold) this.finish(hold, { released: 0n, charged: 0n });
    }
  }

  /** The first bid: the network's fee statistics, at least the inner transaction's own bid, at most MAX_FEE_RATE. */
  private async plan(gw: Gateway, d: DecodedTx): Promise<FeePlan> {
    const floor = max(BASE_FEE, innerRate(d));
    const rate = max(floor, await gw.feeRate(this.deps.config.feePercentile, d.isSoroban));
    return { floor, rate: rate > this.deps.config.maxFeeRate ? max(this.deps.config.maxFeeRate, floor) : rate };
  }

  /** Ends a hold once: the journal's release and charge (for a credit hold) or the fee paid (for the daily spend). */
  private finish(hold: Hold, s: SettledCredits): void {
    if (hold.done) return;
    hold.done = true;
    hold.payer.settle(hold.id, { ...s, journaled: hold.journaled });
  }

  /** One submission per inner hash: reuse a recorded outcome, resume a recorded intent, or submit. */
  private async once(gw: Gateway, d: DecodedTx, plan: FeePlan, hold: Hold): Promise<Outcome> {
    const prior = await this.deps.submissions.byInnerHash(gw.name, d.innerHash);
    // answered before: a success, or a failure the network charged for (its sequence number is spent)
    if (prior?.outcome && (prior.outcome.status === 200 || prior.feeCharged !== null)) return prior.outcome;
    if (prior && !prior.outcome) {
      // an intent without an outcome (the relay stopped mid-way): did the network include it?
      const found = await this.lookup(gw, prior.hash);
      if (found) return this.settle(gw.name, prior.id, found, hold);
    }
    const id = prior?.id ?? crypto.randomUUID();
    try {
      return await this.submit(gw, d, plan, hold, id);
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

  private async submit(gw: Gateway, d: DecodedTx, plan: FeePlan, hold: Hold, id: string): Promise<Outcome> {
    const { config } = this.deps;
    const sponsor = this.deps.sponsors[gw.name];
    if (!sponsor) throw new RelayError("NETWORK_UNAVAILABLE", `no fee account is configured for ${gw.name}`, undefined, { "Retry-After": "30" });
    const deadline = Date.now() + config.submissionTimeoutMs;
    const tryAgainUntil = Date.now() + config.tryAgainLaterMs;
    // the highest bid the reservation covers
    const cap = (hold.grant - d.resourceFee) / BigInt(d.operations + 1);
    let rate = min(plan.rate, cap);
    for (let attempt = 0; ; attempt++) {
      const fb = buildFeeBump(d, sponsor, rate, gw.passphrase);
      const hash = Buffer.from(fb.hash()).toString("hex");
      const journaled = await this.deps.submissions.recordIntent(
        { id, network: gw.name, innerHash: d.innerHash, hash, caller: hold.payer.scope, projectId: hold.payer.projectId, maxFee: feeBumpFee(d, rate) },
        hold.credits ? hold.grant : 0n,
      );
      hold.journaled ||= journaled;
      const watch = gw.watcher.watch(hash, Math.max(1, deadline - Date.now()));
      const sent = (await gw.call("sendTransaction", (s) => s._sendTransaction(fb)).catch((e) => { watch.cancel(); throw e; })) as { status: string; errorResultXdr?: string };
      if (sent.status === "PENDING" || sent.status === "DUPLICATE") {
        const c = await watch.promise;
        if (!c) throw new RelayError("SUBMISSION_TIMEOUT", `no confirmation within ${config.submissionTimeoutMs} ms`, { hash });
        return this.settle(gw.name, id, c, hold);
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
      throw submissionFailed(hash, sent.errorResultXdr!);
    }
  }
}
