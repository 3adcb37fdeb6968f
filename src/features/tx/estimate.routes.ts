/** POST /v1/estimate */
import { Elysia } from "elysia";
import { V1_ERRORS, errorResponses } from "../../http/schemas.ts";
import { EstimateResult, NetworkOptionalBody } from "./tx.model.ts";
import { apiKeySecurity } from "../../http/openapi-refs.ts";
import type { SimulateService } from "./simulate.service.ts";
import type { Networks } from "../networks/networks.ts";
import { callerContext, callerNetwork } from "../projects/caller.ts";

export function estimateRoutes(deps: { simulate: SimulateService; networks: Networks }) {
  return new Elysia({ name: "estimate.routes" })
    .use(callerContext)
    .post(
      "/v1/estimate",
      ({ body, principal }) =>
        deps.simulate.estimate(
          deps.networks.get(callerNetwork(principal, body.network)).gateway,
          body.transaction,
          principal.payer.feeStrategy?.(),
        ),
      {
        body: NetworkOptionalBody,
        response: { 200: EstimateResult, ...V1_ERRORS, ...errorResponses(422, 503) },
        detail: {
          summary: "Estimate the fee the relay would pay for a transaction (no signatures needed)",
          tags: ["relay"],
          security: apiKeySecurity,
        },
      },
    );
}
