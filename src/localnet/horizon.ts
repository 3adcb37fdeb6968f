/**
 * The Horizon subset localnet serves: POST /transactions (synchronous), POST /transactions_async,
 * GET /accounts/:id, GET /fee_stats and GET /. Responses follow stellar-horizon's shapes.
 */
import { formatXlm } from "../stellar/amount.ts";
import { fromB64 } from "../stellar/xdr.ts";
import { resultCodes } from "../stellar/result-codes.ts";
import type { Localnet } from "./ledger.ts";
import type { TxRecord } from "./history.ts";
import { TrustFlags, type TrustLine } from "./state.ts";
import { PROTOCOL_VERSION, VERSION } from "./ledger.ts";

export interface HorizonReply {
  status: number;
  body: unknown;
  problem?: boolean;
}

const problem = (
  status: number,
  type: string,
  title: string,
  detail: string,
  extras?: Record<string, unknown>,
): HorizonReply => ({
  status,
  problem: true,
  body: { type: `https://stellar.org/horizon-errors/${type}`, title, status, detail, ...(extras ? { extras } : {}) },
});

/** A trustline as Horizon lists it among an account's balances. */
function trustlineBalance(t: TrustLine, lastModified: number) {
  const [code, issuer] = t.asset.split(":");
  return {
    balance: formatXlm(t.balance),
    limit: formatXlm(t.limit),
    buying_liabilities: "0.0000000",
    selling_liabilities: "0.0000000",
    last_modified_ledger: lastModified,
    is_authorized: (t.flags & TrustFlags.authorized) !== 0,
    is_authorized_to_maintain_liabilities: (t.flags & (TrustFlags.authorized | TrustFlags.maintainLiabilities)) !== 0,
    is_clawback_enabled: (t.flags & TrustFlags.clawbackEnabled) !== 0,
    asset_type: code.length <= 4 ? "credit_alphanum4" : "credit_alphanum12",
    asset_code: code,
    asset_issuer: issuer,
    ...(t.sponsor ? { sponsor: t.sponsor } : {}),
  };
}

const iso = (seconds: bigint) => new Date(Number(seconds) * 1000).toISOString().replace(".000Z", "Z");

/**
 * The Transaction resource of an applied transaction. `requestedHash` is the hash the client asked
 * for: a fee-bump found by its inner hash is shown under that hash with the inner signatures, as
 * stellar-horizon's PopulateTransaction does.
 */
export function transactionResource(r: TxRecord, requestedHash: string = r.hash) {
  const byInner = r.feeBump && requestedHash !== r.hash;
  return {
    id: requestedHash,
    paging_token: ((BigInt(r.ledger) << 32n) | (BigInt(r.applicationOrder) << 12n)).toString(),
    successful: r.successful,
    hash: requestedHash,
    ledger: r.ledger,
    created_at: iso(r.createdAt),
    source_account: r.sourceAccount,
    source_account_sequence: r.seqNum.toString(),
    fee_account: r.feeAccount,
    fee_charged: r.feeCharged.toString(),
    max_fee: r.maxFee.toString(),
    operation_count: r.operationCount,
    envelope_xdr: r.envelopeXdr,
    result_xdr: r.resultXdr,
    result_meta_xdr: r.resultMetaXdr,
    fee_meta_xdr: "AAAAAA==",
    memo_type: r.memoType,
    signatures: byInner ? r.innerSignatures : r.signatures,
    ...(r.feeBump
      ? {
          fee_bump_transaction: { hash: r.hash, signatures: r.signatures },
          inner_transaction: { hash: r.innerHash, signatures: r.innerSignatures, max_fee: r.innerMaxFee.toString() },
        }
      : {}),
  };
}

function failed(envelopeXdr: string, resultXdr: string, codes: ReturnType<typeof resultCodes>): HorizonReply {
  return problem(
    400,
    "transaction_failed",
    "Transaction Failed",
    "The transaction failed when submitted to the stellar network. The `extras.result_codes` field on " +
      "this response contains further details.  Descriptions of each code can be found at: " +
      "https://developers.stellar.org/api/errors/http-status-codes/horizon-specific/transaction-failed/",
    { envelope_xdr: envelopeXdr, result_xdr: resultXdr, result_codes: codes },
  );
}

