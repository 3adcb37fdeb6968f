/**
 * The caller of a /v1 request (its project and key environment, or the anonymous testnet relay),
 * who pays for it, and the networks it may use.
 */
import { RelayError } from "../../kernel/errors.ts";
import {
  KEYLESS_NETWORK,
  type KeyEnvironment,
  type NetworkName,
  networkOfKeys,
  specOf,
} from "../../stellar/networks.ts";
import type { ProjectActor } from "../../../actors/projects/project.machine.ts";
import type { Policy, SpendRequest } from "./rules/policy.ts";
import type { FeeStrategy } from "../tx/fee-strategy.ts";
import type { KeyScope } from "./keys/key.model.ts";

/** The caller of a /v1 request, resolved from its API key or client IP. */
export interface Principal {
  projectId: string | null;
  /** The API key's id (what its revocation names); null for the anonymous testnet relay. */
  keyId: string | null;
  /** The key's environment; null for the anonymous testnet relay. */
  environment: KeyEnvironment | null;
  /** What the key may call (the anonymous testnet relay: all). */
  scopes: readonly KeyScope[];
  /** When the key expires (null: never, or no key). */
  expiresAt: Date | null;
  actor: ProjectActor;
  payer: Payer;
}

/** Who pays for a request: a project, or the anonymous relay for one client IP. */
export interface Payer {
  projectId: string | null;
  /** Idempotency and submission scope: `project:<id>` or `ip:<address>`. */
  scope: string;
  /**
   * Policy check and fee reservation in one event: the fee the relay may spend, or the project's
   * refusal (its policy, its credits, its daily spend) as a value.
   */
  reserve(id: string, credits: boolean, request: SpendRequest): Promise<bigint | RelayError>;
  /** Ends a reservation with what the journal released and the network charged. */
  settle(id: string, s: { charged: bigint; released: bigint; journaled: boolean }): void;
  /** The policy's fee strategy (absent: the default, fast). */
  feeStrategy?(): FeeStrategy;
  /** The payer's policy now. */
  policy?(): Policy;
}

/** Which networks a principal may use; no key means the open testnet relay. */
export function checkNetwork(p: Principal, network: NetworkName): void {
  if (p.environment === null) {
    if (!specOf(network).keyless)
      throw new RelayError(
        "UNAUTHORIZED",
        `${network} requires an API key: send X-API-Key with an sr_${specOf(network).keyEnvironment}_ key`,
      );
    return;
  }
  const allowed = networkOfKeys(p.environment);
  if (allowed !== network) {
    throw new RelayError(
      "FORBIDDEN",
      `this API key (sr_${p.environment}_) is for ${allowed} only; ${network} needs an sr_${p.environment === "test" ? "live" : "test"}_ key`,
      { reason: "wrong_network", keyNetwork: allowed, network },
    );
  }
}

/** A call the principal's key is not scoped for: 403 SCOPE_REQUIRED naming the scope. */
export function requireScope(p: Principal, scope: KeyScope): void {
  if (!p.scopes.includes(scope))
    throw new RelayError("SCOPE_REQUIRED", `this API key's scopes (${p.scopes.join(", ")}) do not include ${scope}`, {
      scope,
      keyScopes: [...p.scopes],
    });
}

/** The network a principal's requests go to when they name none. */
export const defaultNetwork = (p: Principal): NetworkName =>
  p.environment ? networkOfKeys(p.environment) : KEYLESS_NETWORK;
