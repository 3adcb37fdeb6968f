/**
 * Keys that never leave the HSM: a SoftHSM2 token made here, the mainnet funder's key generated in it
 * with pkcs11-tool and funded on a standalone network, and the relay started with only PKCS#11 URIs
 * (MAINNET_FUNDER_SIGNER, CHANNEL_KEYS=pkcs11, CHANNEL_SIGNER). Its channels are created by the
 * token's funder with keys generated in the token (sensitive, never extractable); a sponsorship is
 * paid by one of them; it starts again after kill -9, and with the funder rotated to a new key of the
 * token it keeps its channels; no Stellar seed is in its data directory, its database or its output. A wrong PIN and a missing key end `bun run start` non-zero within 15 s,
 * naming the token (and the key), never the PIN.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import {
  Asset,
  type FeeBumpTransaction,
  Keypair,
  Operation,
  rpc,
  StrKey,
  TransactionBuilder,
} from "@stellar/stellar-sdk";
import postgres from "postgres";
import { seedPglite } from "../support/pglite.ts";
import { adminOf, jsonOf, type Proc, spawnLocalnet, spawnRelay, tempDir } from "../support/processes.ts";
import { TEST_ADMIN_TOKEN } from "../support/relay.ts";
import { makeToken, SOFTHSM_MODULE, softhsmAvailable, type TestToken } from "../support/softhsm.ts";

const DB = process.env.TEST_DATABASE_URL;
const CREDITS = 1_000_000_000n;
const SEED = /S[A-Z2-7]{55}/g;

let token: TestToken;
let net: Awaited<ReturnType<typeof spawnLocalnet>>;
let funder: string;
const data = tempDir("relay-hsm-");
const schema = `t_${crypto.randomUUID().replace(/-/g, "").slice(0, 16)}`;
const relays: Proc[] = [];

/** The token's objects as pkcs11-tool lists them: label, class, EC point (public) and access flags. */
function objects(): { label: string; kind: string; point?: string; access?: string }[] {
  const r = Bun.spawnSync(
    ["pkcs11-tool", "--module", SOFTHSM_MODULE, "--token-label", token.label, "--login", "--pin", token.pin, "-O"],
    { env: { ...process.env, ...token.env }, stdout: "pipe", stderr: "pipe" },
  );
  const out = r.stdout.toString();
  return out
    .split(/\n(?=\S)/)
    .filter((b) => /Key Object/.test(b))
    .map((b) => ({
      kind: /Private Key Object/.test(b) ? "private" : "public",
      label: /label:\s+(.*)/.exec(b)?.[1]?.trim() ?? "",
      point: /EC_POINT:\s+([0-9a-f]+)/.exec(b)?.[1],
      access: /Access:\s+(.*)/.exec(b)?.[1],
    }));
}

const publicKeyOf = (label: string) => {
  const o = objects().find((x) => x.kind === "public" && x.label === label);
  if (!o?.point) throw new Error(`no public key ${label} in the token`);
  return StrKey.encodeEd25519PublicKey(Buffer.from(o.point.slice(4), "hex")); // DER: 04 20 <key>
};

beforeAll(async () => {
  if (!softhsmAvailable) return;
  token = makeToken();
  token.keypairgen("funder", "01");
  funder = publicKeyOf("funder");
  net = await spawnLocalnet({ LEDGER_CLOSE_MS: "500" });
  const r = await fetch(`${net.url}/friendbot?addr=${funder}`);
  if (!r.ok) throw new Error(`friendbot ${r.status}`);
  if (!DB) await seedPglite(data.path);
}, 60_000);

afterAll(async () => {
  for (const r of relays) await r.kill("SIGTERM").catch(() => {});
  await net?.kill("SIGTERM");
  if (DB) {
    const sql = postgres(DB, { max: 1, onnotice: () => {} });
    await sql.unsafe(`drop schema if exists "${schema}" cascade`);
    await sql.end();
  }
  token?.done();
  data.done();
});

