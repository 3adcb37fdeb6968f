/**
 * The relay's domain errors: a code, a message, details and, for errors worth retrying later, how
 * long to wait. Nothing here knows HTTP: src/http/errors.ts maps each code to its status and
 * `retryAfter` to the Retry-After header.
 */
export const ERROR_CODES = [
  "VALIDATION_ERROR",
  "UNAUTHORIZED",
  "INSUFFICIENT_CREDITS",
  "FORBIDDEN",
  "POLICY_VIOLATION",
  "NOT_FOUND",
  "PAYLOAD_TOO_LARGE",
  "SUBMISSION_FAILED",
  "SIMULATION_FAILED",
  "IDEMPOTENCY_KEY_REUSED",
  "RATE_LIMIT_EXCEEDED",
  "INTERNAL_ERROR",
  "NETWORK_UNAVAILABLE",
  "SUBMISSION_TIMEOUT",
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

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

export const validationError = (message: string, details: Record<string, unknown>) =>
  new RelayError("VALIDATION_ERROR", message, details);

export const unavailable = (message: string, details: Record<string, unknown> | undefined, retryAfter: number) =>
  new RelayError("NETWORK_UNAVAILABLE", message, details, { retryAfter });
