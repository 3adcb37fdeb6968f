/** The wire models of the admin API's webhooks and their deliveries (TypeBox; a leaf, as every model). */
import { type Static, type TUnsafe, Type } from "@sinclair/typebox";
import { nullableString } from "../../kernel/wire.ts";

// ---- webhooks -----------------------------------------------------------------------------------------------------

export const WEBHOOK_EVENT_TYPES = ["transaction.status", "credits.low"] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

// typed as TUnsafe: Elysia's handler types turn a union of these (dotted) literals into `never`
export const WebhookEventTypeSchema = Type.Union(
  WEBHOOK_EVENT_TYPES.map((e) => Type.Literal(e)),
  {
    description:
      "transaction.status: a sponsored transaction's status changed; credits.low: the balance fell below the policy's lowBalanceAlert",
  },
) as unknown as TUnsafe<WebhookEventType>;

export const WebhookView = Type.Object(
  {
    id: Type.String(),
    url: Type.String(),
    events: Type.Array(WebhookEventTypeSchema),
    description: nullableString(),
    createdAt: Type.String(),
  },
  { $id: "Webhook" },
);
export type WebhookView = Static<typeof WebhookView>;

export const CreatedWebhookView = Type.Object(
  {
    ...WebhookView.properties,
    secret: Type.String({
      description: "The Standard Webhooks signing secret (whsec_ and base64): shown this once",
    }),
  },
  { $id: "CreatedWebhook" },
);
export type CreatedWebhookView = Static<typeof CreatedWebhookView>;

/** One attempt of a webhook delivery. */
export const DeliveryAttemptView = Type.Object(
  {
    at: Type.String({ description: "When the attempt started (ISO 8601)" }),
    status: Type.Union([Type.Integer(), Type.Null()], {
      description: "The HTTP status answered; null: no answer (refused before sending, unreachable, timed out)",
    }),
    error: Type.Union([Type.String(), Type.Null()], { description: "Why it failed; null when delivered" }),
    durationMs: Type.Integer({ minimum: 0, description: "From the start to the answer (or failure), ms" }),
  },
  { $id: "WebhookDeliveryAttempt" },
);

export const DeliveryView = Type.Object(
  {
    id: Type.String(),
    eventId: Type.String({ description: "The event's id; the webhook-id header is evt_ and this" }),
    type: WebhookEventTypeSchema,
    state: Type.Union([Type.Literal("pending"), Type.Literal("delivered"), Type.Literal("failed")], {
      description: "pending: not delivered yet (retried with backoff); delivered: a 2xx answer; failed: given up",
    }),
    attempts: Type.Integer({ description: "Requests made (or refused before sending: a private address)" }),
    responseStatus: Type.Union([Type.Integer(), Type.Null()], { description: "The last answer's HTTP status" }),
    lastError: nullableString(),
    attemptLog: Type.Array(DeliveryAttemptView, {
      description:
        "Each attempt, oldest first (the last 50; none for attempts made before the relay kept them): " +
        "when it started, the HTTP status (null: no answer) or the error, and how long it took",
    }),
    createdAt: Type.String(),
    lastAttemptAt: Type.Union([Type.String(), Type.Null()]),
    nextAttemptAt: Type.Union([Type.String(), Type.Null()], { description: "When a pending delivery is tried next" }),
  },
  { $id: "WebhookDelivery" },
);
export type DeliveryView = Static<typeof DeliveryView>;
