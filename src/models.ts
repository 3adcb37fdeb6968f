/**
 * The wire models of what the relay's domain code answers (TypeBox): each is the one source of its TypeScript type
 * (`Static<typeof Model>`, exported under the same name) and of its OpenAPI schema (a schema with a `$id` is one
 * component of the document, src/http/openapi.ts). A leaf module: it imports TypeBox only, so that src/relay and
 * src/store use these types without depending on src/http. Request bodies, the error envelope and the health models
 * are HTTP's own (src/http/schemas.ts).
 *
 * TypeBox's Integer, not Elysia's t.Integer: that one also takes (and converts) a numeric string.
 */
import { Type, type Static, type TSchema } from "@sinclair/typebox";
import { MAX_OPS_PER_TX } from "./stellar/protocol.ts";
import { Op } from "./stellar/xdr.ts";

const stroops = (description: string) =>
  Type.String({ pattern: "^[0-9]+$", description: `${description}, in stroops` });
const nullableString = () => Type.Union([Type.String(), Type.Null()]);

// ---- POST /v1/sponsor, /v1/simulate, /v1/estimate ----------------------------------------------------------------

/** What the network did with a sponsored transaction: the answer to a sponsor request (kept and replayed). */
export const SponsorResult = Type.Object(
  {
    hash: Type.String({ description: "Hash of the fee-bump transaction" }),
    innerHash: Type.Optional(
      Type.String({
        description:
          "Hash of the transaction the client signed (or of the func+auth operation): the submission's id. " +
          "Absent only in replays of answers given before the relay kept it",
      }),
    ),
    status: Type.Optional(Type.Literal("success", { description: "The submission's status" })),
    feePaid: stroops("Fee the network charged"),
    ledger: Type.Number({ description: "Ledger that included the transaction" }),
    resultXdr: Type.String({ description: "Base64 TransactionResult" }),
  },
  { $id: "SponsorResponse" },
);
export type SponsorResult = Static<typeof SponsorResult>;

// ---- submissions as resources: GET /v1/transactions/{hash}, the admin list, events ----------------------------------

export const TransactionStatus = Type.Union(
  [
    Type.Literal("pending"),
    Type.Literal("submitted"),
    Type.Literal("success"),
    Type.Literal("failed"),
    Type.Literal("rejected"),
    Type.Literal("expired"),
  ],
  {
    $id: "TransactionStatus",
    description:
      "pending: accepted by the relay, not yet by the network; submitted: the network accepted a fee-bump; " +
      "success / failed: in a ledger, the transaction succeeded / failed (final); rejected: refused before " +
      "inclusion; expired: in no ledger and no longer in any queue (rejected and expired submissions can be sent again)",
  },
);

/** A submission as its status events carry it (GET /v1/transactions/{hash} adds its attempts). */
export const TransactionSummary = Type.Object(
  {
    hash: Type.String({ description: "Hash of the fee-bump (the one in the ledger, once included)" }),
    innerHash: Type.String({ description: "Hash of the transaction the client signed" }),
    status: TransactionStatus,
    network: Type.String(),
    ledger: Type.Optional(Type.Number({ description: "Ledger that included it" })),
    feeCharged: Type.Optional(stroops("Fee the network charged")),
    resultXdr: Type.Optional(Type.String({ description: "Base64 TransactionResult" })),
    error: Type.Optional(
      Type.Object(
        {
          code: Type.String(),
          message: Type.String(),
          details: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
        },
        { description: "Why it failed or was rejected, as the sponsor request was answered" },
      ),
    ),
    waitingFor: Type.Optional(
      Type.Object(
        { account: Type.String(), sequence: Type.String(), waitingFor: Type.String() },
        { description: "Held for its predecessor (order flow): its account, its number, the number it waits for" },
      ),
    ),
    createdAt: Type.String({ format: "date-time" }),
    updatedAt: Type.String({ format: "date-time" }),
  },
  { $id: "TransactionSummary" },
);

