/**
 * POST /v1/sponsor: decode, pick the inclusion fee, wrap in a fee-bump signed by the network's
 * sponsor account, record the intent, send, and wait for the ledger watcher's confirmation.
 * The same inner transaction is never paid for twice: concurrent and later requests for an inner
 * hash already sponsored get that submission's outcome.
 */
import type { Keypair } from "@stellar/stellar-sdk";
import { RelayError } from "../http/errors.ts";
import { X, fromB64 } from "../stellar/xdr.ts";
import type { Gateway, FeePercentile, NetworkName } from "../network/gateway.ts";
import type { Confirmed } from "../network/ledger-watcher.ts";
import type { Outcome, SubmissionStore } from "../store/types.ts";
import type { Logger } from "../log.ts";
import { decodeTransaction, type DecodedTx } from "./decode.ts";
import { BASE_FEE, buildFeeBump, feeBumpFee, innerRate } from "./fee-bump.ts";
import { clientResultCodes, submissionFailed, type SponsorResponse } from "./outcome.ts";

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
}

const TX_INSUFFICIENT_FEE = "tx_insufficient_fee";

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

  /** Sponsors a client transaction; resolves with the outcome to answer (200 body or an error). */
  async sponsor(transaction: string, network: NetworkName, caller: string): Promise<Outcome> {
    try {
      const gw = this.gateway(network);
      const d = decodeTransaction(transaction, gw.passphrase, { signatures: true, sorobanData: true });
      const key = `${network}:${d.innerHash}`;
      let run = this.inflight.get(key);
      if (!run) {
        run = this.once(gw, d, caller).finally(() => this.inflight.delete(key));
        this.inflight.set(key, run);
      }
      return await run;
    } catch (e) {
      return outcomeOf(e);
    }
  }

  /** One submission per inner hash: reuse a recorded outcome, resume a recorded intent, or submit. */
  private async once(gw: Gateway, d: DecodedTx, caller: string): Promise<Outcome> {
    const prior = await this.deps.submissions.byInnerHash(gw.name, d.innerHash);
    // answered before: a success, or a failure the network charged for (its sequence number is spent)
    if (prior?.outcome && (prior.outcome.status === 200 || prior.feeCharged !== null)) return prior.outcome;
    if (prior && !prior.outcome) {
      // an intent without an outcome (the relay stopped mid-way): did the network include it?
      const found = await this.lookup(gw, prior.hash);
      if (found) return this.settle(prior.id, found);
    }
    const id = prior?.id ?? crypto.randomUUID();
    try {
      return await this.submit(gw, d, caller, id);
    } catch (e) {
      const o = outcomeOf(e);
      // 503 and 504 are not final: a retry looks the intent up on the network again
      if (o.status !== 503 && o.status !== 504) await this.deps.submissions.recordOutcome(id, o, null);
      return o;
    }
  }

  private async lookup(gw: Gateway, hash: string): Promise<Confirmed | null> {
    const r = (await gw.call("getTransaction", (s) => s._getTransaction(hash))) as { status: string; ledger?: number; resultXdr?: string };
    if (r.status === "NOT_FOUND" || !r.resultXdr) return null;
    return { hash, successful: r.status === "SUCCESS", ledger: r.ledger!, resultXdr: r.resultXdr, feeCharged: X.result.decode(fromB64(r.resultXdr)).feeCharged };
  }

  private async settle(id: string, c: Confirmed): Promise<Outcome> {
    const outcome: Outcome = c.successful
      ? { status: 200, body: { hash: c.hash, feePaid: c.feeCharged.toString(), ledger: c.ledger, resultXdr: c.resultXdr } satisfies SponsorResponse }
      : outcomeOf(submissionFailed(c.hash, c.resultXdr, { ledger: c.ledger, feePaid: c.feeCharged }));
    await this.deps.submissions.recordOutcome(id, outcome, c.feeCharged);
    return outcome;
  }

  private async submit(gw: Gateway, d: DecodedTx, caller: string, id: string): Promise<Outcome> {
    const { config } = this.deps;
    const sponsor = this.deps.sponsors[gw.name];
    if (!sponsor) throw new RelayError("NETWORK_UNAVAILABLE", `no fee account is configured for ${gw.name}`, undefined, { "Retry-After": "30" });
    const deadline = Date.now() + config.submissionTimeoutMs;
    const tryAgainUntil = Date.now() + config.tryAgainLaterMs;
    let rate = [BASE_FEE, innerRate(d), await gw.feeRate(config.feePercentile, d.isSoroban)].reduce((a, b) => (a > b ? a : b));
    if (rate > config.maxFeeRate) rate = config.maxFeeRate > innerRate(d) ? config.maxFeeRate : innerRate(d);
    for (let attempt = 0; ; attempt++) {
      const fb = buildFeeBump(d, sponsor, rate, gw.passphrase);
      const hash = Buffer.from(fb.hash()).toString("hex");
      await this.deps.submissions.recordIntent({ id, network: gw.name, innerHash: d.innerHash, hash, caller, maxFee: feeBumpFee(d, rate) });
      const watch = gw.watcher.watch(hash, Math.max(1, deadline - Date.now()));
      const sent = (await gw.call("sendTransaction", (s) => s._sendTransaction(fb)).catch((e) => { watch.cancel(); throw e; })) as { status: string; errorResultXdr?: string };
      if (sent.status === "PENDING" || sent.status === "DUPLICATE") {
        const c = await watch.promise;
        if (!c) throw new RelayError("SUBMISSION_TIMEOUT", `no confirmation within ${config.submissionTimeoutMs} ms`, { hash });
        return this.settle(id, c);
      }
      watch.cancel();
      if (sent.status === "TRY_AGAIN_LATER") {
        if (Date.now() + 250 > tryAgainUntil) throw new RelayError("NETWORK_UNAVAILABLE", "the network asked to try again later", { hash }, { "Retry-After": "5" });
        await Bun.sleep(Math.min(250 * 2 ** Math.min(attempt, 3), Math.max(0, tryAgainUntil - Date.now())));
        continue;
      }
      const codes = clientResultCodes(sent.errorResultXdr!);
      if (codes.network === TX_INSUFFICIENT_FEE && rate < config.maxFeeRate) {
        rate = rate * 2n > config.maxFeeRate ? config.maxFeeRate : rate * 2n;
        continue;
      }
      throw submissionFailed(hash, sent.errorResultXdr!);
    }
  }
}
