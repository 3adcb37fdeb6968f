/**
 * /x402/settle: verify again (the spec: settle never trusts an earlier verify), claim the payment in
 * the database (one settlement per operation across every instance: a second, simultaneous or
 * later, is refused and moves nothing), then submit it through the relay's own func+auth path
 * (`SponsorService.sponsorOperation`: a channel account as source, the fee strategy's bid, the
 * merchant project's policy, limits and credits; a submission like any other, looked up, listed,
 * evented and webhooked). Answered at the ledger with the transaction's hash. Only a payment to an address
 * the merchant's project declared (its `x402.payTo`) is settled: another project's key cannot settle it first.
 */
import { isRetryable } from "../../kernel/errors.ts";
import type { Payer } from "../projects/principal.ts";
import type { SponsorService } from "../sponsor/sponsor.service.ts";
import type { IdempotencyStore, Outcome } from "../../store/types.ts";
import type { PaymentPayload, PaymentRequirements, SettleResponse } from "./x402.model.ts";
import type { X402Reason } from "./reasons.ts";
import type { X402Verifier } from "./verify.service.ts";

/** The claims' scope in the idempotency table: one per payment, whoever settles it. */
export const CLAIM_SCOPE = "x402:settle";

/**
 * How long a settlement's claim holds: its longest run (a channel awaited until its deadline, then
 * the submission's timeout) and as long again. A claim left by an instance that died mid-settlement
 * lapses then; a payment settled meanwhile is refused by verify (its submission is recorded), and a
 * second run of it joins or answers the first (one submission per operation): never twice on chain.
 */
export const settleClaimMs = (submissionTimeoutMs: number): number => 3 * submissionTimeoutMs;

export interface SettlementDeps {
  verifier: X402Verifier;
  sponsor: Pick<SponsorService, "sponsorOperation">;
  /** Where a payment is claimed (the idempotency keys' table: an insert only one request wins). */
  claims: IdempotencyStore;
  /** How long a claim holds (`settleClaimMs`; the submission's row outlives it: verify refuses it then). */
  claimTtlMs: number;
  /** The addresses a project accepts x402 payments to (its x402.payTo): it settles no others. */
  payTo(projectId: string): Promise<string[]>;
}

export class X402Settlement {
  constructor(private readonly deps: SettlementDeps) {}

  async settle(
    x402Version: number,
    payload: PaymentPayload,
    req: PaymentRequirements,
    payer: Payer,
  ): Promise<SettleResponse> {
    const network = payload.accepted?.network ?? req.network;
    // a merchant settles payments to its own addresses: another project's key cannot settle (and pay for) them
    const accepted = payer.projectId ? await this.deps.payTo(payer.projectId) : [];
    if (!accepted.includes(req.payTo))
      return refusal(
        network,
        "pay_to_not_declared",
        `this project does not accept payments to ${req.payTo}: declare it with PATCH /v1/admin/projects/{id} ` +
          '{"x402": {"payTo": [...]}} (nothing was settled)',
      );
    const verdict = await this.deps.verifier.verify(x402Version, payload, req);
    if (!verdict.ok) return refusal(network, verdict.refusal.reason, verdict.refusal.message, verdict.refusal.payer);
    const { verified } = verdict;
    const who = verified.payment.payer;
    const key = `${verified.network}:${verified.innerHash}`;
    const taken = await this.deps.claims.claimKey(CLAIM_SCOPE, key, verified.innerHash, this.deps.claimTtlMs);
    if (taken)
      return refusal(
        network,
        "invalid_exact_stellar_payload_already_settled",
        taken.outcome ? "this payment was settled already" : "a settlement of this payment is running",
        who,
      );
    let outcome: Outcome;
    try {
      outcome = await (await this.deps.sponsor.sponsorOperation(verified.payment.operation, verified.network, payer))
        .outcome;
    } catch (e) {
      await this.release(key);
      throw e;
    }
    if (outcome.kind === "success") {
      await this.deps.claims.complete(CLAIM_SCOPE, key, outcome);
      const r = outcome.result;
      return {
        success: true,
        transaction: r.hash,
        network,
        payer: who,
        extra: { innerHash: verified.innerHash, ledger: r.ledger, feePaid: r.feePaid },
      };
    }
    // not settled: the claim goes (a retry learns the recorded outcome, or runs once the cause is gone)
    await this.release(key);
    return failed(network, outcome.error, who, verified.innerHash);
  }

  private release(key: string): Promise<void> {
    return this.deps.claims.release(CLAIM_SCOPE, key).catch(() => {});
  }
}

export function refusal(network: string, reason: X402Reason, message: string, payer?: string): SettleResponse {
  return {
    success: false,
    errorReason: reason,
    errorMessage: message,
    transaction: "",
    network,
    ...(payer ? { payer } : {}),
  };
}

/** A settlement the relay's path did not make: the spec's reason, the relay's code in the message. */
function failed(
  network: string,
  error: Extract<Outcome, { kind: "failure" }>["error"],
  payer: string,
  innerHash: string,
): SettleResponse {
  const hash = typeof error.details?.hash === "string" ? error.details.hash : "";
  const reason: X402Reason =
    error.code === "SUBMISSION_FAILED"
      ? "settle_exact_stellar_transaction_failed"
      : error.code === "SIMULATION_FAILED"
        ? "invalid_exact_stellar_payload_simulation_failed"
        : isRetryable(error.code)
          ? "unexpected_settle_error"
          : "settle_exact_stellar_transaction_submission_failed";
  return {
    ...refusal(network, reason, `${error.code}: ${error.message}`, payer),
    transaction: reason === "settle_exact_stellar_transaction_submission_failed" ? "" : hash,
    extra: { innerHash },
  };
}
