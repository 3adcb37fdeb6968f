/**
 * The x402 packages from npm around a test relay, as a merchant and a buyer run them: a resource
 * server (express + @x402/express's middleware, @x402/core's HTTPFacilitatorClient pointed at
 * `{relay}/x402` with the merchant's key), and paying clients (@x402/fetch + @x402/stellar's client
 * scheme). @x402/stellar's client builds with an RPC URL it only accepts over https: the relay's
 * testnet RPC is served to it through a TLS proxy with a self-signed certificate.
 */
import type { Server } from "node:http";
import express from "express";
import { generate } from "selfsigned";
import { paymentMiddleware, x402ResourceServer } from "@x402/express";
import { HTTPFacilitatorClient } from "@x402/core/server";
import { wrapFetchWithPaymentFromConfig } from "@x402/fetch";
import { createEd25519Signer } from "@x402/stellar";
import { ExactStellarScheme as ClientScheme } from "@x402/stellar/exact/client";
import { ExactStellarScheme as ServerScheme } from "@x402/stellar/exact/server";
import type { Keypair } from "@stellar/stellar-sdk";
import type { TestRelay } from "../support/relay.ts";

type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export interface Stack {
  /** The resource server's base URL (GET /paid costs `price`). */
  url: string;
  /** The relay's testnet RPC over https (what the client scheme is given). */
  rpcUrl: string;
  facilitator: HTTPFacilitatorClient;
  /** A fetch that pays with `payer`'s key; `sent` records each request's headers. */
  payingFetch(payer: Keypair, sent?: Headers[]): Fetch;
  clientScheme(payer: Keypair): ClientScheme;
  stop(): Promise<void>;
}

export async function startStack(
  r: TestRelay,
  o: { key: string; payTo: string; asset: string; price: bigint; maxTimeoutSeconds?: number },
): Promise<Stack> {
  const tls = await startTlsProxy(r);
  const rpcUrl = tls.rpcUrl;
  const bearer = { Authorization: `Bearer ${o.key}` };
  const facilitator = new HTTPFacilitatorClient({
    url: `${r.url}/x402`,
    createAuthHeaders: async () => ({ verify: bearer, settle: bearer, supported: bearer }),
  });
  const resourceServer = new x402ResourceServer(facilitator).register("stellar:testnet", new ServerScheme());
  const app = express();
  app.use(
    paymentMiddleware(
      {
        "GET /paid": {
          accepts: {
            scheme: "exact",
            price: { amount: o.price.toString(), asset: o.asset },
            network: "stellar:testnet",
            payTo: o.payTo,
            maxTimeoutSeconds: o.maxTimeoutSeconds ?? 60,
          },
          description: "a paid resource",
        },
      },
      resourceServer,
    ),
  );
  app.get("/paid", (_req, res) => {
    res.json({ content: "paid for" });
  });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  const port = (server.address() as { port: number }).port;
  const clientScheme = (payer: Keypair) =>
    new ClientScheme(createEd25519Signer(payer.secret(), "stellar:testnet"), { url: rpcUrl });
  return {
    url: `http://127.0.0.1:${port}`,
    rpcUrl,
    facilitator,
    clientScheme,
    payingFetch: (payer, sent) => {
      const recording = ((input: string | URL | Request, init?: RequestInit) => {
        const req = input instanceof Request ? new Request(input, init) : new Request(String(input), init);
        sent?.push(new Headers(req.headers));
        return fetch(req);
      }) as typeof fetch;
      return wrapFetchWithPaymentFromConfig(recording, {
        schemes: [{ network: "stellar:*", client: clientScheme(payer) as never }],
        // a token the client does not know (the localnet's native SAC): allowed by name, as a buyer would
        spendControls: { allowedAssets: [{ network: "stellar:testnet", asset: o.asset }] },
      });
    },
    stop: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      tls.stop();
    },
  };
}

/**
 * The relay's testnet RPC over https (a proxy with a self-signed certificate), trusted by this
 * process's clients until stop(): what @x402/stellar's client scheme needs.
 */
export async function startTlsProxy(r: TestRelay): Promise<{ rpcUrl: string; stop(): void }> {
  const pems = await generate([{ name: "commonName", value: "localhost" }], {
    keySize: 2048,
    extensions: [{ name: "subjectAltName", altNames: [{ type: 7, ip: "127.0.0.1" }] }],
  } as Parameters<typeof generate>[1]);
  const proxy = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    tls: { cert: pems.cert, key: pems.private },
    fetch: (req) => {
      const u = new URL(req.url);
      return fetch(`${r.url}${u.pathname}${u.search}`, { method: req.method, headers: req.headers, body: req.body });
    },
  });
  const before = process.env.NODE_TLS_REJECT_UNAUTHORIZED;
  process.env.NODE_TLS_REJECT_UNAUTHORIZED = "0";
  return {
    rpcUrl: `https://127.0.0.1:${proxy.port}/localnet/testnet/rpc`,
    stop: () => {
      proxy.stop(true);
      if (before === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
      else process.env.NODE_TLS_REJECT_UNAUTHORIZED = before;
    },
  };
}
