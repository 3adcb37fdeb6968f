/**
 * Sponsors a payment through the relay: the user signs, the relay pays the fee.
 * Usage: bun run start (in another shell), then bun examples/sponsor-payment.ts
 */
import { signedPayment } from "./signed-payment.ts";

const relay = process.env.RELAY_URL ?? "http://localhost:3000";
const transaction = await signedPayment(relay);

const res = await fetch(`${relay}/v1/sponsor`, {
  method: "POST",
  headers: { "content-type": "application/json", "x-idempotency-key": crypto.randomUUID() },
  body: JSON.stringify({ transaction, network: "testnet" }),
});
const body = await res.json();
console.log(res.status, JSON.stringify(body)); // 200 {"hash":"…","feePaid":"300","ledger":…,"resultXdr":"…"}
if (!res.ok) process.exit(1);
