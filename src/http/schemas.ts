/**
 * HTTP's own models (TypeBox via Elysia's `t`): the error envelope and the health answers. The routes
 * validate with them and OpenAPI is generated from them; request bodies and
 * what domain code answers are in each feature's *.model.ts.
 * A schema with a `$id` is one component of the OpenAPI document (components.schemas, referenced where it is used).
 */
import { t } from "elysia";
import type { ErrorCode as Code } from "../kernel/errors.ts";
import { ERROR_STATUS } from "./errors.ts";

const CODES = Object.keys(ERROR_STATUS) as [Code, ...Code[]];
// Elysia's UnionEnum defaults to its first value (for its own messages): an answer's code has no default
const ErrorCode = t.UnionEnum(CODES, {
  $id: "ErrorCode",
  default: undefined,
  description: "The error's code; each code has one HTTP status (docs/api.md)",
});
export const ErrorResponse = t.Object(
  {
    error: t.Object({
      code: ErrorCode,
      message: t.String(),
      details: t.Optional(
        t.Record(t.String(), t.Unknown(), { description: "Depends on the code: reason, field, hash, result_codes..." }),
      ),
      requestId: t.String({ description: "Equal to the X-Request-Id header" }),
    }),
  },
  { $id: "ErrorResponse" },
);

/** A route's error answers by status (the envelope for each), for its `response`. */
export const errorResponses = <const S extends number>(...statuses: S[]) =>
  Object.fromEntries(statuses.map((s) => [s, ErrorResponse])) as Record<S, typeof ErrorResponse>;
/**
 * What any /v1 route of the relay (not the admin API) can answer besides its own work: bad or hostile input (400), a bad
 * key (401), a key for the other network or a suspended project (403), a body too large (413), the rate limit (429), a bug (500).
 */
export const V1_ERRORS = errorResponses(400, 401, 403, 413, 429, 500);

/** How a key signs: its seed in the settings, sealed in the database, or in a PKCS#11 token (its label). */
const KeySigner = t.Object({
  kind: t.Union([t.Literal("seed"), t.Literal("sealed"), t.Literal("pkcs11")]),
  token: t.Optional(t.String({ description: "The PKCS#11 token's label (pkcs11 only)" })),
});

export const NetworkHealth = t.Object(
  {
    status: t.Union([t.Literal("ok"), t.Literal("degraded"), t.Literal("down")], {
      description: "down: the last poll failed (or none succeeded yet); degraded: a recent failure or a stale ledger",
    }),
    upstream: t.String({ description: "localnet, or the upstream RPC's host" }),
    latestLedger: t.Number({ description: "Latest ledger seen (0: none yet)" }),
    lastLedgerAgeMs: t.Union([t.Number(), t.Null()], {
      description: "Time since the latest ledger was first seen; null before the first",
    }),
    failingForMs: t.Union([t.Number(), t.Null()], {
      description: "While polls fail: time since the first failed one; else null",
    }),
    lastError: t.Union([t.String(), t.Null()], {
      description: "The last poll's failure, or a recent call's; null when none",
    }),
    signer: t.Optional(
      t.Object(
        { funder: KeySigner, channels: KeySigner },
        { description: "What signs for the network's pool: its funder, and new channel accounts" },
      ),
    ),
  },
  { $id: "NetworkHealth" },
);
export const HealthResponse = t.Object(
  {
    status: t.Union([t.Literal("ok"), t.Literal("degraded"), t.Literal("down"), t.Literal("starting")], {
      description: "starting (503) until the relay can serve sponsorships; down (503) when every network is down",
    }),
    starting: t.Optional(t.Array(t.String(), { description: "What is still starting (status starting)" })),
    version: t.String(),
    uptimeSeconds: t.Number(),
    networks: t.Object(
      { testnet: t.Optional(NetworkHealth), mainnet: t.Optional(NetworkHealth) },
      { description: "The networks the relay serves" },
    ),
    storage: t.Object({
      database: t.String(),
      status: t.String(),
      checkpoints: t.String({ description: "redis or memory" }),
    }),
  },
  { $id: "HealthResponse" },
);
