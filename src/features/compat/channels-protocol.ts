/**
 * The protocol of OpenZeppelin's channels plugin (what `ChannelsClient` from
 * `@openzeppelin/relayer-plugin-channels` speaks in direct-HTTP mode), as the relay speaks it at
 * POST /compat/channels/{network}: a body `{ params }` in one of four shapes (a signed `xdr`, a
 * `func` + `auth` pair, `getTransaction`, `management`), answered `{ success: true, data }` or
 * `{ success: false, error, data: { code, details } }`.
 *
 * This module is the translation, without I/O: the requests parsed, our statuses as theirs, and the
 * one table from our error codes to theirs (with their HTTP statuses). The relay's own API keeps its
 * table (src/http/errors.ts); nothing here changes it.
 */
import { Operation, TransactionBuilder, xdr, type FeeBumpTransaction, type Transaction } from "@stellar/stellar-sdk";
import { type ErrorCode, type ErrorData, RelayError } from "../../kernel/errors.ts";
import type { SubmissionStatus } from "../../../actors/sponsor/submission.machine.ts";
import { type NetworkName, isNetworkName } from "../../stellar/networks.ts";

/** The path the protocol is served under; the network follows (`/compat/channels/testnet`). */
export const CHANNELS_PREFIX = "/compat/channels";

/** An error answered in the plugin's shape: its code and HTTP status (ours kept in `details.relayCode`). */
export class ChannelsError extends RelayError {
  constructor(
    readonly channelsCode: string,
    readonly status: number,
    message: string,
    details?: Record<string, unknown>,
    relayCode: ErrorCode = status >= 500 ? "INTERNAL_ERROR" : "VALIDATION_ERROR",
  ) {
    super(relayCode, message, details);
  }
}

export const invalidParams = (message: string, details?: Record<string, unknown>) =>
  new ChannelsError("INVALID_PARAMS", 400, message, details);

/** A request in one of the plugin's shapes. */
export type ChannelsRequest =
  | { kind: "xdr"; xdr: string; skipWait: boolean }
  | { kind: "func-auth"; func: xdr.HostFunction; auth: xdr.SorobanAuthorizationEntry[]; skipWait: boolean }
  | { kind: "get-transaction"; transactionId: string }
  | { kind: "management"; management: Record<string, unknown> };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function skipWaitOf(p: Record<string, unknown>): boolean {
  if (p.skipWait !== undefined && typeof p.skipWait !== "boolean") throw invalidParams("`skipWait` must be a boolean");
  return p.skipWait === true;
}

function onlyKeys(p: Record<string, unknown>, allowed: string[], what: string): void {
  const unknown = Object.keys(p).filter((k) => !allowed.includes(k));
  if (unknown.includes("fundRelayerId"))
    throw invalidParams("`fundRelayerId` is not supported: the relay's own channel accounts pay every fee", {
      unknown: ["fundRelayerId"],
    });
  if (unknown.length) throw invalidParams(`${what} request must not include other parameters`, { unknown });
}

/** The request in `params` (the body's one field), checked as the plugin checks it. */
export function parseChannelsParams(params: unknown): ChannelsRequest {
  if (!isObject(params)) throw invalidParams("Invalid request: params must be an object");
  if (isObject(params.management)) return { kind: "management", management: params.management };
  if ("getTransaction" in params) {
    onlyKeys(params, ["getTransaction"], "`getTransaction`");
    const gt = params.getTransaction;
    if (!isObject(gt) || typeof gt.transactionId !== "string" || gt.transactionId.trim() === "")
      throw invalidParams("`getTransaction.transactionId` must be a non-empty string");
    onlyKeys(gt, ["transactionId"], "`getTransaction`");
    return { kind: "get-transaction", transactionId: gt.transactionId.trim() };
  }
  if ("xdr" in params) {
    if (typeof params.xdr !== "string" || params.xdr.trim() === "")
      throw invalidParams("`xdr` must be a non-empty base64 string");
    onlyKeys(params, ["xdr", "skipWait"], "`xdr`");
    return { kind: "xdr", xdr: params.xdr.trim(), skipWait: skipWaitOf(params) };
  }
  if ("func" in params || "auth" in params) {
    if (!params.func || !params.auth) throw invalidParams("`func` and `auth` are both required when omitting `xdr`");
    onlyKeys(params, ["func", "auth", "skipWait"], "`func` + `auth`");
    let func: xdr.HostFunction;
    let auth: xdr.SorobanAuthorizationEntry[];
    try {
      if (typeof params.func !== "string") throw new Error("func must be a base64 string");
      if (!Array.isArray(params.auth)) throw new Error("auth must be an array of base64 strings");
      func = xdr.HostFunction.fromXDR(params.func, "base64");
      auth = params.auth.map((a) => {
        if (typeof a !== "string") throw new Error("auth must be an array of base64 strings");
        return xdr.SorobanAuthorizationEntry.fromXDR(a, "base64");
      });
    } catch (e) {
      throw invalidParams("Invalid `func` or `auth` encoding", { message: e instanceof Error ? e.message : String(e) });
    }
    return { kind: "func-auth", func, auth, skipWait: skipWaitOf(params) };
  }
  throw invalidParams("Must pass either `xdr` or `func` and `auth`");
}

