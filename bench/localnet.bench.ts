/**
 * `bun run bench:localnet`: how fast localnet accepts and applies classic payments from distinct
 * source accounts. Prints accepted sendTransaction/s over HTTP (load from a worker thread), the
 * ledger apply time, and the combined accepted+applied rate. BENCH_TXS (default 10000).
 */
import { Elysia } from "elysia";
import { Account, Asset, Networks, Operation, TransactionBuilder } from "@stellar/stellar-sdk";
import { Localnet } from "../src/localnet/ledger.ts";
import { localnetHttp } from "../src/localnet/server.ts";
import { fastKey, fastSign, type FastKey } from "./keys.ts";

const N = Number(process.env.BENCH_TXS ?? 10_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64);
const net = new Localnet({ passphrase: Networks.STANDALONE, ledgerCloseMs: 0, maxTxSetSize: N });
const app = new Elysia().use(localnetHttp(net, { base: "", horizonPath: "" })).listen(0);
const url = `http://127.0.0.1:${app.server!.port}/rpc`;
const pass = net.passphrase;

function tx(source: string, seq: bigint, ops: ReturnType<typeof Operation.payment>[], signer: FastKey | null) {
  const b = new TransactionBuilder(new Account(source, seq.toString()), {
    fee: "100",
    networkPassphrase: pass,
  }).setTimeout(0);
  for (const op of ops) b.addOperation(op);
  const t = b.build();
  if (signer) fastSign(t, signer);
  else t.sign(net.root);
  return t;
}
const submitAll = (txs: ReturnType<typeof tx>[]) => {
  for (const t of txs) {
    const r = net.submitXdr(t.toEnvelope().toXdr());
    if (r.status !== "PENDING")
      throw new Error(`set-up transaction not accepted: ${r.status} ${r.errorResultXdr ?? ""}`);
  }
  net.closeLedger();
};

// set-up: root -> funders (100 accounts each) -> N sources, in-process
let t0 = performance.now();
const funders = Array.from({ length: Math.ceil(N / 100) }, fastKey);
const create = (keys: FastKey[], xlm: string) =>
  keys.map((k) => Operation.createAccount({ destination: k.publicKey, startingBalance: xlm }));
for (let i = 0; i < funders.length; i += 100) {
  submitAll([
    tx(
      net.root.publicKey(),
      net.account(net.root.publicKey())!.seqNum,
      create(funders.slice(i, i + 100), "100000"),
      null,
    ),
  ]);
}
const sources = Array.from({ length: N }, fastKey);
submitAll(
  funders.map((f, i) =>
    tx(f.publicKey, net.account(f.publicKey)!.seqNum, create(sources.slice(i * 100, i * 100 + 100), "100"), f),
  ),
);
const dest = sources[0].publicKey;
const payments = sources.map((s) =>
  tx(
    s.publicKey,
    net.account(s.publicKey)!.seqNum,
    [Operation.payment({ destination: dest, asset: Asset.native(), amount: "1" })],
    s,
  ),
);
const bodies = payments.map((p, i) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id: i,
    method: "sendTransaction",
    params: { transaction: p.toEnvelope().toXdr("base64") },
  }),
);
console.log(
  `set-up: ${N} funded source accounts and ${N} signed payments in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
);

// 1. accepted sendTransaction over HTTP, load from a worker thread (the other core)
const worker = new Worker(new URL("./send-worker.ts", import.meta.url).href);
const sent = await new Promise<{ ms: number; statuses: Record<string, number> }>((resolve) => {
  worker.onmessage = (e) => resolve(e.data);
  worker.postMessage({ url, bodies, concurrency: CONCURRENCY, outcome: "rpc-status" });
});
worker.terminate();
const accepted = sent.statuses.PENDING ?? 0;

// 2. apply: one ledger with every queued payment
t0 = performance.now();
const ledger = net.closeLedger();
const applyMs = performance.now() - t0;
const applied = ledger.successfulTxs;

const rate = (n: number, ms: number) => Math.round((n * 1000) / ms);
console.log(
  `sendTransaction over HTTP: ${accepted}/${N} accepted in ${sent.ms.toFixed(0)} ms = ${rate(accepted, sent.ms)} tx/s (concurrency ${CONCURRENCY}; statuses ${JSON.stringify(sent.statuses)})`,
);
console.log(`ledger apply: ${applied} payments applied in ${applyMs.toFixed(0)} ms = ${rate(applied, applyMs)} tx/s`);
console.log(`accepted and applied end to end: ${rate(applied, sent.ms + applyMs)} tx/s (target >= 5000)`);
await app.stop();
process.exit(applied === N ? 0 : 1);