const env = (over: Record<string, string> = {}): Record<string, string> => ({
  DATA_DIR: data.path,
  ADMIN_TOKEN: TEST_ADMIN_TOKEN,
  NETWORKS: "mainnet",
  WATCHER_POLL_MS: "100",
  MAINNET_RPC_URL: net.rpcUrl,
  MAINNET_PASSPHRASE: net.passphrase,
  MAINNET_FUNDER_SIGNER: token.uri({ object: "funder" }),
  CHANNEL_KEYS: "pkcs11",
  CHANNEL_SIGNER: token.uri(),
  MAINNET_CHANNELS: "2",
  ...token.env,
  ...(DB ? { DATABASE_URL: DB, DATABASE_SCHEMA: schema } : { DATABASE_URL: "", DATABASE_SCHEMA: "" }),
  REDIS_URL: "",
  ...over,
});

const json = jsonOf;

/** Every file under `dir`, read as bytes (latin1 text, so that a seed in a binary page shows). */
function filesUnder(dir: string): { path: string; text: string }[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [{ path, text: readFileSync(path).toString("latin1") }];
  });
}
const seedsIn = (text: string) => (text.match(SEED) ?? []).filter((s) => StrKey.isValidEd25519SecretSeed(s));

/** `bun run start` that must fail: its exit code, output and how long it took. */
async function failedStart(over: Record<string, string>) {
  const started = Date.now();
  const proc = Bun.spawn(["bun", "src/index.ts"], {
    cwd: join(import.meta.dir, "..", ".."),
    env: { ...process.env, PORT: "0", ...env(over) },
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => proc.kill("SIGKILL"), 30_000);
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  clearTimeout(timer);
  return { code, output: `${out}${err}`, ms: Date.now() - started };
}

test.skipIf(!softhsmAvailable)(
  "funder and channels in the token: channels made by it, a sponsorship paid by one, kill -9 and again, no seed anywhere",
  async () => {
    let relay = await spawnRelay(env());
    relays.push(relay);
    const { admin, poolReady: ready } = adminOf(() => relay.url, TEST_ADMIN_TOKEN);
    const poolReady = () => ready("mainnet", 2);
    const pool = await poolReady();
    expect(pool.funder.publicKey).toBe(funder);

    // each channel's key pair is in the token: its public half is the channel's account, its private half
    // sensitive and never extractable
    const inToken = objects();
    const channelKeys = inToken.filter((o) => o.label.startsWith("mainnet-channel-"));
    const channels = pool.channels.map((c: { publicKey: string }) => c.publicKey).sort();
    expect(channels.length).toBe(2);
    expect(
      channelKeys
        .filter((o) => o.kind === "public")
        .map((o) => publicKeyOf(o.label))
        .sort(),
    ).toEqual(channels);
    for (const o of channelKeys.filter((x) => x.kind === "private")) {
      expect(o.access).toContain("sensitive");
      expect(o.access).toContain("never extractable");
    }

    const health = await json(`${relay.url}/health`);
    const signer = { kind: "pkcs11", token: token.label };
    expect(health.body.networks.mainnet.signer).toEqual({ funder: signer, channels: signer });
    expect(relay.lines.some((l) => l.includes(`keys: mainnet funder pkcs11 token \\"${token.label}\\"`))).toBe(true);

    const project = (await admin("POST", "/projects", { name: "hsm" })).body;
    const key = (await admin("POST", `/projects/${project.id}/keys`, { environment: "live" })).body.key as string;
    expect((await admin("POST", `/projects/${project.id}/credits`, { amount: CREDITS.toString() })).status).toBe(200);
    const server = new rpc.Server(net.rpcUrl, { allowHttp: true });
    const user = Keypair.random();
    expect((await fetch(`${net.url}/friendbot?addr=${user.publicKey()}`)).ok).toBe(true);
    const sponsor = async () => {
      const tx = new TransactionBuilder(await server.getAccount(user.publicKey()), {
        fee: "100",
        networkPassphrase: net.passphrase,
      })
        .addOperation(Operation.payment({ destination: funder, asset: Asset.native(), amount: "1" }))
        .setTimeout(60)
        .build();
      tx.sign(user);
      return await json(`${relay.url}/v1/sponsor`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": key },
        body: JSON.stringify({ transaction: tx.toEnvelope().toXDR("base64"), network: "mainnet" }),
      });
    };
    const paidBy = async (hash: string) => {
      const got = (await server.getTransaction(hash)) as rpc.Api.GetSuccessfulTransactionResponse;
      expect(got.status).toBe(rpc.Api.GetTransactionStatus.SUCCESS);
      const envelope = TransactionBuilder.fromXDR(got.envelopeXdr.toXDR("base64"), net.passphrase);
      return (envelope as FeeBumpTransaction).feeSource;
    };
    const first = await sponsor();
    expect(first.status).toBe(200);
    expect(channels).toContain(await paidBy(first.body.hash));

    await relay.kill("SIGKILL");
    relay = await spawnRelay(env());
    relays.push(relay);
    await poolReady();
    const second = await sponsor();
    expect(second.status).toBe(200);
    expect(channels).toContain(await paidBy(second.body.hash));

    // the funder rotated to a new key in the token (a new object=): the same channels go on paying
    token.keypairgen("funder-2027", "02");
    const rotated = publicKeyOf("funder-2027");
    expect((await fetch(`${net.url}/friendbot?addr=${rotated}`)).ok).toBe(true);
    await relay.kill("SIGTERM");
    relay = await spawnRelay(env({ MAINNET_FUNDER_SIGNER: token.uri({ object: "funder-2027" }) }));
    relays.push(relay);
    const after = await poolReady();
    expect(after.funder.publicKey).toBe(rotated);
    expect(after.channels.map((c: { publicKey: string }) => c.publicKey).sort()).toEqual(channels);
    const third = await sponsor();
    expect(third.status).toBe(200);
    expect(channels).toContain(await paidBy(third.body.hash));
    await relay.kill("SIGTERM");

    // no seed of the relay anywhere: its data directory (PGlite's pages too), its database, its output
    expect(filesUnder(data.path).flatMap((f) => seedsIn(f.text).map((s) => `${f.path}: ${s.slice(0, 4)}…`))).toEqual(
      [],
    );
    expect(relays.flatMap((r) => seedsIn(r.lines.join("\n")))).toEqual([]);
    if (DB) {
      const sql = postgres(DB, { max: 1, onnotice: () => {} });
      const rows = await sql.unsafe(`select secret from "${schema}".channels`);
      await sql.end();
      expect(rows.map((r) => String(r.secret).slice(0, 7))).toEqual(rows.map(() => "pkcs11:"));
    }
  },
  120_000,
);

