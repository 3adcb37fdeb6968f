/**
 * Pays for GET /weather of examples/x402/server.ts with x402: the client signs only the transfer's
 * authorization entry; the relay submits it and pays the fee.
 * Usage: PAYER_SECRET=S... bun examples/x402/client.ts (RESOURCE_URL: default http://localhost:4021;
 * STELLAR_RPC_URL: an https Stellar RPC, default the public testnet's; ASSET: a token to allow)
 */
import { decodePaymentResponseHeader, wrapFetchWithPaymentFromConfig } from "@x402/fetch";
import { createEd25519Signer } from "@x402/stellar";
import { ExactStellarScheme } from "@x402/stellar/exact/client";

const signer = createEd25519Signer(process.env.PAYER_SECRET!, "stellar:testnet");
const rpc = process.env.STELLAR_RPC_URL ? { url: process.env.STELLAR_RPC_URL } : undefined;
const { ASSET } = process.env;
const pay = wrapFetchWithPaymentFromConfig(fetch, {
  schemes: [{ network: "stellar:*", client: new ExactStellarScheme(signer, rpc) }],
  // USDC is known to the client; another token is allowed by name
  ...(ASSET ? { spendControls: { allowedAssets: [{ network: "stellar:testnet" as const, asset: ASSET }] } } : {}),
});

const res = await pay(`${process.env.RESOURCE_URL ?? "http://localhost:4021"}/weather`);
const receipt = res.headers.get("payment-response");
console.log(res.status, JSON.stringify(await res.json()));
if (receipt) console.log(JSON.stringify(decodePaymentResponseHeader(receipt))); // {"success":true,"transaction":"…",…}
if (!res.ok) process.exit(1);
