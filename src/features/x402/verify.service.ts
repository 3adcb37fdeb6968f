/**
 * /x402/verify (and the first step of /x402/settle): an `exact` payment on Stellar checked as x402's
 * scheme spec requires, and then some. The payment's structure (payment.ts), its authorization
 * entries' expiration against the ledger the relay follows (not expiring before a settlement can
 * land, not too far), a settlement already recorded for it, and a simulation from a relay account in
 * enforce mode (the signatures, the nonces, the payer's balance) that must emit exactly the expected
 * transfer and no other contract event. No public Horizon, no client-side RPC: the relay's gateway.
 */
import { Account, StrKey, TransactionBuilder, scValToNative, xdr } from "@stellar/stellar-sdk";
import { X, fromB64, type ContractEventW } from "../../stellar/xdr.ts";
import { BASE_FEE } from "../../stellar/protocol.ts";
import type { Gateway } from "../../network/gateway.ts";
import { type NetworkName, networkOfCaip2 } from "../../stellar/networks.ts";
import type { ChannelPool } from "../pool/channel-pool.ts";
import type { SubmissionStore } from "../../store/types.ts";
import type { PaymentPayload, PaymentRequirements } from "./x402.model.ts";
import { readPayment, type Payment, type Refusal } from "./payment.ts";

/** The scheme's fallback ledger time: the bound on how far entries may expire. */
const LEDGER_SECONDS = 5;
/** The spec's tolerance on that bound, in ledgers. */
const EXPIRATION_TOLERANCE = 2;
/** A settlement lands in the next ledger at the earliest: an entry must outlive the one after. */
const SETTLE_MARGIN = 2;
const DEFAULT_TIMEOUT_SECONDS = 60;

export interface Verified {
  network: NetworkName;
  gateway: Gateway;
  payment: Payment;
  /** The operation's SHA-256: its submission's id (GET /v1/transactions/{innerHash}). */
  innerHash: string;
}

export type Verdict = { ok: true; verified: Verified } | { ok: false; refusal: Refusal };

export interface VerifierDeps {
  gateway(network: NetworkName): Gateway | undefined;
  pool(network: NetworkName): ChannelPool | undefined;
  submissions: Pick<SubmissionStore, "byInnerHash">;
}

const refused = (refusal: Refusal): Verdict => ({ ok: false, refusal });
const no = (reason: Refusal["reason"], message: string, payer?: string): Verdict =>
  refused({ reason, message, ...(payer ? { payer } : {}) });

const AMOUNT = /^[1-9][0-9]{0,38}$/;

export const operationHash = (operation: string): string =>
  new Bun.CryptoHasher("sha256").update(fromB64(operation)).digest("hex");

export class X402Verifier {
  constructor(private readonly deps: VerifierDeps) {}

