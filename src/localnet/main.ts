/**
 * `bun run localnet`: one standalone network, like a quickstart container.
 * LOCALNET_PORT (8000), LOCALNET_PASSPHRASE (the standalone network's), LEDGER_CLOSE_MS (5000),
 * LOCALNET_DATA_DIR (none: fresh state), LOCALNET_MAX_TX_SET_SIZE (1000 operations per ledger),
 * LOCALNET_SOROBAN_TXS_PER_LEDGER (2000 Soroban transactions per ledger).
 */
import { Elysia } from "elysia";
import { Networks } from "@stellar/stellar-sdk";
import { Localnet } from "./ledger.ts";
import { localnetHttp } from "./server.ts";

const env = process.env;
const port = Number(env.LOCALNET_PORT ?? 8000);
const net = new Localnet({
  passphrase: env.LOCALNET_PASSPHRASE ?? Networks.STANDALONE,
  ledgerCloseMs: Number(env.LEDGER_CLOSE_MS ?? 5000),
  maxTxSetSize: Number(env.LOCALNET_MAX_TX_SET_SIZE ?? 1000),
  dataDir: env.LOCALNET_DATA_DIR || undefined,
  sorobanTxsPerLedger: Number(env.LOCALNET_SOROBAN_TXS_PER_LEDGER ?? 2000),
});
const app = new Elysia()
  .use(localnetHttp(net, { base: "", horizonPath: "", friendbotUrl: `http://localhost:${port}/friendbot` }))
  .listen(port);
net.start();
// one line per ledger: when its close began and when it was published, its transactions applied
// (benchmarks measure confirmation delays from these)
net.onLedgerClosed((l) =>
  console.log(
    JSON.stringify({
      msg: "ledger closed",
      ledger: l.sequence,
      txs: l.txHashes.length,
      closedAtMs: net.header.closeTimeMs,
      appliedAtMs: Date.now(),
    }),
  ),
);
console.log(
  JSON.stringify({
    msg: "localnet listening",
    port: app.server?.port,
    passphrase: net.passphrase,
    rpc: `http://localhost:${port}/rpc`,
    horizon: `http://localhost:${port}/`,
    friendbot: `http://localhost:${port}/friendbot`,
    ledgerCloseMs: net.ledgerCloseMs,
  }),
);
const shutdown = () => {
  net.stop();
  app.stop();
  process.exit(0);
};
process.on("SIGTERM", shutdown);
process.on("SIGINT", shutdown);
