/**
 * POST /v1/simulate and POST /v1/estimate: simulation through the network's simulateTransaction,
 * and the fee the relay would charge for a transaction.
 */
import { RelayError } from "../../kernel/errors.ts";
import { X, fromB64 } from "../../stellar/xdr.ts";
import { StrKey } from "@stellar/stellar-sdk";
import type { Gateway } from "../../network/gateway.ts";
import { decodeTransaction, sdkInner, type DecodedTx } from "./decode.ts";
import { innerRate } from "./fee-bump.ts";
import type { FeePlanner } from "./fee-plan.ts";
import { FAST_MULTIPLIER, type FeeStrategy, likelyRate } from "./fee-strategy.ts";
import type { EstimateResult, SimulateResult, SimulationEvent } from "./tx.model.ts";

const EVENT_TYPES = ["system", "contract", "diagnostic"] as const;

/** Diagnostic events as JSON; an undecodable one (a bad upstream answer) is NETWORK_UNAVAILABLE, not a crash. */
export function describeEvents(events: string[] | undefined): SimulationEvent[] {
  try {
    return (events ?? []).map(describeEvent);
  } catch {
    throw new RelayError(
      "NETWORK_UNAVAILABLE",
      "the network's simulation answer has undecodable events",
      { reason: "bad_answer" },
      { retryAfter: 2 },
    );
  }
}

/** A diagnostic event as JSON: topics and data stay base64 ScVal XDR; `xdr` is the whole event. */
function describeEvent(b64: string): SimulationEvent {
  const d = X.diagnosticEvent.decode(fromB64(b64));
  const body = d.event.body.v0;
  const enc = (v: Parameters<typeof X.scVal.encode>[0]) => Buffer.from(X.scVal.encode(v)).toString("base64");
  return {
    type: EVENT_TYPES[d.event.type] ?? "diagnostic",
    contractId: d.event.contractId ? StrKey.encodeContract(d.event.contractId) : null,
    topics: body.topics.map(enc),
    data: enc(body.data),
    inSuccessfulContractCall: d.inSuccessfulContractCall,
    xdr: b64,
  };
}

const SIMULATABLE =
  "only a transaction with exactly one invokeHostFunction, extendFootprintTtl or restoreFootprint operation can be simulated";

export class SimulateService {
  /** `fees`: the one fee planner (also read by the channels protocol's stats). */
  constructor(readonly fees: FeePlanner) {}

  async simulate(gw: Gateway, transaction: string): Promise<SimulateResult> {
    return this.simulateDecoded(
      gw,
      decodeTransaction(transaction, gw.passphrase, { signatures: false, sorobanData: false }),
    );
  }

  private async simulateDecoded(gw: Gateway, d: DecodedTx): Promise<SimulateResult> {
    const inner = sdkInner(d, gw.passphrase);
    const ops = inner.operations;
    if (ops.length !== 1 || !isSorobanOp(ops[0].type)) {
      throw new RelayError("VALIDATION_ERROR", `transaction: ${SIMULATABLE}`, {
        field: "transaction",
        reason: "not_simulatable",
      });
    }
    const raw = await gw.simulate(inner);
    const events = describeEvents(raw.events);
    if (raw.error) throw new RelayError("SIMULATION_FAILED", raw.error, { events });
    const fee = raw.minResourceFee ?? "0";
    return {
      minResourceFee: fee,
      resourceFee: fee,
      latestLedger: raw.latestLedger,
      transactionData: raw.transactionData ?? "",
      events: raw.events ?? [],
      diagnosticEvents: events,
      results: (raw.results ?? []).map((r) => ({ auth: r.auth ?? [], xdr: r.xdr, retval: r.xdr })),
    };
  }

  /** What the relay would bid now for `transaction` under `strategy` (the caller's policy's), and why. */
  async estimate(gw: Gateway, transaction: string, strategy?: FeeStrategy): Promise<EstimateResult> {
    const d = decodeTransaction(transaction, gw.passphrase, { signatures: false, sorobanData: false });
    const plan = await this.fees.plan(gw, innerRate(d), d.isSoroban, strategy);
    const { rate, floor } = plan;
    // what the last ledgers cleared at (else the statistics' mode); the inner transaction's rate is the bid's floor only
    const likely = likelyRate(plan, plan.cleared === null ? await gw.feeRate("mode", d.isSoroban) : 0n);
    const cap = rate > this.fees.config.maxFeeRate ? rate : this.fees.config.maxFeeRate;
    const ops = BigInt(d.operations + 1);
    let resourceFee = d.resourceFee;
    if (d.isSoroban && resourceFee === 0n) resourceFee = BigInt((await this.simulateDecoded(gw, d)).resourceFee);
    const total = (r: bigint) => (r * ops + resourceFee).toString();
    const cleared =
      plan.cleared === null ? "" : `the last ledgers cleared at up to ${plan.cleared} stroops per operation; `;
    // the fee statistics count a fee-bump at its inner operations: higher than what the ledgers cleared at
    const basis =
      plan.cleared !== null && plan.clearing > plan.cleared
        ? `the fee statistics' ${this.fees.config.feePercentile}, ${plan.clearing}`
        : `what recent ledgers cleared at, ${plan.clearing}`;
    const why =
      plan.strategy === "fast"
        ? `${cleared}the fast strategy bids ${FAST_MULTIPLIER}x ${basis}, to get into the next ledger, ` +
          `and replaces its bid at 10x after one missed ledger`
        : `${cleared}the economy strategy bids the recent median fee and replaces its bid at 10x after ${plan.replaceAfterLedgers} missed ledgers`;
    return {
      estimatedFee: total(likely),
      bidFee: total(rate),
      maxFee: total(cap),
      breakdown: { baseFee: (likely * ops).toString(), resourceFee: resourceFee.toString() },
      rates: { likely: likely.toString(), bid: rate.toString(), max: cap.toString() },
      explanation:
        `the network charges the market rate, not the bid: most likely ${likely} stroops per operation ` +
        `(${ops} operations with the fee-bump's own), the relay bids ${rate}${rate > floor ? "" : " (the lowest valid bid)"}: ` +
        `${why}; it may raise its bid up to ${cap} when ledgers are full (the policy's maxFee caps it too); ` +
        `on mainnet the most it may pay is reserved from credits`,
    };
  }
}

const isSorobanOp = (type: string) =>
  type === "invokeHostFunction" || type === "extendFootprintTtl" || type === "restoreFootprint";
