/**
 * createApp: the relay's HTTP application without listen (tests call app.handle). For now it
 * serves the embedded local networks; the relay endpoints (/v1/*, /health) come with issue 3.
 */
import { Elysia } from "elysia";
import type { Localnet } from "./localnet/ledger.ts";
import { localnetHttp } from "./localnet/server.ts";

export type NetworkName = "testnet" | "mainnet";

export interface AppDeps {
  /** Embedded localnets by network (networks with an upstream RPC URL have none). */
  localnets: Partial<Record<NetworkName, Localnet>>;
  publicUrl: string;
}

export function createApp(deps: AppDeps) {
  const app = new Elysia();
  for (const [name, net] of Object.entries(deps.localnets)) {
    const base = `/localnet/${name}`;
    app.use(localnetHttp(net, { base, horizonPath: "/horizon", friendbotUrl: `${deps.publicUrl}${base}/friendbot` }));
  }
  return app;
}
