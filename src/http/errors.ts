/**
 * The relay's error codes and their HTTP status: the one table for both. Every error response is
 * the spec's envelope `{ error: { code, message, details?, requestId } }`.
 */
export const ERROR_STATUS = {
  VALIDATION_ERROR: 400,
  UNAUTHORIZED: 401,
  INSUFFICIENT_CREDITS: 402,
  FORBIDDEN: 403,
  POLICY_VIOLATION: 403,
  NOT_FOUND: 404,
  PAYLOAD_TOO_LARGE: 413,
  SUBMISSION_FAILED: 422,
  SIMULATION_FAILED: 422,
  IDEMPOTENCY_KEY_REUSED: 422,
  RATE_LIMIT_EXCEEDED: 429,
  INTERNAL_ERROR: 500,
  NETWORK_UNAVAILABLE: 503,
  SUBMISSION_TIMEOUT: 504,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** An error the relay answers with; `headers` adds e.g. Retry-After. */
export class RelayError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

export interface ErrorEnvelope {
  error: { code: ErrorCode; message: string; details?: Record<string, unknown>; requestId: string };
}

export function envelope(e: RelayError, requestId: string): ErrorEnvelope {
  return { error: { code: e.code, message: e.message, ...(e.details ? { details: e.details } : {}), requestId } };
}

export const validationError = (message: string, details: Record<string, unknown>) =>
  new RelayError("VALIDATION_ERROR", message, details);