test.skipIf(!softhsmAvailable)(
  "a wrong PIN ends the start non-zero within 15 s, naming the token and PIN, never the PIN",
  async () => {
    const wrong = "wrong-pin-4711";
    const r = await failedStart({ MAINNET_FUNDER_SIGNER: token.uri({ object: "funder", pin: wrong }) });
    expect(r.code).not.toBe(0);
    expect(r.ms).toBeLessThan(15_000);
    expect(r.output).toContain(`"${token.label}"`);
    expect(r.output).toContain("PIN");
    expect(r.output).toContain("MAINNET_FUNDER_SIGNER");
    expect(r.output).not.toContain(wrong);
    expect(r.output).not.toContain(token.pin);
  },
  40_000,
);

test.skipIf(!softhsmAvailable)(
  "a key the token does not have ends the start non-zero, naming it exactly",
  async () => {
    const r = await failedStart({ MAINNET_FUNDER_SIGNER: token.uri({ object: "no-such-funder" }) });
    expect(r.code).not.toBe(0);
    expect(r.ms).toBeLessThan(15_000);
    expect(r.output).toContain(`no Ed25519 key labelled "no-such-funder"`);
    expect(r.output).toContain(`"${token.label}"`);
    expect(r.output).not.toContain(token.pin);
  },
  40_000,
);
