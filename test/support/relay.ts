/** Test harness: the whole relay (embedded localnets, fast ledgers) on a random port, plus SDK clients for its networks. */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Keypair, rpc, TransactionBuilder, Asset, Operation, type Transaction } from "@stellar/stellar-sdk";
import { loadConfig } from "../../src/config.ts";
import { createLogger } from "../../src/log.ts";
import { startRelay, type Relay } from "../../src/boot.ts";

export interface TestRelay extends Relay {
  rpc: rpc.Server;
  passphrase: string;
  /** Closes a testnet ledger now (for relays started with LEDGER_CLOSE_MS=0). */
  close(): number;
  /** A new testnet account funded by the embedded friendbot. */
  funded(): Promise<Keypair>;
  /** A signed 1-operation payment from `from` (to the localnet root unless given). */
  payment(from: Keypair, opts?: { amount?: string; to?: string; fee?: string; seqOffset?: bigint }): Promise<Transaction>;
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<{ status: number; headers: Headers; body: any }>;
}

export async function startTestRelay(env: Record<string, string> = {}): Promise<TestRelay> {
  const config = loadConfig({ PORT: "0", DATA_DIR: mkdtempSync(join(tmpdir(), "relay-")), LEDGER_CLOSE_MS: "100", WATCHER_POLL_MS: "50", SUBMISSION_TIMEOUT_MS: "5000", TRY_AGAIN_LATER_MS: "500", ...env });
  const relay = await startRelay(config, createLogger("silent"));
  const net = relay.localnets.testnet!;
  const server = new rpc.Server(`${relay.url}/localnet/testnet/rpc`, { allowHttp: true });
  return {
    ...relay, rpc: server, passphrase: net.passphrase,
    close: () => net.closeLedger().sequence,
    async funded() {
      const kp = Keypair.random();
      const pending = fetch(`${relay.url}/localnet/testnet/friendbot?addr=${kp.publicKey()}`);
      if (net.ledgerCloseMs <= 0) { await Bun.sleep(20); net.closeLedger(); }
      const r = await pending;
      if (!r.ok) throw new Error(`friendbot ${r.status}`);
      return kp;
    },
    async payment(from, opts = {}) {
      const acc = await server.getAccount(from.publicKey());
      if (opts.seqOffset) for (let i = 0n; i < opts.seqOffset; i++) acc.incrementSequenceNumber();
      const tx = new TransactionBuilder(acc, { fee: opts.fee ?? "100", networkPassphrase: net.passphrase })
        .addOperation(Operation.payment({ destination: opts.to ?? net.root.publicKey(), asset: Asset.native(), amount: opts.amount ?? "1" }))
        .setTimeout(60).build();
      tx.sign(from);
      return tx;
    },
    async post(path, body, headers = {}) {
      const r = await fetch(`${relay.url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: typeof body === "string" ? body : JSON.stringify(body) });
      const text = await r.text();
      let parsed: unknown = text;
      try { parsed = JSON.parse(text); } catch { /* keep the text */ }
      return { status: r.status, headers: r.headers, body: parsed };
    },
  };
}
