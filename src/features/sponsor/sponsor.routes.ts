/** POST /v1/sponsor */
import { Elysia } from "elysia";
import { V1_ERRORS, errorResponses } from "../../http/schemas.ts";
import { SponsorAccepted, SponsorBody, SponsorResult } from "./sponsor.model.ts";
import { apiKeySecurity, idempotencyKeyParameter } from "../../http/openapi-refs.ts";
import { callerContext, callerNetwork } from "../projects/caller.ts";
import { bodyHash, checkIdempotencyKey, type Idempotency } from "./idempotency.ts";
import type { SponsorService } from "./sponsor.service.ts";
import { type Accepted, earliest, type Pending, theirs } from "./run.ts";
import type { Networks } from "../networks/networks.ts";
import { RelayError, validationError } from "../../kernel/errors.ts";
import { requestContext } from "../../http/errors.plugin.ts";
import type { Outcome } from "../../store/types.ts";
import type { FlatFields } from "../../kernel/log.ts";

/**
 * In the asynchronous mode, an outcome that came before the acceptance was told (a fast ledger) is
 * answered 202 too when the transaction is in a ledger (success, or failed on chain).
 */
function landed(o: Outcome): Accepted | null {
  if (o.kind === "success")
    return o.result.innerHash ? { hash: o.result.hash, innerHash: o.result.innerHash, status: "success" } : null;
  const d = o.error.details as { hash?: string; innerHash?: string; status?: string } | undefined;
  return d?.status === "failed" && d.hash && d.innerHash
    ? { hash: d.hash, innerHash: d.innerHash, status: "failed" }
    : null;
}

/** Whether a Prefer header asks for the asynchronous answer (RFC 7240: `respond-async`, among other preferences). */
export const respondAsync = (prefer: string | null): boolean =>
  prefer?.split(",").some((p) => p.split(";")[0]!.trim().toLowerCase() === "respond-async") ?? false;

const preferParameter = {
  name: "Prefer",
  in: "header" as const,
  required: false,
  description:
    "respond-async: answer 202 Accepted (Location: /v1/transactions/{innerHash}, Preference-Applied: respond-async) " +
    "once the network has accepted the fee-bump, instead of waiting for the ledger. What fails before is answered as usual",
  schema: { type: "string" as const, example: "respond-async" },
};

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

export function sponsorRoutes(deps: { sponsor: SponsorService; idempotency: Idempotency; networks: Networks }) {
  return new Elysia({ name: "sponsor.routes" })
    .use(requestContext)
    .use(callerContext)
    .post(
      "/v1/sponsor",
      async ({ body, request, set, principal, annotate }) => {
        // none named: the key's network (testnet without a key), as /v1/simulate and /v1/estimate
        const network = callerNetwork(principal, body.network);
        deps.networks.get(network); // a network this relay does not serve: NETWORK_NOT_SERVED
        if ((body.transaction === undefined) === (body.operation === undefined)) {
          throw validationError(
            "send either transaction (a signed transaction) or operation (an invokeHostFunction operation with signed authorization entries)",
            { field: "transaction", reason: "transaction_or_operation" },
          );
        }
        const key = request.headers.get("x-idempotency-key");
        // Prefer: respond-async (RFC 7240): answered 202 once the network has accepted the fee-bump
        const async = respondAsync(request.headers.get("prefer"));
        const start = () =>
          body.transaction !== undefined
            ? deps.sponsor.sponsor(body.transaction, network, principal.payer)
            : deps.sponsor.sponsorOperation(body.operation!, network, principal.payer);
        // another project's submission answers it (never paid twice) as without the preference: a 202's Location
        // would name a record this caller cannot look up (`earliest`, `theirs`)
        const acceptedAnswer = (a: Accepted) => {
          annotate({ projectId: principal.payer.projectId, network, hash: a.hash, result: "submitted" });
          set.status = 202;
          set.headers.location = `/v1/transactions/${a.innerHash}`;
          set.headers["preference-applied"] = "respond-async";
          return { hash: a.hash, innerHash: a.innerHash, status: a.status ?? "submitted" };
        };
        const answerOf = (p: Pending, outcome: Outcome, replayed = false) => {
          const inLedger = async && !replayed && !theirs(p) ? landed(outcome) : null;
          if (inLedger) return acceptedAnswer(inLedger);
          annotate({
            projectId: principal.payer.projectId,
            network,
            ...outcomeFields(outcome),
            ...(replayed ? { replayed } : {}),
          });
          return answer(outcome); // an error outcome is thrown again, enveloped with this request's id
        };
        const reply = async (p: Pending, replayed = false) => {
          const r = async ? await earliest(p) : await p.outcome;
          return "kind" in r ? answerOf(p, r, replayed) : acceptedAnswer(r);
        };
        if (key === null) return reply(await start());
        checkIdempotencyKey(key);
        const hash = bodyHash({ transaction: body.transaction, operation: body.operation, network });
        const { pending, replayed } = await deps.idempotency.run(principal.payer.scope, key, hash, start);
        if (replayed) set.headers["idempotent-replayed"] = "true";
        return reply(pending, replayed);
      },
      {
        body: SponsorBody,
        response: { 200: SponsorResult, 202: SponsorAccepted, ...V1_ERRORS, ...errorResponses(402, 422, 503, 504) },
        detail: {
          summary:
            "Sponsor and submit a signed transaction (in a fee-bump a relay channel account pays) or an invokeHostFunction operation",
          tags: ["relay"],
          security: apiKeySecurity,
          parameters: [idempotencyKeyParameter, preferParameter],
        },
      },
    );
}
