/**
 * The x402 example end to end, in one command on a fresh clone (`bun run x402:demo`), on the relay's
 * embedded network: it starts a relay (a temporary data directory, a random port, an admin token of
 * its own), serves the embedded testnet's RPC over https with a certificate it generates (the
 * `@x402/stellar` client accepts only https), creates a project that settles payments to a new
 * merchant account, funds a payer with the embedded friendbot, then runs examples/x402/server.ts and
 * examples/x402/client.ts as docs/x402.md does: the client pays 1 XLM (the native asset's contract)
 * for GET /weather. Everything it started is stopped at the end. No internet is needed.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Asset, Keypair } from "@stellar/stellar-sdk";
import { generate } from "selfsigned";

const root = join(import.meta.dir, "..", "..");
const dataDir = mkdtempSync(join(tmpdir(), "x402-demo-"));
const adminToken = `demo-${crypto.randomUUID()}`;
const PRICE = "10000000"; // 1 XLM, in stroops
const started: { kill(): void; exited: Promise<number> }[] = [];
const step = (s: string) => console.error(`· ${s}`);

/** Starts `cmd` and waits for a line of its output matching `ready`; its first group. */
async function start(cmd: string[], env: Record<string, string>, ready: RegExp, from: "stdout" | "stderr") {
  const p = Bun.spawn(cmd, { cwd: root, env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" });
  started.push(p);
  const reader = p[from].getReader();
  let out = "";
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const m = ready.exec(out);
    if (m) return m[1]!;
    const { value, done } = await reader.read();
    if (done) break;
    out += new TextDecoder().decode(value);
  }
  throw new Error(`${cmd.join(" ")} did not start:\n${out.slice(-2000)}`);
}

try {
  step("starting a relay on its embedded networks (a first start funds its channel accounts: a few seconds)");
  const relay = await start(
    ["bun", "run", "src/index.ts"],
    { DATA_DIR: dataDir, PORT: "0", ADMIN_TOKEN: adminToken, LEDGER_CLOSE_MS: "1000", LOG_FORMAT: "json" },
    /relay ready on (http:\/\/[^\s|"]+)/,
    "stdout",
  );
  const admin = (method: string, path: string, body?: unknown) =>
    fetch(`${relay}/v1/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then(async (r) => {
      if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
      return r.json() as Promise<any>;
    });

  step("serving its testnet RPC over https (a certificate made for this run)");
  const pems = await generate([{ name: "commonName", value: "localhost" }], {
    keySize: 2048,
    extensions: [{ name: "subjectAltName", altNames: [{ type: 7, ip: "127.0.0.1" }] }],
  } as Parameters<typeof generate>[1]);
  const caFile = join(dataDir, "demo-ca.pem");
  writeFileSync(caFile, pems.cert);
  const tls = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    tls: { cert: pems.cert, key: pems.private },
    fetch: (req) => {
      const u = new URL(req.url);
      return fetch(`${relay}${u.pathname}${u.search}`, { method: req.method, headers: req.headers, body: req.body });
    },
  });

  step("a merchant and a payer, funded by the embedded friendbot; a project that settles to the merchant");
  const [merchant, payer] = [Keypair.random(), Keypair.random()];
  for (const k of [merchant, payer]) {
    const r = await fetch(`${relay}/localnet/testnet/friendbot?addr=${k.publicKey()}`);
    if (!r.ok) throw new Error(`friendbot: ${r.status} ${await r.text()}`);
  }
  const project = await admin("POST", "/projects", { name: "x402 demo" });
  await admin("PATCH", `/projects/${project.id}`, { x402: { payTo: [merchant.publicKey()] } });
  const { key } = await admin("POST", `/projects/${project.id}/keys`, { environment: "test" });
  const network = await fetch(`${relay}/localnet/testnet/rpc`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "getNetwork" }),
  });
  const { result } = (await network.json()) as { result: { passphrase: string } };
  const asset = Asset.native().contractId(result.passphrase); // the native asset's contract

  step("the paid endpoint (examples/x402/server.ts)");
  const resource = await start(
    ["bun", "examples/x402/server.ts"],
    { RELAY_URL: relay, RELAY_API_KEY: key, PAY_TO: merchant.publicKey(), ASSET: asset, PRICE, PORT: "0" },
    /listening on (\S+)/,
    "stdout",
  );

  step(`the buyer (examples/x402/client.ts) pays 1 XLM for ${resource}/weather`);
  const client = Bun.spawn(["bun", "examples/x402/client.ts"], {
    cwd: root,
    env: {
      ...process.env,
      PAYER_SECRET: payer.secret(),
      RESOURCE_URL: resource,
      STELLAR_RPC_URL: `https://127.0.0.1:${tls.port}/localnet/testnet/rpc`,
      ASSET: asset,
      NODE_EXTRA_CA_CERTS: caFile, // this run's own certificate, trusted by the client only
    },
    stdout: "inherit",
    stderr: "inherit",
  });
  const code = await client.exited;
  tls.stop(true);
  process.exitCode = code;
} catch (e) {
  console.error(e instanceof Error ? e.message : e);
  process.exitCode = 1;
} finally {
  for (const p of started) p.kill();
  await Promise.all(started.map((p) => p.exited));
  rmSync(dataDir, { recursive: true, force: true });
}
