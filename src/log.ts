/** Structured JSON logs (pino). Secrets are never passed to it; `redact` is a second line of defence. */
import pino from "pino";

export type Logger = pino.Logger;

/** A logger writing JSON lines to stdout, or to `destination` (tests capture the lines with one). */
export function createLogger(level = process.env.LOG_LEVEL ?? "info", destination?: pino.DestinationStream): Logger {
  const redact = {
    paths: ["*.secret", "*.secretKey", "*.apiKey", "*.authorization", "*.transaction"],
    censor: "[redacted]",
  };
  const options = { level, base: undefined, redact };
  return destination ? pino(options, destination) : pino(options);
}
