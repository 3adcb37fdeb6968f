/**
 * examples/x402 as docs/x402.md runs them: the merchant's paid endpoint (server.ts) and a buyer
 * paying it (client.ts), each in its own process, against the relay on localnet; balances on chain.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { startTestRelay, type TestRelay } from "../support/relay.ts";
import { sac } from "./payments.ts";
import { startTlsProxy } from "./stack.ts";

let r: TestRelay;
let tls: Awaited<ReturnType<typeof startTlsProxy>>;
const root = new URL("../..", import.meta.url).pathname;
const PRICE = 2_500_000n;

beforeAll(async () => {
  r = await startTestRelay({ LEDGER_CLOSE_MS: "500" });
  tls = await startTlsProxy(r);
});
afterAll(async () => {
  tls?.stop();
  await r?.stop();
});

test("docs/x402.md's paid endpoint and client: 200 with the settlement; the payer pays the price, the merchant gets it", async () => {
  const doc = readFileSync(`${root}docs/x402.md`, "utf8");
  for (const f of ["server.ts", "client.ts"])
    expect(doc).toContain(readFileSync(`${root}examples/x402/${f}`, "utf8").trim());
  const [merchant, payer] = [await r.funded(), await r.funded()];
  const key = (await r.project({ x402PayTo: [merchant.publicKey()] })).testKey;
  const balance = (pk: string) => r.networks.get("testnet").localnet!.account(pk)!.balance;
  const before = { payer: balance(payer.publicKey()), merchant: balance(merchant.publicKey()) };
  const server = Bun.spawn(["bun", "examples/x402/server.ts"], {
    cwd: root,
    env: {
      ...process.env,
      RELAY_URL: r.url,
      RELAY_API_KEY: key,
      PAY_TO: merchant.publicKey(),
      ASSET: sac(r),
      PRICE: PRICE.toString(),
      PORT: "0",
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  try {
    const reader = server.stdout.getReader();
    let out = "";
    while (!/listening on (\S+)/.test(out)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the server ended: ${await new Response(server.stderr).text()}`);
      out += new TextDecoder().decode(value);
    }
    const url = /listening on (\S+)/.exec(out)![1]!;
    const client = Bun.spawn(["bun", "examples/x402/client.ts"], {
      cwd: root,
      env: {
        ...process.env,
        PAYER_SECRET: payer.secret(),
        RESOURCE_URL: url,
        STELLAR_RPC_URL: tls.rpcUrl,
        ASSET: sac(r),
        NODE_TLS_REJECT_UNAUTHORIZED: "0",
      },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stdout, stderr, code] = [
      await new Response(client.stdout).text(),
      await new Response(client.stderr).text(),
      await client.exited,
    ];
    expect(code, stderr).toBe(0);
    const [first, receipt] = stdout.trim().split("\n");
    expect(first).toBe('200 {"weather":"sunny"}');
    expect(JSON.parse(receipt!)).toMatchObject({ success: true, network: "stellar:testnet", payer: payer.publicKey() });
    expect(balance(payer.publicKey())).toBe(before.payer - PRICE);
    expect(balance(merchant.publicKey())).toBe(before.merchant + PRICE);
  } finally {
    server.kill();
    await server.exited;
  }
}, 60_000);