export const TransactionAttempt = Type.Object(
  {
    hash: Type.String({ description: "Hash of this fee-bump" }),
    feeBid: stroops("Inclusion fee bid per operation"),
    channel: Type.String({ description: "The channel account paying it" }),
    answer: nullableString(),
    sentAt: Type.String({ format: "date-time" }),
    answeredAt: nullableString(),
  },
  { $id: "TransactionAttempt" },
);

export const TransactionView = Type.Composite(
  [TransactionSummary, Type.Object({ attempts: Type.Array(TransactionAttempt) })],
  {
    $id: "TransactionView",
  },
);
export type TransactionView = Static<typeof TransactionView>;

export const TransactionList = Type.Object(
  {
    transactions: Type.Array(
      Type.Composite([TransactionSummary, Type.Object({ projectId: Type.Union([Type.String(), Type.Null()]) })]),
    ),
    nextCursor: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: "TransactionList" },
);

/** The answer to an asynchronous sponsor request (Prefer: respond-async): the network accepted it. */
export const SponsorAccepted = Type.Object(
  {
    hash: Type.String({ description: "Hash of the fee-bump the network accepted" }),
    innerHash: Type.String({
      description: "Hash of the transaction the client signed: GET /v1/transactions/{innerHash}",
    }),
    status: Type.Union([Type.Literal("submitted"), Type.Literal("success"), Type.Literal("failed")], {
      description: "submitted, or already success / failed when the ledger came before the answer",
    }),
  },
  { $id: "SponsorAccepted" },
);

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

// ---- the admin API: projects, keys, credits ---------------------------------------------------------------------

const policyStroops = Type.String({
  pattern: "^[0-9]{1,18}$",
  description: "stroops (decimal string, at most 18 digits)",
});

/** A project's effective policy as the admin API answers it: stroop amounts as decimal strings. */
export const PolicyView = Type.Object(
  {
    requestsPerSecond: Type.Number(),
    burst: Type.Integer(),
    maxFee: policyStroops,
    allowedOperations: Type.Union([Type.Array(Type.String()), Type.Null()], { description: "null: any operation" }),
    allowedContractIds: Type.Union([Type.Array(Type.String()), Type.Null()], { description: "null: any contract" }),
    maxOperations: Type.Integer(),
    dailySpendLimit: Type.Union([policyStroops, Type.Null()], { description: "null: no limit" }),
    testnetDailySpendLimit: Type.Union([policyStroops, Type.Null()], {
      description:
        "testnet fees a day, beside dailySpendLimit (both networks); default PROJECT_TESTNET_DAILY_SPEND_LIMIT " +
        "(100 XLM); null: no testnet limit of its own",
    }),
    feeStrategy: Type.Union([Type.Literal("fast"), Type.Literal("economy")], {
      description: "how the relay bids under surge (docs/fees.md)",
    }),
  },
  { $id: "Policy", description: "The effective policy: the defaults and the project's overrides" },
);
export type PolicyView = Static<typeof PolicyView>;

export const ProjectView = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    status: Type.Union([Type.Literal("active"), Type.Literal("suspended")]),
    creditBalance: Type.String({ description: "Stroops available (the journal's sum)" }),
    creditReserved: Type.String({ description: "Stroops held by transactions in flight" }),
    policy: PolicyView,
    createdAt: Type.String(),
    updatedAt: Type.String(),
  },
  { $id: "Project" },
);
export type ProjectView = Static<typeof ProjectView>;
/** A project takes requests while active; suspended, it is refused (403). */
export type ProjectStatus = ProjectView["status"];

export { CreatedKeyView, KeyScope, KeyView } from "./features/projects/keys/key.model.ts";

export const CreditEntryView = Type.Object(
  {
    id: Type.String(),
    kind: Type.String(),
    amount: Type.String({ description: "stroops, signed" }),
    submissionId: nullableString(),
    txHash: nullableString(),
    reference: nullableString(),
    reason: nullableString(),
    createdAt: Type.String(),
  },
  { $id: "CreditEntry" },
);
export type CreditEntryView = Static<typeof CreditEntryView>;

/** A page of a project's credit journal, newest first; `nextCursor` asks for the next one. */
export const CreditJournal = Type.Object({ entries: Type.Array(CreditEntryView), nextCursor: nullableString() });
export type CreditJournal = Static<typeof CreditJournal>;

