/** POST /v1/simulate */
import { Elysia } from "elysia";
import { V1_ERRORS, errorResponses } from "../../http/schemas.ts";
import { NetworkOptionalBody, SimulateResult } from "./tx.model.ts";
import { apiKeySecurity } from "../../http/openapi-refs.ts";
import type { SimulateService } from "./simulate.service.ts";
import type { Networks } from "../networks/networks.ts";
import { callerContext, callerNetwork } from "../projects/caller.ts";

export function simulateRoutes(deps: { simulate: SimulateService; networks: Networks }) {
  return new Elysia({ name: "simulate.routes" })
    .use(callerContext)
    .post(
      "/v1/simulate",
      ({ body, principal }) =>
        deps.simulate.simulate(deps.networks.get(callerNetwork(principal, body.network)).gateway, body.transaction),
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
