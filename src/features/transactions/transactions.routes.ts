/**
 * GET /v1/transactions/{hash}: a submission by either hash, scoped to the caller and its key's
 * network (another project's, or another network's, is a 404 like an unknown one), `?wait=S`
 * long-polls until it settles. GET
 * /v1/admin/transactions: every submission, newest first, filtered, with a cursor.
 */
import { Elysia, t } from "elysia";
import { errorResponses, V1_ERRORS } from "../../http/schemas.ts";
import { adminSecurity, apiKeySecurity } from "../../http/openapi-refs.ts";
import { callerContext } from "../projects/caller.ts";
import { requestContext } from "../../http/errors.plugin.ts";
import { TransactionList, TransactionView } from "./transaction.model.ts";
import { MAX_WAIT_SECONDS, type TransactionsService } from "./transactions.service.ts";
import { defaultNetwork } from "../projects/principal.ts";
import { network } from "../tx/tx.model.ts";

export function transactionRoutes(deps: { transactions: TransactionsService }) {
  return new Elysia({ name: "transactions.routes" })
    .use(requestContext)
    .use(callerContext)
    .get(
      "/v1/transactions/:hash",
      ({ params, query, principal, clientIp, request }) =>
        deps.transactions.lookup(
          { projectId: principal.projectId, network: defaultNetwork(principal), ip: clientIp },
          params.hash,
          query.wait ?? 0,
          request.signal,
        ),
      {
        params: t.Object({ hash: t.String({ description: "The inner transaction's hash or the fee-bump's" }) }),
        query: t.Object(
          {
            wait: t.Optional(
              t.Numeric({
                minimum: 0,
                maximum: MAX_WAIT_SECONDS,
                description: `Hold the request until the status is final (success, failed, rejected, expired) or this many seconds (≤ ${MAX_WAIT_SECONDS}) pass; then answer the current status`,
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 200: TransactionView, ...V1_ERRORS, ...errorResponses(404) },
        detail: {
          summary: "A sponsored transaction by either hash: its status, outcome and attempts",
          description:
            "Only the caller's own submissions on its key's network: an sr_test_ key (or no key) sees testnet's, " +
            "an sr_live_ key mainnet's. Another project's or another network's hash is the same 404 as an unknown one. " +
            "With ?wait, at most WAITERS_PER_PROJECT (100) requests wait at once per project, WAITERS_PER_IP (10) per " +
            "client IP without a key, per instance: one more is 429 RATE_LIMIT_EXCEEDED (details.limit, Retry-After).",
          tags: ["relay"],
          security: apiKeySecurity,
        },
      },
    );
}

export function adminTransactionRoutes(deps: { transactions: TransactionsService }) {
  return new Elysia({ name: "admin-transactions.routes", prefix: "/v1/admin" })
    .get("/transactions/:hash", ({ params }) => deps.transactions.adminLookup(params.hash), {
      params: t.Object({ hash: t.String({ description: "The inner transaction's hash or the fee-bump's" }) }),
      response: {
        200: t.Composite([TransactionView, t.Object({ projectId: t.Union([t.String(), t.Null()]) })], {
          $id: "AdminTransactionView",
        }),
        ...errorResponses(400, 401, 404, 500),
      },
      detail: {
        summary: "Any project's submission by either hash: its status, outcome, attempts and project",
        tags: ["admin"],
        security: adminSecurity,
      },
    })
    .get("/transactions", ({ query }) => deps.transactions.list(query), {
      query: t.Object(
        {
          project: t.Optional(t.String({ minLength: 1 })),
          status: t.Optional(t.String({ description: "pending, submitted, success, failed, rejected or expired" })),
          network: t.Optional(network),
          limit: t.Optional(t.Numeric({ minimum: 1, maximum: 200, default: 50 })),
          cursor: t.Optional(t.String({ description: "nextCursor of the previous page" })),
        },
        { additionalProperties: false },
      ),
      response: { 200: TransactionList, ...errorResponses(400, 401, 500) },
      detail: {
        summary: "Submissions, newest first (filter by project, status, network; cursor pagination)",
        tags: ["admin"],
        security: adminSecurity,
      },
    });
}