export const CreditBalance = Type.Object({ creditBalance: Type.String() });
export type CreditBalance = Static<typeof CreditBalance>;

// ---- the admin API: channel accounts ------------------------------------------------------------------------------

const poolStroops = Type.String({ description: "stroops" });
const inFlight = () => Type.Object({ count: Type.Number(), fees: poolStroops });

const unknownElsewhere = <T extends TSchema>(s: T) =>
  Type.Union([s, Type.Null()], { description: "null: held by another instance, which alone knows it" });

export const ChannelView = Type.Object(
  {
    publicKey: Type.String(),
    state: Type.String({ description: "creating, active or draining" }),
    balance: Type.Union([poolStroops, Type.Null()], {
      description: "stroops (another instance's channel: read from the network; null if it did not answer)",
    }),
    available: unknownElsewhere(
      Type.String({ description: "stroops it can still pay: balance less its reserve and the fees in flight" }),
    ),
    sequence: Type.Union([Type.String(), Type.Null()]),
    inFlight: unknownElsewhere(inFlight()),
    holder: Type.Union([Type.String(), Type.Null()], {
      description: "the instance holding the channel (several instances); null: the only instance, or none right now",
    }),
  },
  { $id: "Channel" },
);
export type ChannelView = Static<typeof ChannelView>;

export const PoolView = Type.Object(
  {
    network: Type.String(),
    instance: Type.Union([Type.String(), Type.Null()], {
      description: "the answering instance (any instance lists every channel, with its holder); null: the only one",
    }),
    funder: Type.Object({ publicKey: Type.String(), balance: poolStroops }),
    target: Type.Number({ description: "the channel count asked for (the operator's, and more while requests wait)" }),
    max: Type.Optional(Type.Number({ description: "the most channels demand may grow the pool to" })),
    waiting: Type.Optional(Type.Number({ description: "requests waiting for a channel now (this instance)" })),
    current: Type.Number({ description: "channels creating or active (draining ones excluded)" }),
    channels: Type.Array(ChannelView),
    totals: Type.Object({
      count: Type.Number(),
      active: Type.Number(),
      creating: Type.Number(),
      draining: Type.Number(),
      balance: poolStroops,
      inFlight: inFlight(),
    }),
    lastError: Type.Union([Type.String(), Type.Null()], {
      description: "the last failure of the pool's upkeep (creating, merging, topping up), until it succeeds",
    }),
  },
  { $id: "ChannelPool" },
);
export type PoolView = Static<typeof PoolView>;

const nullable = <T extends TSchema>(s: T) => Type.Optional(Type.Union([s, Type.Null()]));
export const OPERATION_TYPES = Object.keys(Op);

/** A policy change: each given field overrides the current value; `null` returns it to the default. */
export const PolicyPatch = Type.Object(
  {
    requestsPerSecond: nullable(Type.Number({ exclusiveMinimum: 0, maximum: 1_000_000 })),
    burst: nullable(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    maxFee: nullable(policyStroops),
    allowedOperations: nullable(
      Type.Array(Type.Union(OPERATION_TYPES.map((o) => Type.Literal(o))), {
        uniqueItems: true,
        maxItems: OPERATION_TYPES.length,
      }),
    ),
    allowedContractIds: nullable(
      Type.Array(Type.String({ pattern: "^C[A-Z2-7]{55}$" }), { uniqueItems: true, maxItems: 1000 }),
    ),
    maxOperations: nullable(Type.Integer({ minimum: 1, maximum: MAX_OPS_PER_TX })),
    dailySpendLimit: nullable(policyStroops),
    testnetDailySpendLimit: nullable(policyStroops),
    feeStrategy: nullable(
      Type.Union([Type.Literal("fast"), Type.Literal("economy")], {
        description:
          "fast (default): into the next ledger under surge, paying the clearing rate; economy: the fee statistic's median, up to ~3 ledgers (docs/fees.md)",
      }),
    ),
  },
  { additionalProperties: false },
);
export type PolicyPatch = Static<typeof PolicyPatch>;
