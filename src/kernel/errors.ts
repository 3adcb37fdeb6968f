/**
 * The relay's domain errors: a code, a message, details and, for errors worth retrying later, how
 * long to wait. Nothing here knows HTTP: src/http/errors.ts maps each code to its status and
 * `retryAfter` to the Retry-After header.
 */
import type { Reason } from "./reasons.ts";

export const ERROR_CODES = [
  "VALIDATION_ERROR",
  "UNAUTHORIZED",
  "KEY_EXPIRED",
  "INSUFFICIENT_CREDITS",
  "FORBIDDEN",
  "SCOPE_REQUIRED",
  "POLICY_VIOLATION",
  "SPONSORSHIP_DENIED",
  "NOT_FOUND",
  "METHOD_NOT_ALLOWED",
  "PAYLOAD_TOO_LARGE",
  "SUBMISSION_FAILED",
  "SIMULATION_FAILED",
  "IDEMPOTENCY_KEY_REUSED",
  "RATE_LIMIT_EXCEEDED",
  "USER_LIMIT_EXCEEDED",
  "INTERNAL_ERROR",
  "NETWORK_UNAVAILABLE",
  "SUBMISSION_TIMEOUT",
  "NETWORK_NOT_SERVED",
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** What each code means to a caller (the OpenAPI document's descriptions; src/http/errors.ts has the statuses). */
export const ERROR_DESCRIPTIONS: Record<ErrorCode, string> = {
  VALIDATION_ERROR: "the request is invalid: a bad or unknown body field, bad XDR, a bad header or hostile input",
  UNAUTHORIZED: "a missing, malformed, unknown or revoked API key (mainnet needs one), or no admin token",
  KEY_EXPIRED:
    "the API key's expiresAt has passed (set at creation, or the end of a rotation's overlap): use its successor",
  INSUFFICIENT_CREDITS: "the project's credit balance cannot cover the most this fee may cost",
  FORBIDDEN: "the key is for the other network, or the project is suspended",
  SCOPE_REQUIRED: "the API key's scopes do not include what this call needs (details.scope)",
  POLICY_VIOLATION: "a rule of the project's policy refuses it (details.rule)",
  SPONSORSHIP_DENIED: "the project's approval server denied it, or did not answer usably (details.reason)",
  NOT_FOUND: "no such route, project, key, webhook or transaction (for this caller)",
  METHOD_NOT_ALLOWED: "the path exists, not with this method: the Allow header lists its methods",
  PAYLOAD_TOO_LARGE: "the body is over MAX_BODY_BYTES",
  SUBMISSION_FAILED: "the network refused the transaction, or included it and it failed (details.result_codes)",
  SIMULATION_FAILED: "the contract failed or panicked in simulation (details.events)",
  IDEMPOTENCY_KEY_REUSED: "this idempotency key was used with another body",
  RATE_LIMIT_EXCEEDED:
    "the project's or client IP's request bucket is empty, or it has as many event streams or waiting look-ups open as it may (details.limit): retry after Retry-After seconds",
  USER_LIMIT_EXCEEDED:
    "this end user reached a perUser cap of the project's policy today (details.user, limit, resetAt): retry after Retry-After seconds",
  INTERNAL_ERROR: "a bug in the relay: nothing about it is in the answer, it is logged with the request id",
  NETWORK_UNAVAILABLE: "the network cannot be reached or answers unusably: retry after Retry-After seconds",
  SUBMISSION_TIMEOUT:
    "the outcome is not known yet (details.hash): retry, or look the transaction up, to get the network's verdict",
  NETWORK_NOT_SERVED: "this relay does not serve the network asked for (NETWORKS): a retry gets the same answer",
};

/** An error as data (kept in outcomes and replayed). */
export interface ErrorData {
  code: ErrorCode;
  message: string;
  details?: Record<string, unknown>;
  /** Seconds the caller should wait before retrying. */
  retryAfter?: number;
}

export class RelayError extends Error {
  readonly retryAfter?: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    opts: { retryAfter?: number } = {},
  ) {
    super(message);
    if (opts.retryAfter !== undefined) this.retryAfter = opts.retryAfter;
  }

  static from(d: ErrorData): RelayError {
    return new RelayError(d.code, d.message, d.details, { retryAfter: d.retryAfter });
  }

  data(): ErrorData {
    return {
      code: this.code,
      message: this.message,
      ...(this.details ? { details: this.details } : {}),
      ...(this.retryAfter !== undefined ? { retryAfter: this.retryAfter } : {}),
    };
  }
}

/** Errors that say "not known or not possible yet": a retry may succeed, so their outcome is not kept. */
export const isRetryable = (code: ErrorCode): boolean =>
  code === "NETWORK_UNAVAILABLE" || code === "SUBMISSION_TIMEOUT";

/** A VALIDATION_ERROR; its details.reason is one of src/kernel/reasons.ts's codes (the prose is the message). */
export const validationError = (message: string, details: { reason: Reason } & Record<string, unknown>) =>
  new RelayError("VALIDATION_ERROR", message, details);

export const unavailable = (message: string, details: Record<string, unknown> | undefined, retryAfter: number) =>
  new RelayError("NETWORK_UNAVAILABLE", message, details, { retryAfter });
