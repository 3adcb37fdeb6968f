/**
 * A paid endpoint with x402: GET /weather answers 402 until it is paid; the relay verifies and
 * settles the payment (fees sponsored), billed to your project.
 * Usage: RELAY_API_KEY=sr_test_... PAY_TO=G... bun examples/x402/server.ts
 * (ASSET: a SEP-41 token contract C... and PRICE in its smallest unit; default: $0.001 in USDC)
 */
import express from "express";
import { paymentMiddleware, x402ResourceServer } from "@x402/express";
import { HTTPFacilitatorClient } from "@x402/core/server";
import { ExactStellarScheme } from "@x402/stellar/exact/server";

const relay = process.env.RELAY_URL ?? "http://localhost:3000";
const key = { Authorization: `Bearer ${process.env.RELAY_API_KEY}` };
const facilitator = new HTTPFacilitatorClient({
  url: `${relay}/x402`,
  createAuthHeaders: async () => ({ verify: key, settle: key, supported: key }),
});
const server = new x402ResourceServer(facilitator).register("stellar:testnet", new ExactStellarScheme());
const { ASSET, PRICE = "10000" } = process.env;

const app = express();
app.use(
  paymentMiddleware(
    {
      "GET /weather": {
        accepts: {
          scheme: "exact",
          network: "stellar:testnet",
          payTo: process.env.PAY_TO!,
          price: ASSET ? { amount: PRICE, asset: ASSET } : "$0.001",
        },
        description: "Today's weather",
      },
    },
    server,
  ),
);
app.get("/weather", (_req, res) => {
  res.json({ weather: "sunny" });
});
const listener = app.listen(Number(process.env.PORT ?? 4021), () => {
  console.log(`listening on http://localhost:${(listener.address() as { port: number }).port}`);
});