  async verify(x402Version: number, payload: PaymentPayload, req: PaymentRequirements): Promise<Verdict> {
    if (x402Version !== 2 || payload.x402Version !== 2) return no("invalid_x402_version", "x402Version must be 2");
    if (payload.accepted.scheme !== "exact" || req.scheme !== "exact")
      return no("unsupported_scheme", "only the exact scheme is supported");
    if (payload.accepted.network !== req.network)
      return no("network_mismatch", "the payload's accepted network is not the requirements' network");
    const network = networkOfCaip2(req.network);
    const gateway = network && this.deps.gateway(network);
    const pool = network && this.deps.pool(network);
    if (!network || !gateway || !pool) return no("invalid_network", `this relay does not serve ${req.network}`);
    if (!AMOUNT.test(req.amount) || !StrKey.isValidContract(req.asset) || !validPayTo(req.payTo))
      return no(
        "invalid_payment_requirements",
        "amount must be a positive integer, asset a C... contract, payTo G... or C...",
      );
    const read = readPayment(payload.payload.transaction, req, (a) => pool.isRelayAccount(a));
    if ("reason" in read) return refused(read);
    const { payer } = read;
    const latest = gateway.watcher.latestLedger;
    if (!latest) return no("unexpected_verify_error", "the relay has not seen a ledger of this network yet", payer);
    const timeout = req.maxTimeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS;
    const furthest = latest + Math.ceil(timeout / LEDGER_SECONDS) + EXPIRATION_TOLERANCE;
    for (const c of read.credentials) {
      if (c.expiration > furthest)
        return no(
          "invalid_exact_stellar_signature_expiration_too_far",
          `an entry expires at ledger ${c.expiration}, after ${furthest}`,
          payer,
        );
      if (c.expiration < latest + SETTLE_MARGIN)
        return no(
          "invalid_exact_stellar_signature_expired",
          `an entry expires at ledger ${c.expiration}: a settlement lands at ${latest + 1} at the earliest`,
          payer,
        );
    }
    const innerHash = operationHash(read.operation);
    const prior = await this.deps.submissions.byInnerHash(network, innerHash);
    if (prior?.outcome?.kind === "success")
      return no("invalid_exact_stellar_payload_already_settled", `settled already: ${prior.hash}`, payer);
    let sim: Awaited<ReturnType<Gateway["simulate"]>>;
    try {
      const tx = new TransactionBuilder(new Account(pool.simulationSource(), "0"), {
        fee: BASE_FEE.toString(),
        networkPassphrase: gateway.passphrase,
      })
        .addOperation(xdr.Operation.fromXDR(read.operation, "base64"))
        .setTimeout(0)
        .build();
      sim = await gateway.simulate(tx, "enforce");
    } catch (e) {
      return no("unexpected_verify_error", `the network could not simulate the payment: ${String(e)}`, payer);
    }
    if (sim.error || !sim.transactionData)
      return no(
        "invalid_exact_stellar_payload_simulation_failed",
        firstLine(sim.error ?? "no transaction data"),
        payer,
      );
    const events = checkEvents(sim.events ?? [], payer, req);
    if (events) return refused(events);
    return { ok: true, verified: { network, gateway, payment: read, innerHash } };
  }
}

const validPayTo = (a: string) => StrKey.isValidEd25519PublicKey(a) || StrKey.isValidContract(a);

const firstLine = (s: string) =>
  s
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)
    .slice(-1)[0] ?? s;

/** Exactly one contract event, a transfer of the asset from the payer to payTo of the amount. */
export function checkEvents(events: string[], payer: string, req: PaymentRequirements): Refusal | null {
  const transfers: { from: unknown; to: unknown; amount: unknown }[] = [];
  const no = (reason: Refusal["reason"], message: string): Refusal => ({ reason, message, payer });
  for (const b64 of events) {
    let event: ContractEventW;
    try {
      event = X.diagnosticEvent.decode(fromB64(b64)).event;
    } catch {
      return no("unexpected_verify_error", "the simulation returned an undecodable event");
    }
    if (event.type !== 1) continue; // system and diagnostic events move nothing
    const { topics, data } = event.body.v0;
    const name = topics[0]?.type === 15 ? topics[0].sym.toString() : null;
    if (name !== "transfer" || topics.length < 3)
      return no(
        "invalid_exact_stellar_payload_event_not_transfer",
        `the simulation emits a ${name ?? "non-symbol"} event`,
      );
    if (!event.contractId) return no("invalid_exact_stellar_payload_event_not_transfer", "an event without a contract");
    if (StrKey.encodeContract(Buffer.from(event.contractId)) !== req.asset)
      return no("invalid_exact_stellar_payload_event_wrong_asset", "a transfer event of another contract");
    const native = (v: (typeof topics)[number]) => scValToNative(xdr.ScVal.fromXdrObject(v));
    const amount = native(data);
    transfers.push({
      from: native(topics[1]!),
      to: native(topics[2]!),
      // CAP-67: a transfer to a muxed account carries { amount, to_muxed_id }
      amount: amount && typeof amount === "object" && "amount" in amount ? amount.amount : amount,
    });
  }
  if (transfers.length === 0) return no("invalid_exact_stellar_payload_no_transfer_events", "no transfer event");
  if (transfers.length > 1)
    return no("invalid_exact_stellar_payload_multiple_transfers", "more than one transfer event");
  const [t] = transfers as [{ from: unknown; to: unknown; amount: unknown }];
  if (t.from !== payer) return no("invalid_exact_stellar_payload_event_wrong_from", "the transfer is not the payer's");
  if (t.to !== req.payTo) return no("invalid_exact_stellar_payload_event_wrong_to", "the transfer is not to payTo");
  if (String(t.amount) !== req.amount)
    return no("invalid_exact_stellar_payload_event_wrong_amount", "the transfer's amount is not the required one");
  return null;
}