/**
 * Result codes as stellar-horizon reports them for a request about `requestedHash`: when that is the
 * inner hash of a fee-bump, the request sees the inner result (txsub `TransactionResultCodes`).
 */
function codesFor(r: TxRecord, requestedHash: string): ReturnType<typeof resultCodes> {
  const codes = resultCodes(r.result);
  if (!r.feeBump || requestedHash === r.hash || codes.inner_transaction === undefined) return codes;
  return { transaction: codes.inner_transaction, ...(codes.operations ? { operations: codes.operations } : {}) };
}

/** The reply for a submission (`envelopeXdr` as submitted, `hash` its hash) already applied as `r`. */
const fromRecord = (r: TxRecord, envelopeXdr: string, hash: string): HorizonReply =>
  r.successful
    ? { status: 200, body: transactionResource(r, hash) }
    : failed(envelopeXdr, r.resultXdr, codesFor(r, hash));

const malformed = (tx: string) =>
  problem(
    400,
    "transaction_malformed",
    "Transaction Malformed",
    "Horizon could not decode the transaction envelope in this request. A transaction should be an XDR " +
      "TransactionEnvelope struct encoded using base64.  The envelope read from this request is echoed in " +
      "the `extras.envelope_xdr` field of this response for your convenience.",
    { envelope_xdr: tx },
  );

export const unsupportedMediaType = (): HorizonReply =>
  problem(
    415,
    "unsupported_media_type",
    "Unsupported Media Type",
    "The request has an unsupported content type. Presently, the only supported content type is application/x-www-form-urlencoded.",
  );

export class Horizon {
  /** `basePath`: where this Horizon is mounted ("" standalone), for the resources' `_links`. */
  constructor(
    private readonly net: Localnet,
    private readonly submissionTimeoutMs = 30_000,
    private readonly basePath = "",
  ) {}

  /** POST /transactions: submit and wait until the transaction is in a closed ledger. */
  async submit(tx: unknown): Promise<HorizonReply> {
    if (typeof tx !== "string" || !tx)
      return problem(400, "bad_request", "Bad Request", "The request you sent was invalid in some way.", {
        invalid_field: "tx",
        reason: "tx is required",
      });
    let r;
    try {
      r = this.net.submitXdr(fromB64(tx));
    } catch {
      return malformed(tx);
    }
    const done = this.net.records.get(r.hash);
    if (done) return fromRecord(done, tx, r.hash);
    if (r.status === "ERROR") return failed(tx, r.errorResultXdr!, resultCodes(r.errorResult!));
    // PENDING, DUPLICATE and TRY_AGAIN_LATER all wait for the ledger (as Horizon's submitter does)
    const rec = await new Promise<TxRecord | null>((resolve) => {
      const timer = setTimeout(() => {
        off();
        resolve(null);
      }, this.submissionTimeoutMs);
      const off = this.net.onLedgerClosed(() => {
        const found = this.net.records.get(r.hash);
        if (found) {
          clearTimeout(timer);
          off();
          resolve(found);
        }
      });
    });
    if (!rec) {
      return problem(
        504,
        "transaction_submission_timeout",
        "Transaction Submission Timeout",
        "Your transaction submission request has timed out. This does not necessarily mean the submission " +
          "has failed. Before resubmitting, please use the transaction hash provided in `extras.hash` to poll " +
          "the GET /transactions endpoint for sometime and check if it was included in a ledger.",
        { hash: r.hash, envelope_xdr: tx },
      );
    }
    return fromRecord(rec, tx, r.hash);
  }

  /** POST /transactions_async: relay the queue's answer. */
  submitAsync(tx: unknown): HorizonReply {
    if (typeof tx !== "string" || !tx)
      return problem(400, "bad_request", "Bad Request", "The request you sent was invalid in some way.", {
        invalid_field: "tx",
        reason: "tx is required",
      });
    let r;
    try {
      r = this.net.submitXdr(fromB64(tx));
    } catch {
      return malformed(tx);
    }
    const status = { PENDING: 201, DUPLICATE: 409, TRY_AGAIN_LATER: 503, ERROR: 400 }[r.status];
    return {
      status,
      body: { tx_status: r.status, hash: r.hash, ...(r.errorResultXdr ? { error_result_xdr: r.errorResultXdr } : {}) },
    };
  }

