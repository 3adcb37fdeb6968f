/**
 * Latency side by side: a direct SDK client (rpc.Server sendTransaction, then pollTransaction with
 * its defaults: getTransaction at once, then every second) and a relay client (POST /v1/sponsor),
 * each with its own account, sent at the same instant. Before each pair a random pause of up to one
 * ledger spreads the sends over the ledger's cycle. Envelopes are built before the clock starts.
 */
import { type rpc, type Transaction, TransactionBuilder } from "@stellar/stellar-sdk";
import type { Accounts } from "./accounts.ts";
import type { EnvelopeFactory } from "./envelopes.ts";
import type { LatencyCmd, LatencyReply, Sample } from "./protocol.ts";
import { callSponsor, sponsorBody } from "./sponsor-call.ts";

interface Ctx {
  server: rpc.Server;
  passphrase: string;
  accounts: Accounts;
  factory: EnvelopeFactory;
}

export async function runLatency(ctx: Ctx, cmd: LatencyCmd): Promise<LatencyReply> {
  const { accounts, factory } = ctx;
  const clean = accounts.clean();
  // the last clean accounts: open-loop phases take theirs from the front
  let direct = clean[clean.length - 1]!;
  let relay = clean[clean.length - 2]!;
  let spare = clean.length - 3;
  const reply: LatencyReply = { direct: [], relay: [] };
  for (let n = 0; n < cmd.pairs; n++) {
    const envDirect = factory.build(accounts.keys[direct]!, accounts.seq[direct]! + 1n);
    const tx = TransactionBuilder.fromXDR(envDirect, ctx.passphrase) as Transaction;
    const body = sponsorBody(factory.build(accounts.keys[relay]!, accounts.seq[relay]! + 1n));
    await Bun.sleep(Math.random() * cmd.ledgerMs);
    const [d, r] = await Promise.all([sendDirect(ctx.server, tx), sendRelay(cmd, body)]);
    reply.direct.push(d);
    reply.relay.push(r);
    // a failed sample's account may not have used its number: continue with a fresh one
    if (d.ok) accounts.seq[direct]! += 1n;
    else {
      accounts.dirty[direct] = true;
      direct = clean[spare--]!;
    }
    if (r.ok) accounts.seq[relay]! += 1n;
    else {
      accounts.dirty[relay] = true;
      relay = clean[spare--]!;
    }
  }
  return reply;
}

async function sendDirect(server: rpc.Server, tx: Transaction): Promise<Sample> {
  const t0 = performance.now();
  try {
    const sent = await server.sendTransaction(tx);
    if (sent.status !== "PENDING") return { ms: performance.now() - t0, ok: false, error: `send ${sent.status}` };
    const got = await server.pollTransaction(sent.hash);
    const ms = performance.now() - t0;
    return got.status === "SUCCESS" ? { ms, ok: true } : { ms, ok: false, error: `poll ${got.status}` };
  } catch (e) {
    return { ms: performance.now() - t0, ok: false, error: e instanceof Error ? e.message : String(e) };
  }
}

async function sendRelay(cmd: LatencyCmd, body: string): Promise<Sample> {
  const t0 = performance.now();
  const r = await callSponsor(cmd, body);
  const ms = performance.now() - t0;
  return r.status === 200 ? { ms, ok: true } : { ms, ok: false, error: `${r.status} ${r.code}` };
}