/** The network named in the path (the plugin's baseUrl ends with it). */
export function channelsNetwork(name: string | undefined): NetworkName {
  if (name && isNetworkName(name)) return name;
  throw new ChannelsError(
    "UNSUPPORTED_NETWORK",
    400,
    `no network ${JSON.stringify(name ?? "")}: use ${CHANNELS_PREFIX}/testnet or ${CHANNELS_PREFIX}/mainnet as baseUrl`,
  );
}

/** The base64 invokeHostFunction Operation our func+auth mode takes, from the plugin's `func` and `auth`. */
export const operationOf = (func: xdr.HostFunction, auth: xdr.SorobanAuthorizationEntry[]): string =>
  Operation.invokeHostFunction({ func, auth }).toXDR("base64");

/**
 * An unsigned transaction holding one invokeHostFunction operation is run in func+auth mode (as the
 * plugin does); anything else is sponsored as the signed transaction it is. Null: sponsor `xdr` as it is.
 */
export function unsignedInvocation(envelope: string, passphrase: string): string | null {
  let tx: Transaction | FeeBumpTransaction;
  try {
    tx = TransactionBuilder.fromXDR(envelope, passphrase);
  } catch {
    return null; // not an envelope: the sponsor path says what is wrong with it
  }
  if (tx.signatures.length > 0 || !("operations" in tx)) return null;
  const op = tx.operations.length === 1 ? tx.operations[0]! : null;
  if (op?.type !== "invokeHostFunction")
    throw new ChannelsError(
      "INVALID_UNSIGNED_XDR",
      400,
      "Unsigned XDR must contain exactly one invokeHostFunction operation",
      { operationCount: tx.operations.length, operationType: tx.operations[0]?.type },
    );
  return operationOf(op.func, op.auth ?? []);
}

/** Our submission statuses in the plugin's words (an OpenZeppelin relayer transaction's). */
export const CHANNELS_STATUS: Record<SubmissionStatus, string> = {
  pending: "pending",
  submitted: "submitted",
  success: "confirmed",
  failed: "failed",
  rejected: "failed",
  expired: "expired",
};

/** The plugin's answer to a transaction request (ChannelsTransactionResponse). */
export interface ChannelsTransaction {
  transactionId: string | null;
  hash: string | null;
  status: string | null;
  returnValue?: string;
  latestLedger?: number;
}

type Details = Record<string, unknown>;
const code = (channelsCode: string, status: number, details?: Details) => ({ channelsCode, status, details });

interface Translated {
  channelsCode: string;
  status: number;
  message?: string;
  details?: Details;
}

/**
 * The one table: our error -> the plugin's code and HTTP status, where the plugin has one (our code
 * otherwise, with our status). Details are reshaped where the plugin's callers read them.
 */
