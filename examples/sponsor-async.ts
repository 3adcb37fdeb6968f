/**
 * Sponsors a payment without waiting for the ledger: 202 as soon as the network has accepted it,
 * then the submission is looked up until it is final (a long poll, not a busy loop).
 * Usage: bun run start (in another shell), then bun examples/sponsor-async.ts
 */
import { signedPayment } from "./signed-payment.ts";

const relay = process.env.RELAY_URL ?? "http://localhost:3000";
const transaction = await signedPayment(relay);

const res = await fetch(`${relay}/v1/sponsor`, {
  method: "POST",
  headers: { "content-type": "application/json", prefer: "respond-async" },
  body: JSON.stringify({ transaction, network: "testnet" }),
});
console.log(res.status, JSON.stringify(await res.json())); // 202 {"hash":"…","innerHash":"…","status":"submitted"}
if (res.status !== 202) process.exit(1);

// Location: /v1/transactions/{innerHash}; ?wait=10 answers as soon as the status is final, or after 10 s
const lookup = await fetch(`${relay}${res.headers.get("location")}?wait=10`);
const submission = (await lookup.json()) as { status: string; ledger?: number };
console.log(lookup.status, submission.status, submission.ledger); // 200 success 42
if (submission.status !== "success") process.exit(1);
