/** Request and response models (TypeBox via Elysia's `t`): the routes validate with them and OpenAPI is generated from them. */
import { t } from "elysia";

const network = t.Union([t.Literal("testnet"), t.Literal("mainnet")], { error: "network must be testnet or mainnet", description: "Target network" });
const transaction = t.String({ minLength: 1, error: "transaction must be a base64 XDR TransactionEnvelope", description: "Base64 XDR of a signed transaction (or of a fee-bump, which the relay re-wraps)" });
const stroops = (description: string) => t.String({ pattern: "^[0-9]+$", description: `${description}, in stroops` });

const operation = t.String({ minLength: 1, error: "operation must be a base64 XDR Operation", description: "Base64 XDR of an invokeHostFunction Operation with its signed authorization entries (func+auth mode, instead of transaction)" });
export const SponsorBody = t.Object({ transaction: t.Optional(transaction), operation: t.Optional(operation), network }, { additionalProperties: true });
export const SponsorResponse = t.Object({
  hash: t.String({ description: "Hash of the fee-bump transaction" }),
  feePaid: stroops("Fee the network charged"),
  ledger: t.Number({ description: "Ledger that included the transaction" }),
  resultXdr: t.String({ description: "Base64 TransactionResult" }),
});

export const NetworkOptionalBody = t.Object({ transaction, network: t.Optional(network) }, { additionalProperties: true });

export const SimulateResponse = t.Object({
  resourceFee: stroops("Minimum resource fee"),
  latestLedger: t.Number(),
  transactionData: t.String({ description: "Base64 SorobanTransactionData with the footprint and resources" }),
  events: t.Array(t.Object({
    type: t.Union([t.Literal("contract"), t.Literal("diagnostic"), t.Literal("system")]),
    contractId: t.Union([t.String(), t.Null()]),
    topics: t.Array(t.String({ description: "Base64 ScVal" })),
    data: t.String({ description: "Base64 ScVal" }),
    inSuccessfulContractCall: t.Boolean(),
    xdr: t.String({ description: "Base64 DiagnosticEvent" }),
  })),
  results: t.Array(t.Object({ auth: t.Array(t.String({ description: "Base64 SorobanAuthorizationEntry" })), retval: t.String({ description: "Base64 ScVal return value" }) })),
});

export const EstimateResponse = t.Object({
  estimatedFee: stroops("Total estimated fee"),
  breakdown: t.Object({ baseFee: stroops("Inclusion fee the relay would bid for the fee-bump"), resourceFee: stroops("Soroban resource fee") }),
});

export const ErrorResponse = t.Object({
  error: t.Object({ code: t.String(), message: t.String(), details: t.Optional(t.Record(t.String(), t.Unknown())), requestId: t.String() }),
});

export const NetworkHealth = t.Object({
  status: t.Union([t.Literal("ok"), t.Literal("degraded"), t.Literal("down")], { description: "down: the last poll failed (or none succeeded yet); degraded: a recent failure or a stale ledger" }),
  upstream: t.String({ description: "localnet, or the upstream RPC's host" }),
  latestLedger: t.Number({ description: "Latest ledger seen (0: none yet)" }),
  lastLedgerAgeMs: t.Union([t.Number(), t.Null()], { description: "Time since the latest ledger was first seen; null before the first" }),
  failingForMs: t.Union([t.Number(), t.Null()], { description: "While polls fail: time since the first failed one; else null" }),
  lastError: t.Union([t.String(), t.Null()], { description: "The last poll's failure, or a recent call's; null when none" }),
});
export const HealthResponse = t.Object({
  status: t.Union([t.Literal("ok"), t.Literal("degraded"), t.Literal("down")]),
  version: t.String(),
  uptimeSeconds: t.Number(),
  networks: t.Record(t.String(), NetworkHealth),
  storage: t.Object({ database: t.String(), status: t.String(), checkpoints: t.String({ description: "redis or memory" }) }),
});
