/** Structured JSON logs (pino). Secrets are never passed to it; `redact` is a second line of defence. */
import pino from "pino";

export type Logger = pino.Logger;

export function createLogger(level = process.env.LOG_LEVEL ?? "info"): Logger {
  return pino({ level, base: undefined, redact: { paths: ["*.secret", "*.secretKey", "*.apiKey", "*.authorization", "*.transaction"], censor: "[redacted]" } });
}
