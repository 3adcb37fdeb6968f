/**
 * The x402 facilitator's HTTP routes, as `@x402/core`'s HTTPFacilitatorClient calls them at
 * `{relay}/x402`: GET /x402/supported, POST /x402/verify, POST /x402/settle. The merchant's project
 * API key (`Authorization: Bearer`, or X-API-Key) is required on every network (auth.plugin.ts);
 * refusals of a payment are answered 200 in the protocol's shape, errors of the call itself (key,
 * scope, rate limit, body) in the relay's envelope.
 */
import { Elysia } from "elysia";
import { callerContext } from "../projects/caller.ts";
import { V1_ERRORS } from "../../http/schemas.ts";
import { checkNetwork } from "../projects/principal.ts";
import { type NetworkName, networkOfCaip2, specOf } from "../../stellar/networks.ts";
import { SettleResponse, SupportedResponse, VerifyResponse, X402Request } from "./x402.model.ts";
import type { X402Verifier } from "./verify.service.ts";
import type { X402Settlement } from "./settle.service.ts";

export interface X402Deps {
  verifier: X402Verifier;
  settlement: X402Settlement;
  /** The networks this relay serves (with a channel pool). */
  served(): NetworkName[];
  /** The accounts that sign (and pay for) a network's settlements: its channel accounts. */
  signers(network: NetworkName): string[];
}

const auth =
  "Authorization: Bearer <the merchant project's API key> (or X-API-Key), required on every network; " +
  "verify and settle need its sponsor scope. ";

export function x402Routes(deps: X402Deps) {
  return new Elysia({ name: "x402.routes" })
    .use(callerContext)
    .get(
      "/x402/supported",
      () => ({
        kinds: deps.served().map((n) => ({
          x402Version: 2,
          scheme: "exact",
          network: specOf(n).caip2,
          extra: { areFeesSponsored: true },
        })),
        extensions: [],
        // the spec's map of a CAIP family to the addresses that sign its settlements (the fee-paying channels of
        // every network served), as @x402/core's facilitator builds it
        signers: { "stellar:*": [...new Set(deps.served().flatMap((n) => deps.signers(n)))] },
      }),
      {
        response: { 200: SupportedResponse, ...V1_ERRORS },
        detail: { summary: "x402: the payment kinds this facilitator settles", description: auth, tags: ["x402"] },
      },
    )
    .post(
      "/x402/verify",
      async ({ body, principal }) => {
        const network = networkOfCaip2(body.paymentRequirements.network);
        if (network) checkNetwork(principal, network);
        const v = await deps.verifier.verify(body.x402Version, body.paymentPayload, body.paymentRequirements);
        if (v.ok) return { isValid: true, payer: v.verified.payment.payer };
        const { reason, message, payer } = v.refusal;
        return { isValid: false, invalidReason: reason, invalidMessage: message, ...(payer ? { payer } : {}) };
      },
      {
        body: X402Request,
        response: { 200: VerifyResponse, ...V1_ERRORS },
        detail: {
          summary: "x402: verify an exact payment on Stellar (isValid, or invalidReason)",
          description: auth,
          tags: ["x402"],
        },
      },
    )
    .post(
      "/x402/settle",
      async ({ body, principal }) => {
        const network = networkOfCaip2(body.paymentRequirements.network);
        if (network) checkNetwork(principal, network);
        return await deps.settlement.settle(
          body.x402Version,
          body.paymentPayload,
          body.paymentRequirements,
          principal.payer,
        );
      },
      {
        body: X402Request,
        response: { 200: SettleResponse, ...V1_ERRORS },
        detail: {
          summary: "x402: verify again and settle an exact payment on Stellar, fees sponsored (answered at the ledger)",
          description: `${auth}A settlement is a submission of the merchant's project: its policy, limits and credits apply.`,
          tags: ["x402"],
        },
      },
    );
}
