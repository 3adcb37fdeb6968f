/**
 * The events the relay POSTs to a project's webhooks (and streams on GET /v1/events), as OpenAPI
 * 3.1 `webhooks`: Standard Webhooks headers, the body `{type, timestamp, data}`.
 */
/** `summary`: the schema (a reference) of a submission as the events carry it. */
export function webhookEvents(summary: object) {
  const headers = [
    ["webhook-id", "The event's id (evt_<id>): the same on every retry of one event"],
    ["webhook-timestamp", "Seconds since the epoch when this attempt was signed"],
    ["webhook-signature", "v1,<base64 HMAC-SHA256> with the webhook's whsec_ secret (Standard Webhooks)"],
  ].map(([name, description]) => ({ name, in: "header", required: true, description, schema: { type: "string" } }));
  const event = (type: string, data: object, title: string) => ({
    post: {
      summary: title,
      parameters: headers,
      requestBody: {
        required: true,
        content: {
          "application/json": {
            schema: {
              type: "object",
              required: ["type", "timestamp", "data"],
              properties: { type: { const: type }, timestamp: { type: "string", format: "date-time" }, data },
            },
          },
        },
      },
      responses: {
        "2XX": { description: "Delivered; anything else (or no answer in 10 s) is retried with backoff for 24 h" },
      },
    },
  });
  return {
    "transaction.status": event(
      "transaction.status",
      summary,
      "A submission's status changed (not sent for a new submission: it is pending)",
    ),
    "credits.low": event(
      "credits.low",
      {
        type: "object",
        required: ["projectId", "balance", "lowBalanceAlert"],
        properties: {
          projectId: { type: "string" },
          balance: { type: "string", description: "stroops" },
          lowBalanceAlert: { type: "string", description: "stroops" },
        },
      },
      "A project's mainnet credit balance fell below its policy's lowBalanceAlert (again only after a top-up lifted it)",
    ),
  };
}
