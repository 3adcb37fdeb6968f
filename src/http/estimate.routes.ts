/** POST /v1/estimate */
import { Elysia } from "elysia";
import { NetworkOptionalBody, EstimateResponse, ErrorResponse } from "./schemas.ts";
import type { SimulateService } from "../relay/simulate.service.ts";
import type { SponsorService } from "../relay/sponsor.service.ts";
import { callerNetwork } from "./auth.plugin.ts";

export function estimateRoutes(deps: { simulate: SimulateService; sponsor: SponsorService }) {
  return new Elysia({ name: "estimate.routes" }).post("/v1/estimate", ({ body, request }) =>
    deps.simulate.estimate(deps.sponsor.gateway(callerNetwork(request, body.network)), body.transaction), {
    body: NetworkOptionalBody,
    response: { 200: EstimateResponse, 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 422: ErrorResponse, 429: ErrorResponse },
    detail: { summary: "Estimate the fee the relay would pay for a transaction (no signatures needed)", tags: ["relay"] },
  });
}