  account(id: string): HorizonReply {
    const a = this.net.account(id);
    if (!a)
      return problem(
        404,
        "not_found",
        "Resource Missing",
        "The resource at the url requested was not found.  This usually occurs for one of two reasons:  The " +
          "url requested is not valid, or no data in our database could be found with the parameters provided.",
      );
    const ledger = this.net.ledgers.find((l) => l.sequence === a.lastModified);
    return {
      status: 200,
      body: {
        id: a.id,
        account_id: a.id,
        paging_token: a.id,
        sequence: a.seqNum.toString(),
        sequence_ledger: a.seqLedger,
        sequence_time: a.seqTime.toString(),
        subentry_count: a.numSubEntries,
        home_domain: a.homeDomain || undefined,
        last_modified_ledger: a.lastModified,
        last_modified_time: ledger ? iso(ledger.closeTime) : null,
        thresholds: { low_threshold: a.thresholds[1], med_threshold: a.thresholds[2], high_threshold: a.thresholds[3] },
        flags: {
          auth_required: (a.flags & 1) !== 0,
          auth_revocable: (a.flags & 2) !== 0,
          auth_immutable: (a.flags & 4) !== 0,
          auth_clawback_enabled: (a.flags & 8) !== 0,
        },
        balances: [
          ...[...a.trustlines.values()].map((t) => trustlineBalance(t, a.lastModified)),
          {
            balance: formatXlm(a.balance),
            buying_liabilities: "0.0000000",
            selling_liabilities: "0.0000000",
            asset_type: "native",
          },
        ],
        signers: [
          ...a.signers.map((s) => ({
            weight: s.weight,
            key: s.key,
            type: "ed25519_public_key",
            ...(s.sponsor ? { sponsor: s.sponsor } : {}),
          })),
          { weight: a.thresholds[0], key: a.id, type: "ed25519_public_key" },
        ],
        data: Object.fromEntries([...a.data].map(([k, v]) => [k, Buffer.from(v).toString("base64")])),
        num_sponsoring: a.numSponsoring,
        num_sponsored: a.numSponsored,
        ...(a.sponsor ? { sponsor: a.sponsor } : {}),
        // js-stellar-sdk reads `data` as `data_attr` only when a `data` link exists (checkMemoRequired needs it)
        _links: {
          self: { href: `${this.basePath}/accounts/${a.id}` },
          data: { href: `${this.basePath}/accounts/${a.id}/data/{key}`, templated: true },
        },
      },
    };
  }

  feeStats(): HorizonReply {
    const d = this.net.classicFees.distribution();
    const pick = ({ max, min, mode, p10, p20, p30, p40, p50, p60, p70, p80, p90, p95, p99 }: typeof d) => ({
      max,
      min,
      mode,
      p10,
      p20,
      p30,
      p40,
      p50,
      p60,
      p70,
      p80,
      p90,
      p95,
      p99,
    });
    const l = this.net.latestLedger;
    return {
      status: 200,
      body: {
        last_ledger: String(l.sequence),
        last_ledger_base_fee: String(l.baseFee),
        ledger_capacity_usage: (l.operationCount / l.maxTxSetSize).toFixed(2),
        fee_charged: pick(d),
        max_fee: pick(d),
      },
    };
  }

  root(): HorizonReply {
    const l = this.net.latestLedger;
    return {
      status: 200,
      body: {
        horizon_version: VERSION,
        core_version: "localnet (no stellar-core)",
        ingest_latest_ledger: l.sequence,
        history_latest_ledger: l.sequence,
        history_latest_ledger_closed_at: iso(l.closeTime),
        history_elder_ledger: this.net.oldestLedger.sequence,
        core_latest_ledger: l.sequence,
        network_passphrase: this.net.passphrase,
        current_protocol_version: PROTOCOL_VERSION,
        supported_protocol_version: PROTOCOL_VERSION,
        core_supported_protocol_version: PROTOCOL_VERSION,
      },
    };
  }
}
