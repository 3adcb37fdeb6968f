/**
 * The wire models of a sponsorship's answers (TypeBox): each is the one source of its TypeScript type (`Static<typeof Model>`, exported
 * under the same name) and of its OpenAPI schema (a schema with a `$id` is one component of the
 * document). A model is a leaf: it imports TypeBox, the kernel's wire helpers, the protocol's
 * constants and other models only, so services and the store may use it.
 *
 * TypeBox's Integer, not Elysia's t.Integer: that one also takes (and converts) a numeric string.
 */
import { Type, type Static } from "@sinclair/typebox";
import { t } from "elysia";
import { network, transaction } from "../tx/tx.model.ts";
import { stroops } from "../../kernel/wire.ts";

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

/** The answer to an asynchronous sponsor request (Prefer: respond-async): the network accepted it. */
export const SponsorAccepted = Type.Object(
  {
    hash: Type.String({
      description: "Hash of the fee-bump the network accepted (pending: the inner hash, no fee-bump of it is sent yet)",
    }),
    innerHash: Type.String({
      description: "Hash of the transaction the client signed: GET /v1/transactions/{innerHash}",
    }),
    status: Type.Union(
      [Type.Literal("pending"), Type.Literal("submitted"), Type.Literal("success"), Type.Literal("failed")],
      {
        description:
          "submitted, or already success / failed when the ledger came before the answer; pending: held for its " +
          "predecessor in its account's order (order flow), recorded, and sent once the predecessor is applied",
      },
    ),
  },
  { $id: "SponsorAccepted" },
);
export type SponsorAccepted = Static<typeof SponsorAccepted>;

const operation = t.String({
  minLength: 1,
  error: "operation must be a base64 XDR Operation",
  description:
    "Base64 XDR of an invokeHostFunction Operation with its signed authorization entries (func+auth mode, instead of transaction)",
});
export const SponsorBody = t.Object(
  { transaction: t.Optional(transaction), operation: t.Optional(operation), network: t.Optional(network) },
  {
    additionalProperties: false,
    $id: "SponsorRequest",
    description:
      "Exactly one of transaction and operation; network: default the caller's (its key's; testnet without a key)",
  },
);
