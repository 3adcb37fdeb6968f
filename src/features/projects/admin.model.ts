/**
 * Wire models of the admin API that src/models.ts does not have (yet): the project policy's
 * `lowBalanceAlert` (a project's policy and project, in place of src/models.ts's `Policy` and
 * `Project` components) and the webhooks. A leaf module like src/models.ts (TypeBox only), so that
 * src/relay and src/store use these types without depending on src/http.
 */
import { type Static, type TUnsafe, Type } from "@sinclair/typebox";
import { PolicyView, ProjectView as BaseProjectView } from "../../models.ts";

const nullableString = () => Type.Union([Type.String(), Type.Null()]);

// ---- sponsorship rules: allowlists, a time window, per end-user caps (src/features/projects/rules/sponsorship-rules.ts) ---------------

const CONTRACT = "^C[A-Z2-7]{55}$";
const ADDRESS = "^[GC][A-Z2-7]{55}$";
const ASSET = "^(native|[A-Za-z0-9]{1,12}:G[A-Z2-7]{55})$";
const FUNCTION = "^[A-Za-z0-9_]{1,32}$";
const ISO_TIME = "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]+)?)?(Z|[+-][0-9]{2}:[0-9]{2})$";
const STROOPS = "^[0-9]{1,18}$";

const nullableRule = <T extends ReturnType<typeof Type.Object> | ReturnType<typeof Type.String>>(s: T) =>
  Type.Optional(Type.Union([s, Type.Null()]));

export const AllowSchema = Type.Object(
  {
    contracts: Type.Optional(
      Type.Array(
        Type.Object(
          {
            contract: Type.String({ pattern: CONTRACT, description: "a contract (C...)" }),
            functions: Type.Optional(
              Type.Array(Type.String({ pattern: FUNCTION }), { uniqueItems: true, maxItems: 100 }),
            ),
          },
          { additionalProperties: false },
        ),
        { maxItems: 1000, description: "contracts (and, if given, their functions) invokeHostFunction may call" },
      ),
    ),
    destinations: Type.Optional(
      Type.Array(Type.String({ pattern: ADDRESS }), {
        uniqueItems: true,
        maxItems: 1000,
        description: "accounts (G...) or contracts (C...) that value may be sent to",
      }),
    ),
    assets: Type.Optional(
      Type.Array(Type.String({ pattern: ASSET }), {
        uniqueItems: true,
        maxItems: 1000,
        description: '"native" or "CODE:ISSUER"',
      }),
    ),
  },
  { additionalProperties: false, description: "An absent list allows everything; a present one only what it lists" },
);

export const PerUserSchema = Type.Object(
  {
    maxTransactionsPerDay: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000_000 })),
    maxFeePerDay: Type.Optional(Type.String({ pattern: STROOPS, description: "stroops (decimal string)" })),
  },
  { additionalProperties: false, description: "Caps per end user (the inner transaction's source) per UTC day" },
);

const IsoTime = Type.String({ pattern: ISO_TIME, description: "ISO 8601, with a time zone" });

export const ApprovalSchema = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048, description: "http(s) URL of the app's approval server" }),
    timeoutMs: Type.Optional(Type.Integer({ minimum: 1, maximum: 5000, description: "default 2000" })),
    onFailure: Type.Optional(
      Type.Union([Type.Literal("deny"), Type.Literal("approve")], {
        description: "on a timeout or a non-2xx answer (default deny)",
      }),
    ),
  },
  { additionalProperties: false, description: "Ask the app's server before sponsoring (a signed POST)" },
);

export const ApprovalView = Type.Object({
  url: Type.String(),
  timeoutMs: Type.Integer(),
  onFailure: Type.Union([Type.Literal("deny"), Type.Literal("approve")]),
  secret: Type.Optional(
    Type.String({ description: "whsec_…: in the answer that set the approval URL only (verify requests with it)" }),
  ),
});

/** The policy patch's fields for these rules (the admin API's). */
export const RULES_PATCH = {
  allow: nullableRule(AllowSchema),
  activeFrom: nullableRule(IsoTime),
  activeUntil: nullableRule(IsoTime),
  perUser: nullableRule(PerUserSchema),
  approval: nullableRule(ApprovalSchema),
};

/** The policy view's fields for these rules. */
export const RULES_VIEW = {
  allow: Type.Union([AllowSchema, Type.Null()], { description: "null: no allowlist" }),
  activeFrom: Type.Union([Type.String(), Type.Null()], { description: "ISO 8601; null: no start" }),
  activeUntil: Type.Union([Type.String(), Type.Null()], { description: "ISO 8601; null: no end" }),
  perUser: Type.Union([PerUserSchema, Type.Null()], { description: "null: no per-user caps" }),
  approval: Type.Union([ApprovalView, Type.Null()], { description: "null: no approval call" }),
};

/** A project's effective policy as the admin API answers it. */
export const ProjectPolicyView = Type.Object(
  {
    ...PolicyView.properties,
    lowBalanceAlert: Type.Union([Type.String({ pattern: "^[0-9]{1,18}$" }), Type.Null()], {
      description: "stroops: a credits.low webhook event when the mainnet balance falls below; null: no alert",
    }),
    ...RULES_VIEW,
  },
  { $id: "Policy", description: "The effective policy: the defaults and the project's overrides" },
);
export type ProjectPolicyView = Static<typeof ProjectPolicyView>;

export const ProjectView = Type.Object(
  { ...BaseProjectView.properties, policy: ProjectPolicyView },
  { $id: "Project" },
);
export type ProjectView = Static<typeof ProjectView>;

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
