/**
 * The HTTP side of the relay's errors (src/kernel/errors.ts): each code's status, the one table for it,
 * and the spec's envelope `{ error: { code, message, details?, requestId } }`. A domain error's
 * `retryAfter` becomes the Retry-After header here; nothing outside src/http knows statuses.
 */
import { type ErrorCode, type ErrorData, RelayError } from "../kernel/errors.ts";

export const ERROR_STATUS: Record<ErrorCode, number> = {
  VALIDATION_ERROR: 400,
  UNAUTHORIZED: 401,
  KEY_EXPIRED: 401,
  INSUFFICIENT_CREDITS: 402,
  FORBIDDEN: 403,
  SCOPE_REQUIRED: 403,
  POLICY_VIOLATION: 403,
  SPONSORSHIP_DENIED: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  PAYLOAD_TOO_LARGE: 413,
  SUBMISSION_FAILED: 422,
  SIMULATION_FAILED: 422,
  IDEMPOTENCY_KEY_REUSED: 422,
  RATE_LIMIT_EXCEEDED: 429,
  USER_LIMIT_EXCEEDED: 429,
  INTERNAL_ERROR: 500,
  NETWORK_UNAVAILABLE: 503,
  SUBMISSION_TIMEOUT: 504,
  NETWORK_NOT_SERVED: 400,
};

export interface ErrorEnvelope {
  error: { code: ErrorCode; message: string; details?: Record<string, unknown>; requestId: string };
}

export function envelope(e: ErrorData, requestId: string): ErrorEnvelope {
  return { error: { code: e.code, message: e.message, ...(e.details ? { details: e.details } : {}), requestId } };
}

/** The headers an error adds to its answer. */
export function errorHeaders(e: ErrorData): Record<string, string> {
  return e.retryAfter !== undefined ? { "retry-after": String(e.retryAfter) } : {};
}

/** An error whose answer needs a header of HTTP's own (WWW-Authenticate). */
export class HttpError extends RelayError {
  constructor(
    code: ErrorCode,
    message: string,
    readonly headers: Record<string, string>,
  ) {
    super(code, message);
  }
}
