/**
 * The wire models of the admin API's projects, policies and credits (TypeBox): each is the one source of its TypeScript type (`Static<typeof Model>`, exported
 * under the same name) and of its OpenAPI schema (a schema with a `$id` is one component of the
 * document). A model is a leaf: it imports TypeBox, the kernel's wire helpers, the protocol's
 * constants and other models only, so services and the store may use it.
 *
 * TypeBox's Integer, not Elysia's t.Integer: that one also takes (and converts) a numeric string.
 */
import { Type, type Static } from "@sinclair/typebox";
import { EXPECTED, nullable, nullableString, shaped } from "../../kernel/wire.ts";
import { MAX_OPS_PER_TX } from "../../stellar/protocol.ts";
import { Op } from "../../stellar/xdr.ts";

const policyStroops = shaped("^[0-9]{1,18}$", EXPECTED.stroops, {
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

/** The project as an x402 merchant: the addresses it accepts payments to (settles only those). */
export const X402Settings = Type.Object(
  {
    payTo: Type.Array(
      shaped("^[GC][A-Z2-7]{55}$", EXPECTED.account, {
        description: "an account (G...) or a contract (C...) the project's x402 payments go to",
        examples: ["GBRPYHIL2CI3FNQ4BXLFMNDLFJUNPU2HY3ZMFSHONUCEOASW7QC7OX2H"],
      }),
      { maxItems: 100, uniqueItems: true },
    ),
  },
  {
    additionalProperties: false,
    description:
      "The addresses this project accepts x402 payments to: /x402/settle with its key settles a payment only to one of them",
  },
);
export type X402Settings = Static<typeof X402Settings>;

export const ProjectView = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    status: Type.Union([Type.Literal("active"), Type.Literal("suspended")]),
    creditBalance: Type.String({ description: "Stroops available (the journal's sum)" }),
    creditReserved: Type.String({ description: "Stroops held by transactions in flight" }),
    policy: PolicyView,
    x402: X402Settings,
    createdAt: Type.String(),
    updatedAt: Type.String(),
  },
  { $id: "Project" },
);
export type ProjectView = Static<typeof ProjectView>;
/** A project takes requests while active; suspended, it is refused (403). */
export type ProjectStatus = ProjectView["status"];

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
      Type.Array(shaped("^C[A-Z2-7]{55}$", EXPECTED.contract), { uniqueItems: true, maxItems: 1000 }),
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
