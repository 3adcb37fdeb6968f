/**
 * x402 v2's facilitator wire shapes (TypeBox), as `@x402/core`'s HTTP facilitator client sends and
 * reads them: the body of /x402/verify and /x402/settle, and the three answers. Objects take fields
 * of later protocol versions (additionalProperties): the verifier checks the fields it needs.
 */
import { Type, type Static } from "@sinclair/typebox";

const open = { additionalProperties: true } as const;

export const PaymentRequirements = Type.Object(
  {
    scheme: Type.String({ description: "exact" }),
    network: Type.String({ description: "CAIP-2: stellar:pubnet or stellar:testnet" }),
    amount: Type.String({ description: "In the asset's smallest unit" }),
    asset: Type.String({ description: "The SEP-41 token contract (C...)" }),
    payTo: Type.String({ description: "The merchant's address (G... or C...)" }),
    maxTimeoutSeconds: Type.Optional(Type.Number()),
    extra: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { ...open, $id: "X402PaymentRequirements" },
);
export type PaymentRequirements = Static<typeof PaymentRequirements>;

export const PaymentPayload = Type.Object(
  {
    x402Version: Type.Number(),
    resource: Type.Optional(Type.Unknown()),
    accepted: PaymentRequirements,
    payload: Type.Record(Type.String(), Type.Unknown(), {
      description: "{ transaction: base64 TransactionEnvelope } (one transfer, its authorization entries signed)",
    }),
    extensions: Type.Optional(Type.Unknown()),
  },
  { ...open, $id: "X402PaymentPayload" },
);
export type PaymentPayload = Static<typeof PaymentPayload>;

export const X402Request = Type.Object(
  { x402Version: Type.Number(), paymentPayload: PaymentPayload, paymentRequirements: PaymentRequirements },
  { ...open, $id: "X402Request", description: "The body of /x402/verify and /x402/settle (x402 v2)" },
);
export type X402Request = Static<typeof X402Request>;

export const VerifyResponse = Type.Object(
  {
    isValid: Type.Boolean(),
    invalidReason: Type.Optional(Type.String({ description: "Why not (docs/x402.md lists the codes)" })),
    invalidMessage: Type.Optional(Type.String()),
    payer: Type.Optional(Type.String({ description: "The transfer's from, once known" })),
  },
  { $id: "X402VerifyResponse" },
);
export type VerifyResponse = Static<typeof VerifyResponse>;

export const SettleResponse = Type.Object(
  {
    success: Type.Boolean(),
    errorReason: Type.Optional(Type.String()),
    errorMessage: Type.Optional(Type.String()),
    payer: Type.Optional(Type.String()),
    transaction: Type.String({ description: "The settlement's transaction hash (empty when nothing was sent)" }),
    network: Type.String(),
    extra: Type.Optional(
      Type.Object({
        innerHash: Type.String({ description: "The submission's id: GET /v1/transactions/{innerHash}" }),
        ledger: Type.Optional(Type.Number()),
        feePaid: Type.Optional(Type.String({ description: "The network fee the relay paid, in stroops" })),
      }),
    ),
  },
  { $id: "X402SettleResponse" },
);
export type SettleResponse = Static<typeof SettleResponse>;

export const SupportedResponse = Type.Object(
  {
    kinds: Type.Array(
      Type.Object({
        x402Version: Type.Number(),
        scheme: Type.String(),
        network: Type.String(),
        extra: Type.Object({ areFeesSponsored: Type.Boolean() }),
      }),
    ),
    extensions: Type.Array(Type.String()),
    signers: Type.Record(Type.String(), Type.Array(Type.String())),
  },
  { $id: "X402SupportedResponse" },
);
export type SupportedResponse = Static<typeof SupportedResponse>;
