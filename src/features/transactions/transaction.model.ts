/**
 * The wire models of submissions as resources: GET /v1/transactions/{hash}, the admin list, events (TypeBox): each is the one source of its TypeScript type (`Static<typeof Model>`, exported
 * under the same name) and of its OpenAPI schema (a schema with a `$id` is one component of the
 * document). A model is a leaf: it imports TypeBox, the kernel's wire helpers, the protocol's
 * constants and other models only, so services and the store may use it.
 *
 * TypeBox's Integer, not Elysia's t.Integer: that one also takes (and converts) a numeric string.
 */
import { Type, type Static } from "@sinclair/typebox";
import { nullableString, stroops } from "../../kernel/wire.ts";

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
