/** POST /v1/simulate */
import { Elysia } from "elysia";
import { NetworkOptionalBody, V1_ERRORS, errorResponses } from "../../http/schemas.ts";
import { SimulateResult } from "./tx.model.ts";
import { apiKeySecurity } from "../../http/openapi.ts";
import type { SimulateService } from "./simulate.service.ts";
import type { SponsorService } from "../sponsor/sponsor.service.ts";
import { callerContext, callerNetwork } from "../../http/auth.plugin.ts";

export function simulateRoutes(deps: { simulate: SimulateService; sponsor: SponsorService }) {
  return new Elysia({ name: "simulate.routes" })
    .use(callerContext)
    .post(
      "/v1/simulate",
      ({ body, principal }) =>
        deps.simulate.simulate(deps.sponsor.gateway(callerNetwork(principal, body.network)), body.transaction),
      {
        body: NetworkOptionalBody,
        response: { 200: SimulateResult, ...V1_ERRORS, ...errorResponses(422, 503) },
        detail: {
          summary: "Simulate a Soroban transaction (network: the caller's; testnet without a key)",
          tags: ["relay"],
          security: apiKeySecurity,
        },
      },
    );
}