function translate(e: ErrorData): Translated {
  const d = (e.details ?? {}) as Details;
  switch (e.code) {
    case "VALIDATION_ERROR":
      return code("INVALID_PARAMS", 400, d);
    case "UNAUTHORIZED":
      return code("UNAUTHORIZED", 401, d);
    case "FORBIDDEN":
      return code("FORBIDDEN", 403, d);
    case "KEY_EXPIRED": // the plugin has no such code: its UNAUTHORIZED, details.relayCode says which
      return code("UNAUTHORIZED", 401, d);
    case "SCOPE_REQUIRED": // details.scope names what the key lacks
      return code("FORBIDDEN", 403, d);
    case "INSUFFICIENT_CREDITS": // the project's prepaid budget: the plugin's per-key fee budget
      return code("FEE_LIMIT_EXCEEDED", 429, { ...d, reason: "insufficient_credits" });
    case "POLICY_VIOLATION":
      if (d.rule !== "dailySpendLimit") return code("POLICY_VIOLATION", 403, d);
      return feeLimitExceeded(d);
    case "SUBMISSION_FAILED":
      return onchainFailed(e, d);
    case "SIMULATION_FAILED":
      return /Error\(Auth,|require_auth|signature/i.test(e.message)
        ? {
            ...code("SIMULATION_SIGNED_AUTH_VALIDATION_FAILED", 400, d),
            message: `Signed auth entry validation failed: ${e.message}`,
          }
        : code("SIMULATION_FAILED", 400, d);
    case "NETWORK_UNAVAILABLE":
      if (d.reason === "channels_busy" || d.reason === "channel_balance") return code("POOL_CAPACITY", 503, d);
      if (d.reason === "starting" || d.reason === "not_configured") return code("NO_CHANNELS_CONFIGURED", 503, d);
      return code("NETWORK_UNAVAILABLE", 503, d);
    case "SUBMISSION_TIMEOUT":
      return {
        ...code("WAIT_TIMEOUT", 504, { ...d, id: d.innerHash ?? null, hash: d.hash ?? null }),
        message: `Transaction wait timeout. It may still submit. (${e.message})`,
      };
    case "NOT_FOUND":
      return code("NOT_FOUND", 404, d);
    case "METHOD_NOT_ALLOWED":
      return code("INVALID_PARAMS", 405, d);
    case "PAYLOAD_TOO_LARGE":
      return code("INVALID_PARAMS", 413, d);
    case "SPONSORSHIP_DENIED":
      return code("POLICY_VIOLATION", 403, d);
    case "RATE_LIMIT_EXCEEDED":
    case "USER_LIMIT_EXCEEDED":
      return code("RATE_LIMIT_EXCEEDED", 429, d);
    case "IDEMPOTENCY_KEY_REUSED":
      return code("INVALID_PARAMS", 422, d);
    case "INTERNAL_ERROR":
      return code("INTERNAL_ERROR", 500, d);
    case "NETWORK_NOT_SERVED":
      return code("UNSUPPORTED_NETWORK", 400, d);
    default:
      return e.code satisfies never;
  }
}

/** The daily spend limit as the plugin's fee budget: its numbers under the plugin's names (stroops). */
function feeLimitExceeded(d: Details) {
  const limit = Number(d.limit);
  const consumed = Number(d.spent ?? 0) + Number(d.reserved ?? 0);
  const fee = Number(d.required ?? 0);
  return {
    ...code("FEE_LIMIT_EXCEEDED", 429, { ...d, consumed, fee, remaining: Math.max(0, limit - consumed), limit }),
    message: `Transaction fee (${fee} stroops) exceeds remaining budget (${Math.max(0, limit - consumed)} stroops). Consumed: ${consumed}/${limit} stroops (today, UTC, reservations included).`,
  };
}

/** A transaction the network refused or applied and failed: the plugin's ONCHAIN_FAILED, with its result code. */
function onchainFailed(e: ErrorData, d: Details) {
  const codes = d.result_codes as { transaction?: string; operations?: string[] } | undefined;
  const resultCode = codes?.transaction ?? null;
  const reason = codes?.operations?.find((c) => c !== "op_success") ?? resultCode ?? e.message;
  return {
    ...code("ONCHAIN_FAILED", 400, {
      ...d,
      status: d.status === "expired" ? "expired" : "failed",
      relayStatus: d.status ?? null,
      reason,
      id: d.innerHash ?? null,
      hash: d.hash ?? null,
      resultCode,
    }),
    message: `${e.message}${reason && !e.message.includes(String(reason)) ? ` (${reason})` : ""}`,
  };
}

/** The plugin's failure answer for an error: `{ success: false, error, data: { code, details } }` and its status. */
export function channelsFailure(e: RelayError): { status: number; body: ChannelsFailureBody } {
  if (e instanceof ChannelsError)
    return { status: e.status, body: failureBody(e.message, e.channelsCode, e.details ?? {}) };
  const t: Translated = translate(e.data());
  return {
    status: t.status,
    body: failureBody(t.message ?? e.message, t.channelsCode, { ...(t.details ?? {}), relayCode: e.code }),
  };
}

const failureBody = (error: string, code: string, details: Record<string, unknown>): ChannelsFailureBody => ({
  success: false,
  error,
  data: { code, details },
});

export interface ChannelsFailureBody {
  success: false;
  error: string;
  data: { code: string; details: Record<string, unknown> };
}
