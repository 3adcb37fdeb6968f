/** POST /v1/sponsor */
import { Elysia } from "elysia";
import { SponsorBody, V1_ERRORS, errorResponses } from "./schemas.ts";
import { SponsorResult } from "../models.ts";
import { apiKeySecurity, idempotencyKeyParameter } from "./openapi.ts";
import { callerContext } from "./auth.plugin.ts";
import { bodyHash, checkIdempotencyKey, type Idempotency } from "../relay/idempotency.ts";
import type { SponsorService } from "../relay/sponsor.service.ts";
import { ProjectsService } from "../relay/projects.service.ts";
import { RelayError, validationError } from "../errors.ts";
import { requestContext } from "./errors.plugin.ts";
import type { Outcome } from "../store/types.ts";
import type { FlatFields } from "../log.ts";

/** The transaction hash and result code of an outcome, for the access log. */
function outcomeFields(o: Outcome): FlatFields {
  if (o.kind === "success") return { hash: o.result.hash, result: "success" };
  const d = o.error.details as { hash?: string; result_codes?: { transaction?: string } } | undefined;
  return { hash: d?.hash, result: d?.result_codes?.transaction ?? o.error.code };
}

/** An outcome as the answer: the result, or the error it was (thrown, to be enveloped with this request's id). */
function answer(o: Outcome): SponsorResult {
  if (o.kind === "success") return o.result;
  throw RelayError.from(o.error);
}

export function sponsorRoutes(deps: { sponsor: SponsorService; idempotency: Idempotency }) {
  return new Elysia({ name: "sponsor.routes" })
    .use(requestContext)
    .use(callerContext)
    .post(
      "/v1/sponsor",
      async ({ body, request, set, principal, annotate }) => {
        ProjectsService.checkNetwork(principal, body.network);
        if ((body.transaction === undefined) === (body.operation === undefined)) {
          throw validationError(
            "send either transaction (a signed transaction) or operation (an invokeHostFunction operation with signed authorization entries)",
            { field: "transaction", reason: "transaction_or_operation" },
          );
        }
        const key = request.headers.get("x-idempotency-key");
        const run = () =>
          body.transaction !== undefined
            ? deps.sponsor.sponsor(body.transaction, body.network, principal.payer)
            : deps.sponsor.sponsorOperation(body.operation!, body.network, principal.payer);
        const logged = (outcome: Outcome, replayed = false) => {
          annotate({
            projectId: principal.payer.projectId,
            network: body.network,
            ...outcomeFields(outcome),
            ...(replayed ? { replayed } : {}),
          });
          return answer(outcome); // an error outcome is thrown again, enveloped with this request's id
        };
        if (key === null) return logged(await run());
        checkIdempotencyKey(key);
        const hash = bodyHash({ transaction: body.transaction, operation: body.operation, network: body.network });
        const { outcome, replayed } = await deps.idempotency.run(principal.payer.scope, key, hash, run);
        if (replayed) set.headers["idempotent-replayed"] = "true";
        return logged(outcome, replayed);
      },
      {
        body: SponsorBody,
        response: { 200: SponsorResult, ...V1_ERRORS, ...errorResponses(402, 422, 503, 504) },
        detail: {
          summary:
            "Sponsor and submit a signed transaction (in a fee-bump a relay channel account pays) or an invokeHostFunction operation",
          tags: ["relay"],
          security: apiKeySecurity,
          parameters: [idempotencyKeyParameter],
        },
      },
    );
}
