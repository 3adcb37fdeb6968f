/** The relay's environment, validated once at boot with a TypeBox schema. */
import { Type, type Static, type TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import type { FeePercentile } from "./network/gateway.ts";
import { parseKey } from "./kernel/config-keys.ts";
import { parsePkcs11Uri } from "./kernel/pkcs11/uri.ts";
import { DEFAULT_MEMORY_CHECKPOINTS } from "./store/checkpoints.ts";
import { PolicyPatch } from "./features/projects/project.model.ts";

const PERCENTILES: FeePercentile[] = ["p10", "p20", "p30", "p40", "p50", "p60", "p70", "p80", "p90", "p95", "p99"];
const NumberFromEnv = (def: number, min = 0) => Type.Number({ default: def, minimum: min });

const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;
const oneOf = <T extends string>(values: readonly T[], def: T) =>
  Type.Unsafe<T>(
    Type.Union(
      values.map((v) => Type.Literal(v)),
      { default: def },
    ),
  );

/** ANONYMOUS_POLICY's fields: the admin API's policy fields (null: the default). */
export const AnonymousPolicyPatch = PolicyPatch;
export type AnonymousPolicyPatch = PolicyPatch;

export const ConfigSchema = Type.Object({
  PORT: Type.Integer({ default: 3000, minimum: 0, maximum: 65535 }),
  LOG_LEVEL: oneOf(LOG_LEVELS, "info"),
  /** json (lines for machines) or pretty (pino-pretty, for people); unset: pretty on a terminal, else json. */
  LOG_FORMAT: Type.Optional(Type.Union([Type.Literal("json"), Type.Literal("pretty")])),
  DATA_DIR: Type.String({ default: "./.data" }),
  DATABASE_URL: Type.Optional(Type.String({ minLength: 1 })),
  /** A Postgres schema for every table (tests isolate suites with it); default: the search path's. */
  DATABASE_SCHEMA: Type.Optional(Type.String({ pattern: "^[a-z_][a-z0-9_]*$", description: "a lowercase SQL name" })),
  LEDGER_CLOSE_MS: NumberFromEnv(5000),
  LOCALNET_MAX_TX_SET_SIZE: NumberFromEnv(1000, 1),
  /** The networks this relay serves, comma-separated: testnet, mainnet or both (a cluster may be mainnet-only). */
  NETWORKS: Type.String({ default: "testnet,mainnet", pattern: "^(testnet|mainnet)(,(testnet|mainnet))?$" }),
  TESTNET_RPC_URL: Type.Optional(Type.String({ minLength: 1 })),
  MAINNET_RPC_URL: Type.Optional(Type.String({ minLength: 1 })),
  TESTNET_PASSPHRASE: Type.Optional(Type.String({ minLength: 1 })),
  MAINNET_PASSPHRASE: Type.Optional(Type.String({ minLength: 1 })),
  /** The account that funds the channel accounts of an upstream network (the embedded ones have their own). */
  TESTNET_FUNDER_SECRET: Type.Optional(
    Type.String({ pattern: "^S[A-Z2-7]{55}$", description: "a Stellar secret seed (S…, 56 characters)" }),
  ),
  MAINNET_FUNDER_SECRET: Type.Optional(
    Type.String({ pattern: "^S[A-Z2-7]{55}$", description: "a Stellar secret seed (S…, 56 characters)" }),
  ),
  /**
   * The funder's key in a PKCS#11 token instead of its seed: an RFC 7512 URI naming the token, the key's
   * label and the module (pkcs11:token=<label>;object=<label>?module-path=...&pin-source=file:...).
   */
  TESTNET_FUNDER_SIGNER: Type.Optional(Type.String({ minLength: 1 })),
  MAINNET_FUNDER_SIGNER: Type.Optional(Type.String({ minLength: 1 })),
  /** Where new channel accounts' keys are made: sealed (in the database) or pkcs11 (in CHANNEL_SIGNER's token). */
  CHANNEL_KEYS: Type.Union([Type.Literal("sealed"), Type.Literal("pkcs11")], { default: "sealed" }),
  /** The PKCS#11 token of the channels' keys (a URI naming the token, the module and the PIN). */
  CHANNEL_SIGNER: Type.Optional(Type.String({ minLength: 1 })),
  /** Channel accounts of a new pool (afterwards the admin API's count is kept). */
  TESTNET_CHANNELS: NumberFromEnv(4, 1),
  MAINNET_CHANNELS: NumberFromEnv(4, 1),
  /** The most channels demand may grow a pool to (default: 8 times its channel count). */
  TESTNET_CHANNELS_MAX: Type.Optional(Type.Number({ minimum: 1 })),
  MAINNET_CHANNELS_MAX: Type.Optional(Type.Number({ minimum: 1 })),
  /** How long no request may wait for a channel before the channels added for demand are retired. */
  POOL_IDLE_MS: NumberFromEnv(60_000, 0),
  /** Lumens (stroops) a new channel account starts with, and is topped up to. */
  CHANNEL_STARTING_BALANCE: Type.String({
    pattern: "^[0-9]{8,18}$",
    default: "100000000",
    description: "stroops: 8 to 18 digits",
  }),
  /** A channel whose balance falls under this (stroops) is topped up; default: half the starting balance. */
  CHANNEL_TOPUP_THRESHOLD: Type.Optional(
    Type.String({ pattern: "^[0-9]{1,18}$", description: "stroops: 1 to 18 digits" }),
  ),
  /** A project's testnet fees a day unless its policy sets testnetDailySpendLimit (stroops; none: no such limit). */
  PROJECT_TESTNET_DAILY_SPEND_LIMIT: Type.String({
    pattern: "^([0-9]{1,18}|none)$",
    default: "1000000000",
    description: "stroops (1 to 18 digits) or none",
  }),
  /** How long a request waits for a channel account that can pay its fee. */
  CHANNEL_WAIT_MS: NumberFromEnv(5000, 0),
  /** 32 bytes, base64 or hex, that seal channel secret keys; default: a key generated into DATA_DIR. */
  // its length and form are checked by parseKey (deeper): one message that says what it must be
  CHANNEL_ENCRYPTION_KEY: Type.Optional(Type.String()),
  SUBMISSION_TIMEOUT_MS: NumberFromEnv(30_000, 1),
  TRY_AGAIN_LATER_MS: NumberFromEnv(10_000, 0),
  /** Order flow: how long a transaction is held for its predecessor in its source account's order. */
  SEQUENCE_HOLD_MS: NumberFromEnv(30_000, 0),
  /** Order flow: transactions held at once per project (or anonymous client IP), and per source account. */
  SEQUENCE_MAX_HELD_PER_PROJECT: NumberFromEnv(1_000, 1),
  SEQUENCE_MAX_HELD_PER_ACCOUNT: NumberFromEnv(100, 1),
  /** Order flow: bytes of held transactions (as sent, base64) at once per project (or anonymous client IP). */
  SEQUENCE_MAX_HELD_BYTES_PER_PROJECT: NumberFromEnv(16 * 1024 * 1024, 1024),
  FEE_PERCENTILE: oneOf(PERCENTILES, "p70"),
  MAX_FEE_RATE: NumberFromEnv(100_000, 100),
  IDEMPOTENCY_TTL_MS: NumberFromEnv(24 * 3600 * 1000, 1),
  MAX_BODY_BYTES: NumberFromEnv(262_144, 1024),
  /** While the relay is busy, how long a /v1 request waits for those after it to go on together (0: never). */
  GATHER_MS: NumberFromEnv(25, 0),
  /** The longest time between two polls of an upstream network's latest ledger. */
  WATCHER_POLL_MS: NumberFromEnv(1000, 10),
  /** The poll period from shortly before an upstream ledger's expected close until it is seen. */
  WATCHER_FAST_POLL_MS: NumberFromEnv(20, 5),
  /** The longest one call to a network's RPC may take before the relay gives up on it. */
  RPC_TIMEOUT_MS: NumberFromEnv(5000, 50),
  /** How often submissions without an outcome (a crash, an unanswered 504) are resolved against the network. */
  RECOVERY_INTERVAL_MS: NumberFromEnv(10_000, 100),
  /** On SIGTERM: how long requests in flight may take to finish before the relay stops anyway. */
  SHUTDOWN_GRACE_MS: NumberFromEnv(30_000, 0),
  TRUST_PROXY: Type.Boolean({ default: false }),
  /** Bearer token of the admin API; without it the admin API answers 404. */
  ADMIN_TOKEN: Type.Optional(Type.String({ minLength: 16 })),
  /** How long an operator console session lasts (seconds) before signing in again. */
  ADMIN_SESSION_TTL_S: NumberFromEnv(8 * 3600, 60),
  REDIS_URL: Type.Optional(Type.String({ minLength: 1 })),
  /** Prefix of the relay's Redis keys. */
  REDIS_PREFIX: Type.String({ default: "relay:" }),
  CHECKPOINT_DEBOUNCE_MS: NumberFromEnv(250, 0),
  /**
   * This instance's name among several (logs, leases); default: the host name, pid and a random part
   * (a restarted container has its predecessor's host name and pid; it must not inherit its leases).
   */
  INSTANCE_ID: Type.Optional(
    Type.String({ pattern: "^[A-Za-z0-9_.:-]{1,100}$", description: "1 to 100 of A-Z a-z 0-9 _ . : -" }),
  ),
  /** Several instances: how long a dead instance's channel accounts and upkeep stay its own. */
  CLUSTER_LEASE_MS: NumberFromEnv(6000, 300),
  /** Several instances: how often each reads the keys revoked and projects changed elsewhere (a missed notice). */
  CLUSTER_CHECK_MS: Type.Number({ default: 5000, minimum: 50, maximum: 25_000 }),
  /** JSON policy fields overriding the anonymous testnet relay's defaults (per client IP). */
  ANONYMOUS_POLICY: Type.Optional(Type.String({ minLength: 2 })),
  ANONYMOUS_MAX_CLIENTS: NumberFromEnv(10_000, 1),
  /** Entries of the in-memory checkpoint store (without REDIS_URL); the least recently used beyond are dropped. */
  CHECKPOINT_MEMORY_MAX_ENTRIES: NumberFromEnv(DEFAULT_MEMORY_CHECKPOINTS, 1),
  /** GET /v1/events: the longest time between two reads of new events (one reader per instance). */
  EVENTS_POLL_MS: NumberFromEnv(250, 10),
  /** GET /v1/events: streams one project may have open on one instance (more: 429). */
  EVENTS_STREAMS_PER_PROJECT: NumberFromEnv(10, 1),
  /** GET /v1/transactions/{hash}?wait: look-ups waiting at once per project, and per client IP without a key, per instance. */
  WAITERS_PER_PROJECT: NumberFromEnv(100, 1),
  WAITERS_PER_IP: NumberFromEnv(10, 1),
  /** GET /v1/transactions/{hash}?wait: a waiting look-up is woken by its status events; it reads anyway this often. */
  WAIT_POLL_MS: NumberFromEnv(2000, 50),
  /** GET /v1/events: a `: heartbeat` comment line this often. */
  EVENTS_HEARTBEAT_MS: NumberFromEnv(15_000, 10),
  /** Events are deleted this many hours after they were written (at least 24: Last-Event-ID resumes within a day). */
  EVENTS_RETENTION_HOURS: NumberFromEnv(48, 24),
  /** Strict-Transport-Security max-age in seconds; 0: no HSTS header. */
  HSTS_MAX_AGE: NumberFromEnv(0, 0),
  /** Bearer token of GET /metrics; unset: /metrics is open (keep the port private). */
  METRICS_TOKEN: Type.Optional(Type.String({ minLength: 16 })),
  /** Webhooks: URLs whose host is or resolves to a loopback, private or link-local address are allowed (never in production). */
  WEBHOOK_ALLOW_PRIVATE: Type.Boolean({ default: false }),
  /** Webhooks: how often each instance turns new events into deliveries and sends the due ones. */
  WEBHOOK_POLL_MS: NumberFromEnv(1000, 10),
  /** Webhooks: the first retry's delay; the later ones are multiples of it (5 s: 30 s, 2 min, ... and 24 h in all). */
  WEBHOOK_RETRY_BASE_MS: NumberFromEnv(5000, 10),
  /** Webhooks: a delivery without an answer within this long fails (and is retried). */
  WEBHOOK_TIMEOUT_MS: NumberFromEnv(10_000, 100),
  /** Origins browsers may call the relay from: comma-separated `scheme://host[:port]`, or `*`; unset: no CORS headers. */
  CORS_ORIGINS: Type.Optional(
    Type.String({
      pattern: "^\\s*(\\*|[a-z][a-z0-9+.-]*://[^/,\\s]+)\\s*(,\\s*(\\*|[a-z][a-z0-9+.-]*://[^/,\\s]+)\\s*)*$",
      description: "comma-separated origins (scheme://host[:port]) or *",
    }),
  ),
});
export type Config = Static<typeof ConfigSchema>;

/** Every problem with the configuration, one line each (values of secrets are never echoed). */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration: ${problems.join("; ")}`);
  }
}

const SECRET = /SECRET|TOKEN|KEY|DATABASE_URL|REDIS_URL|RPC_URL|SIGNER/;

/** One line for a schema error: the variable, what it must be (allowed values listed), and the value if not secret. */
function problem(key: string, schema: TSchema | undefined, given: unknown, message: string): string {
  const allowed = (schema?.anyOf as { const?: unknown }[] | undefined)
    ?.map((s) => s.const)
    .filter((v) => v !== undefined);
  const what = allowed?.length
    ? `must be one of ${allowed.join(", ")}`
    : schema?.description && schema.pattern
      ? `must be ${schema.description}`
      : schema?.maximum !== undefined
        ? `must be a whole number from ${schema.minimum ?? 0} to ${schema.maximum}`
        : schema?.type === "number"
          ? `must be a number of at least ${schema.minimum ?? 0}`
          : schema?.type === "string" && typeof schema.minLength === "number" && schema.minLength > 1
            ? `must be at least ${schema.minLength} characters`
            : message;
  return `${key} ${what}${SECRET.test(key) || given === undefined ? "" : ` (got ${JSON.stringify(given)})`}`;
}

/** Checks a value beyond its schema; the problem's line, or null. */
function deeper(config: Config, skip: Map<string, string>): string[] {
  const out: string[] = [];
  const check = (what: string, fn: () => unknown) => {
    if (skip.has(what)) return;
    try {
      fn();
    } catch (e) {
      const message = (e instanceof Error ? e.message : String(e))
        .replace(/^invalid configuration: /, "")
        .replace(`${what} `, "");
      out.push(`${what}: ${message}`);
    }
  };
  check("ANONYMOUS_POLICY", () => anonymousPolicyPatch(config.ANONYMOUS_POLICY));
  if (config.CHANNEL_ENCRYPTION_KEY)
    check("CHANNEL_ENCRYPTION_KEY", () => parseKey(config.CHANNEL_ENCRYPTION_KEY!, "CHANNEL_ENCRYPTION_KEY"));
  const url = (key: "DATABASE_URL" | "REDIS_URL" | "TESTNET_RPC_URL" | "MAINNET_RPC_URL", protocols: string[]) => {
    const v = config[key];
    if (v === undefined || skip.has(key)) return;
    let ok = false;
    try {
      ok = protocols.includes(new URL(v).protocol);
    } catch {
      /* not a URL */
    }
    if (!ok) out.push(`${key} must be a URL (${protocols.map((p) => `${p}//…`).join(" or ")})`);
  };
  for (const n of ["TESTNET", "MAINNET"] as const) {
    const signer = config[`${n}_FUNDER_SIGNER`];
    if (signer === undefined) continue;
    check(`${n}_FUNDER_SIGNER`, () => parsePkcs11Uri(`${n}_FUNDER_SIGNER`, signer, "object"));
    if (config[`${n}_FUNDER_SECRET`]) out.push(`set ${n}_FUNDER_SIGNER or ${n}_FUNDER_SECRET, not both`);
  }
  if (config.CHANNEL_SIGNER !== undefined)
    check("CHANNEL_SIGNER", () => parsePkcs11Uri("CHANNEL_SIGNER", config.CHANNEL_SIGNER!, "token"));
  if (config.CHANNEL_KEYS === "pkcs11" && config.CHANNEL_SIGNER === undefined)
    out.push("CHANNEL_KEYS=pkcs11 needs CHANNEL_SIGNER: the URI of the token the channels' keys are made in");
  const networks = config.NETWORKS.split(",");
  if (new Set(networks).size !== networks.length) out.push("NETWORKS names a network twice");
  url("DATABASE_URL", ["postgres:", "postgresql:"]);
  url("REDIS_URL", ["redis:", "rediss:"]);
  url("TESTNET_RPC_URL", ["http:", "https:"]);
  url("MAINNET_RPC_URL", ["http:", "https:"]);
  return out;
}

/**
 * Parses `env` (strings) into a typed config, checking everything before any start-up work;
 * throws a ConfigError with every problem. Secrets are never echoed.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const raw = Object.fromEntries(
    Object.keys(ConfigSchema.properties)
      .filter((k) => env[k] !== undefined && env[k] !== "")
      .map((k) => [k, env[k]]),
  );
  const value = Value.Default(ConfigSchema, Value.Convert(ConfigSchema, raw)) as Config;
  const problems = new Map<string, string>();
  for (const e of Value.Errors(ConfigSchema, value)) {
    const key = e.path.slice(1);
    if (!problems.has(key))
      problems.set(key, problem(key, ConfigSchema.properties[key as keyof Config] as TSchema, raw[key], e.message));
  }
  const all = [...problems.values(), ...deeper(value, problems)];
  if (all.length) throw new ConfigError(all);
  return value;
}

/** The ANONYMOUS_POLICY overrides of the anonymous relay's defaults (JSON, the admin API's policy fields); none if unset. */
export function anonymousPolicyPatch(json: string | undefined): AnonymousPolicyPatch {
  if (!json) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    throw new Error("invalid configuration: ANONYMOUS_POLICY is not JSON");
  }
  const errors = [...Value.Errors(AnonymousPolicyPatch, parsed)];
  if (errors.length)
    throw new Error(
      `invalid configuration: ANONYMOUS_POLICY ${errors.map((e) => `${e.path.slice(1)} ${e.message}`).join("; ")}`,
    );
  return parsed as AnonymousPolicyPatch;
}
