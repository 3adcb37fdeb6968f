/**
 * Boot: config -> embedded networks -> HTTP listen; graceful shutdown on SIGTERM/SIGINT.
 * Networks without an upstream RPC URL are served by an embedded localnet with the network's real
 * passphrase, whose state lives under DATA_DIR.
 */
import { join } from "node:path";
import { Networks } from "@stellar/stellar-sdk";
import { loadConfig } from "./config.ts";
import { createApp, type NetworkName } from "./app.ts";
import { Localnet } from "./localnet/ledger.ts";

const config = loadConfig();
const passphrases: Record<NetworkName, string> = { testnet: Networks.TESTNET, mainnet: Networks.PUBLIC };
const upstream: Record<NetworkName, string | undefined> = { testnet: config.TESTNET_RPC_URL, mainnet: config.MAINNET_RPC_URL };
const localnets: Partial<Record<NetworkName, Localnet>> = {};
for (const name of ["testnet", "mainnet"] as const) {
  if (upstream[name]) continue;
  localnets[name] = new Localnet({
    passphrase: passphrases[name], ledgerCloseMs: config.LEDGER_CLOSE_MS, maxTxSetSize: config.LOCALNET_MAX_TX_SET_SIZE,
    dataDir: join(config.DATA_DIR, "localnet"),
  });
}
const publicUrl = `http://localhost:${config.PORT}`;
const app = createApp({ localnets, publicUrl }).listen(config.PORT);
for (const [name, net] of Object.entries(localnets)) {
  net.start();
  console.log(JSON.stringify({
    level: "warn", msg: `LOCAL NETWORK: ${name} is an embedded localnet, not the public ${name}`,
    passphrase: net.passphrase, rpc: `${publicUrl}/localnet/${name}/rpc`, friendbot: `${publicUrl}/localnet/${name}/friendbot`,
    horizon: `${publicUrl}/localnet/${name}/horizon`, ledgerCloseMs: net.ledgerCloseMs,
  }));
}
console.log(JSON.stringify({ level: "info", msg: "relay listening", port: app.server?.port }));

function shutdown(): void {
  for (const net of Object.values(localnets)) net.stop();
  void app.stop().then(() => process.exit(0));
}
process.on("SIGTERM", shutdown);
process.on("SIGINT", shutdown);
