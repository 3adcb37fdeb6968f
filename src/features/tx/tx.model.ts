/**
 * The wire models of /v1/simulate and /v1/estimate (TypeBox): each is the one source of its TypeScript type (`Static<typeof Model>`, exported
 * under the same name) and of its OpenAPI schema (a schema with a `$id` is one component of the
 * document). A model is a leaf: it imports TypeBox, the kernel's wire helpers, the protocol's
 * constants and other models only, so services and the store may use it.
 *
 * TypeBox's Integer, not Elysia's t.Integer: that one also takes (and converts) a numeric string.
 */
import { Type, type Static } from "@sinclair/typebox";
import { t } from "elysia";
import { nullableString, stroops } from "../../kernel/wire.ts";
import { NETWORKS } from "../../stellar/networks.ts";

/** A diagnostic event of a simulation: topics and data stay base64 ScVal XDR; `xdr` is the whole event. */
export const SimulationEvent = Type.Object(
  {
    type: Type.Union([Type.Literal("contract"), Type.Literal("diagnostic"), Type.Literal("system")]),
    contractId: nullableString(),
    topics: Type.Array(Type.String({ description: "Base64 ScVal" })),
    data: Type.String({ description: "Base64 ScVal" }),
    inSuccessfulContractCall: Type.Boolean(),
    xdr: Type.String({ description: "Base64 DiagnosticEvent" }),
  },
  { $id: "SimulationEvent" },
);
export type SimulationEvent = Static<typeof SimulationEvent>;

/**
 * A simulation in the shape of Stellar RPC's simulateTransaction result, so that the SDK's
 * `rpc.assembleTransaction(tx, answer)` takes it as it is; `resourceFee` and `diagnosticEvents`
 * are the same data, readier to read.
 */
export const SimulateResult = Type.Object(
  {
    minResourceFee: stroops("Minimum resource fee (as Stellar RPC names it)"),
    resourceFee: stroops("Minimum resource fee (the same)"),
    latestLedger: Type.Number(),
    transactionData: Type.String({ description: "Base64 SorobanTransactionData with the footprint and resources" }),
    events: Type.Array(Type.String({ description: "Base64 DiagnosticEvent, as Stellar RPC answers them" })),
    diagnosticEvents: Type.Array(SimulationEvent),
    results: Type.Array(
      Type.Object({
        auth: Type.Array(Type.String({ description: "Base64 SorobanAuthorizationEntry" })),
        xdr: Type.String({ description: "Base64 ScVal return value (as Stellar RPC names it)" }),
        retval: Type.String({ description: "Base64 ScVal return value (the same)" }),
      }),
    ),
  },
  { $id: "SimulateResponse" },
);
export type SimulateResult = Static<typeof SimulateResult>;

/**
 * What a sponsorship would cost: the network charges the market rate (the lowest bid it included
 * when ledgers are full, else the base fee), not the relay's bid; the reservation is the most it may pay.
 */
export const EstimateResult = Type.Object(
  {
    estimatedFee: stroops("What the network will most likely charge: rates.likely x (operations + 1) + resource fee"),
    bidFee: stroops("What the relay would bid now: its bid rate x (operations + 1) + resource fee"),
    maxFee: stroops(
      "The most it may be charged, reserved from credits on mainnet: the bid's cap (MAX_FEE_RATE) x (operations + 1) + resource fee",
    ),
    breakdown: Type.Object({
      baseFee: stroops("Inclusion fee most likely charged for the fee-bump"),
      resourceFee: stroops("Soroban resource fee"),
    }),
    rates: Type.Object(
      {
        likely: stroops(
          "Per operation, the highest rate the last ledgers cleared at as the relay read them (else the fee statistics' most common rate); never below the base fee",
        ),
        bid: stroops("Per operation, the relay's first bid under the caller's fee strategy (docs/fees.md)"),
        max: stroops("Per operation, the highest bid under surge"),
      },
      { description: "Inclusion fee rates, stroops per operation" },
    ),
    explanation: Type.String(),
  },
  { $id: "EstimateResponse" },
);
export type EstimateResult = Static<typeof EstimateResult>;

// ---- request bodies (Elysia's `t`: its `error` is the validation message) ----

export const network = t.Union(
  NETWORKS.map((n) => t.Literal(n)),
  { error: `network must be ${NETWORKS.join(" or ")}`, description: "Target network" },
);
export const transaction = t.String({
  minLength: 1,
  error: "transaction must be a base64 XDR TransactionEnvelope",
  description: "Base64 XDR of a signed transaction (or of a fee-bump, which the relay re-wraps)",
});

export const NetworkOptionalBody = t.Object(
  { transaction, network: t.Optional(network) },
  {
    additionalProperties: false,
    $id: "TransactionRequest",
    description: "network: default the caller's (its key's; testnet without a key)",
  },
);
