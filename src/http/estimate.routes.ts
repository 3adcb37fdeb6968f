/** POST /v1/estimate */
import { Elysia } from "elysia";
import { NetworkOptionalBody, EstimateResponse, V1_ERRORS, errorResponses } from "./schemas.ts";
import { apiKeySecurity } from "./openapi.ts";
import type { SimulateService } from "../relay/simulate.service.ts";
import type { SponsorService } from "../relay/sponsor.service.ts";
import { callerNetwork } from "./auth.plugin.ts";

export function estimateRoutes(deps: { simulate: SimulateService; sponsor: SponsorService }) {
  return new Elysia({ name: "estimate.routes" }).post(
    "/v1/estimate",
    ({ body, request }) =>
      deps.simulate.estimate(deps.sponsor.gateway(callerNetwork(request, body.network)), body.transaction),
    {
      body: NetworkOptionalBody,
      response: { 200: EstimateResponse, ...V1_ERRORS, ...errorResponses(422, 503) },
      detail: {
        summary: "Estimate the fee the relay would pay for a transaction (no signatures needed)",
        tags: ["relay"],
        security: apiKeySecurity,
      },
    },
  );
}
