/** The x402 facilitator, built from the relay's services (src/boot/features.ts) and mounted by the app (app.ts). */
import { NETWORKS, type NetworkName } from "../../stellar/networks.ts";
import type { IdempotencyStore, SubmissionStore } from "../../store/types.ts";
import type { Networks } from "../networks/networks.ts";
import type { SponsorService } from "../sponsor/sponsor.service.ts";
import type { X402Deps } from "./x402.routes.ts";
import { X402Settlement } from "./settle.service.ts";
import { X402Verifier } from "./verify.service.ts";

export { x402Routes, type X402Deps } from "./x402.routes.ts";
export { settleClaimMs } from "./settle.service.ts";

export function createX402(deps: {
  sponsor: SponsorService;
  networks: Networks;
  submissions: Pick<SubmissionStore, "byInnerHash">;
  claims: IdempotencyStore;
  claimTtlMs: number;
  /** The addresses a project accepts x402 payments to (its x402.payTo). */
  payTo(projectId: string): Promise<string[]>;
}): X402Deps {
  const { networks } = deps;
  const verifier = new X402Verifier({
    gateway: (n: NetworkName) => networks.find(n)?.gateway,
    pool: (n) => networks.find(n)?.pool,
    submissions: deps.submissions,
  });
  return {
    verifier,
    settlement: new X402Settlement({
      verifier,
      sponsor: deps.sponsor,
      claims: deps.claims,
      claimTtlMs: deps.claimTtlMs,
      payTo: deps.payTo,
    }),
    served: () => NETWORKS.filter((n) => networks.find(n)?.pool),
    signers: (n) =>
      networks
        .find(n)
        ?.pool?.list()
        .channels.map((c) => c.publicKey) ?? [],
  };
}
