/** The x402 facilitator, built from the relay's services (boot.ts) and mounted by the app (app.ts). */
import type { NetworkName } from "../../network/gateway.ts";
import type { ChannelPool } from "../../relay/pool/channel-pool.ts";
import type { SponsorService } from "../../relay/sponsor.service.ts";
import type { IdempotencyStore, SubmissionStore } from "../../store/types.ts";
import type { X402Deps } from "./routes.ts";
import { X402Settlement } from "./settle.service.ts";
import { X402Verifier } from "./verify.service.ts";

export { x402Routes, type X402Deps } from "./routes.ts";

export function createX402(deps: {
  sponsor: SponsorService;
  pools: Partial<Record<NetworkName, ChannelPool>>;
  submissions: Pick<SubmissionStore, "byInnerHash">;
  claims: IdempotencyStore;
  claimTtlMs: number;
}): X402Deps {
  const gateway = (n: NetworkName) => {
    try {
      return deps.sponsor.gateway(n);
    } catch {
      return undefined; // not served
    }
  };
  const verifier = new X402Verifier({ gateway, pool: (n) => deps.pools[n], submissions: deps.submissions });
  return {
    verifier,
    settlement: new X402Settlement({
      verifier,
      sponsor: deps.sponsor,
      claims: deps.claims,
      claimTtlMs: deps.claimTtlMs,
    }),
    served: () => (["mainnet", "testnet"] as const).filter((n) => gateway(n) && deps.pools[n]),
  };
}
