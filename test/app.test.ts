/** The relay app embeds one localnet per network, each with that network's real passphrase. */
import { expect, test } from "bun:test";
import { Networks } from "@stellar/stellar-sdk";
import { createApp } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { Localnet } from "../src/localnet/ledger.ts";

test("createApp serves /localnet/{network}/rpc, /horizon and /friendbot", async () => {
  const testnet = new Localnet({ passphrase: Networks.TESTNET, ledgerCloseMs: 0 });
  const mainnet = new Localnet({ passphrase: Networks.PUBLIC, ledgerCloseMs: 0 });
  const app = createApp({ localnets: { testnet, mainnet }, publicUrl: "http://relay.test" });
  const rpc = async (network: string, method: string) => {
    const r = await app.handle(new Request(`http://relay.test/localnet/${network}/rpc`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method }) }));
    return ((await r.json()) as { result: Record<string, unknown> }).result;
  };
  expect(await rpc("testnet", "getNetwork")).toEqual({ friendbotUrl: "http://relay.test/localnet/testnet/friendbot", passphrase: Networks.TESTNET, protocolVersion: 27 });
  expect((await rpc("mainnet", "getNetwork")).passphrase).toBe(Networks.PUBLIC);
  const root = await app.handle(new Request("http://relay.test/localnet/mainnet/horizon/"));
  expect(((await root.json()) as { network_passphrase: string }).network_passphrase).toBe(Networks.PUBLIC);
  const missing = await app.handle(new Request("http://relay.test/localnet/testnet/friendbot?addr=nope"));
  expect(missing.status).toBe(400);
});

test("loadConfig applies defaults, converts numbers and rejects bad values", () => {
  const c = loadConfig({});
  expect(c.PORT).toBe(3000);
  expect(c.DATA_DIR).toBe("./.data");
  expect(c.LEDGER_CLOSE_MS).toBe(5000);
  expect(loadConfig({ PORT: "8080", TESTNET_RPC_URL: "https://rpc.example" }).PORT).toBe(8080);
  expect(() => loadConfig({ PORT: "eighty" })).toThrow(/PORT/);
  expect(() => loadConfig({ LEDGER_CLOSE_MS: "-1" })).toThrow(/LEDGER_CLOSE_MS/);
});
