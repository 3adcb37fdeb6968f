/** x402's CAIP-2 names of the Stellar networks and the relay's. */
import type { NetworkName } from "../../network/gateway.ts";

export const CAIP2: Record<NetworkName, string> = { mainnet: "stellar:pubnet", testnet: "stellar:testnet" };

/** The relay's network of a CAIP-2 name (null: not a Stellar network x402 names). */
export function networkOf(caip2: string): NetworkName | null {
  if (caip2 === CAIP2.mainnet) return "mainnet";
  if (caip2 === CAIP2.testnet) return "testnet";
  return null;
}
