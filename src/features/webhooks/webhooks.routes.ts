/** The admin API's webhooks (/v1/admin/projects/:id/webhooks, bearer token checked by the auth plugin). */
import { Elysia, t } from "elysia";
import { errorResponses } from "../../http/schemas.ts";
import { adminSecurity } from "../../http/openapi-refs.ts";
import { CreatedWebhookView, DeliveryView, WEBHOOK_EVENT_TYPES, WebhookView } from "./webhook.model.ts";
import type { WebhooksService } from "./webhooks.service.ts";

const errors = errorResponses(400, 401, 404, 500);
const bodyErrors = { ...errors, ...errorResponses(413) };
const detail = (summary: string, description?: string) => ({
  summary,
  ...(description ? { description } : {}),
  tags: ["admin"],
  security: adminSecurity,
});
const params = t.Object({ id: t.String() });
const webhookParams = t.Object({ id: t.String(), webhookId: t.String() });
const eventType = t.Union([t.Literal("transaction.status"), t.Literal("credits.low")], {
  error: `events must be a list of ${WEBHOOK_EVENT_TYPES.join(", ")}`,
});

const CreateWebhook = t.Object(
  {
    url: t.String({
      minLength: 1,
      maxLength: 2000,
      error: "url must be an http or https URL",
      description: "http(s); a host that is or resolves to a non-public address is refused (reason private_address)",
    }),
    events: t.Optional(
      t.Array(eventType, {
        maxItems: WEBHOOK_EVENT_TYPES.length,
        uniqueItems: true,
        description: "The event types delivered; default: all",
      }),
    ),
    description: t.Optional(t.String({ maxLength: 500 })),
  },
  { additionalProperties: false, $id: "CreateWebhookRequest" },
);

export function webhookRoutes(deps: { webhooks: WebhooksService }) {
  const w = deps.webhooks;
  return new Elysia({ name: "webhooks.routes", prefix: "/v1/admin/projects/:id/webhooks" })
    .post(
      "",
      async ({ params, body, set }) => {
        const created = await w.create(params.id, body);
        set.status = 201;
        return created;
      },
      {
        params,
        body: CreateWebhook,
        response: { 201: CreatedWebhookView, ...bodyErrors },
        detail: detail(
          "Register a webhook; its signing secret is shown once",
          "Deliveries are Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature headers; body " +
            "{ type, timestamp, data }), retried with backoff for 24 h until a 2xx answer.",
        ),
      },
    )
    .get("", async ({ params }) => ({ webhooks: await w.list(params.id) }), {
      params,
      response: { 200: t.Object({ webhooks: t.Array(WebhookView) }), ...errors },
      detail: detail("List a project's webhooks (no secrets)"),
    })
    .delete("/:webhookId", ({ params }) => w.remove(params.id, params.webhookId), {
      params: webhookParams,
      response: { 200: WebhookView, ...errors },
      detail: detail("Delete a webhook (its pending deliveries are given up)"),
    })
    .get(
      "/:webhookId/deliveries",
      async ({ params, query }) => ({
        deliveries: await w.deliveries(params.id, params.webhookId, query.limit ?? 50),
      }),
      {
        params: webhookParams,
        query: t.Object({ limit: t.Optional(t.Integer({ minimum: 1, maximum: 500 })) }),
        response: { 200: t.Object({ deliveries: t.Array(DeliveryView) }), ...errors },
        detail: detail("A webhook's recent deliveries, newest first"),
      },
    );
}
