/**
 * The load generator: its own process, spawned by `bench/e2e.bench.ts`, so that its CPU is not the
 * relay's. It holds the user accounts, builds and signs their transactions (before each clock
 * starts) and sends them: direct to the network's RPC, or through the relay. Commands arrive one
 * JSON line at a time on stdin and are answered one JSON line each on stdout (`protocol.ts`);
 * diagnostics go to stderr. Bun's fetch pool is raised by the orchestrator
 * (BUN_CONFIG_MAX_HTTP_REQUESTS) so that thousands of requests can be in flight at once.
 */
import { rpc } from "@stellar/stellar-sdk";
import { Accounts } from "./accounts.ts";
import { EnvelopeFactory } from "./envelopes.ts";
import { runLatency } from "./latency.ts";
import { OpenLoopPhase } from "./open-loop.ts";
import type { Command, InitCmd } from "./protocol.ts";

interface Net {
  server: rpc.Server;
  passphrase: string;
  accounts: Accounts;
  factory: EnvelopeFactory;
}
let net: Net | null = null;
let phase: OpenLoopPhase | null = null;

const need = (): Net => {
  if (!net) throw new Error("no network: send init first");
  return net;
};

async function init(cmd: InitCmd): Promise<Net> {
  const server = new rpc.Server(cmd.rpc, { allowHttp: true });
  const { passphrase } = await server.getNetwork();
  const accounts = new Accounts(server, cmd.friendbot, passphrase);
  const sink = await accounts.friendbotFunded();
  return { server, passphrase, accounts, factory: new EnvelopeFactory(passphrase, sink.publicKey()) };
}

async function handle(c: Command): Promise<unknown> {
  switch (c.cmd) {
    case "init":
      net = await init(c);
      return { passphrase: net.passphrase };
    case "fund": {
      const t0 = performance.now();
      await need().accounts.fund(c.count);
      return { accounts: need().accounts.keys.length, ms: performance.now() - t0 };
    }
    case "refresh": {
      const refreshed = await need().accounts.refresh();
      return { refreshed, clean: need().accounts.clean().length };
    }
    case "latency":
      return runLatency(need(), c);
    case "prepare": {
      const n = need();
      phase = new OpenLoopPhase(n.accounts, n.factory, c, c.rate, c.seconds);
      return phase.prepare();
    }
    case "run": {
      if (!phase) throw new Error("no phase prepared");
      const p = phase;
      phase = null;
      return p.run(c.capMs);
    }
    case "exit":
      process.exit(0);
  }
}

for await (const line of console) {
  if (!line.trim()) continue;
  const { id, ...cmd } = JSON.parse(line) as Command & { id: number };
  try {
    const result = await handle(cmd as Command);
    process.stdout.write(`${JSON.stringify({ id, result })}\n`);
  } catch (e) {
    process.stdout.write(`${JSON.stringify({ id, error: e instanceof Error ? (e.stack ?? e.message) : String(e) })}\n`);
  }
}
