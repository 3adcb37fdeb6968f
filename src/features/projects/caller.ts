/**
 * The caller of a /v1 route, as the auth plugin (src/server/auth.plugin.ts) resolved it on arrival:
 * its principal (a project's key, or a client IP's anonymous testnet access) and its IP, typed on
 * the route's context; the network a request is about, checked against the key.
 */
import { Elysia } from "elysia";
import type { NetworkName } from "../../stellar/networks.ts";
import { checkNetwork, defaultNetwork, type Principal } from "./principal.ts";

/** What the auth plugin's onRequest puts on the context of a /v1 request (not the admin API's): its caller. */
export interface CallerContext {
  principal: Principal;
  /** The client's IP (clientIp, TRUST_PROXY aware), read on arrival. */
  clientIp: string;
}

/**
 * The caller on a /v1 route's context, typed: `.use(callerContext)`, then `({ principal })`. The auth plugin's
 * onRequest resolved it (before the body is parsed: refused bodies take a rate-limit token too) and put it on the
 * request's context, the object the handler receives; this only exposes it.
 */
export const callerContext = new Elysia({ name: "caller-context" }).resolve({ as: "scoped" }, (context) => {
  const { principal, clientIp } = context as typeof context & Partial<CallerContext>;
  if (!principal || clientIp === undefined) throw new Error("no principal: the auth plugin did not run for this route");
  return { principal, clientIp };
});

/** The network of a sponsor, simulate or estimate request: the one named, else the caller's (checked against its key). */
export function callerNetwork(principal: Principal, requested: NetworkName | undefined): NetworkName {
  const network = requested ?? defaultNetwork(principal);
  checkNetwork(principal, network);
  return network;
}
