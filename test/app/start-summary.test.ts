/**
 * What the relay logs of an upstream RPC: its scheme, host and port, never its path or query
 * (providers put their API keys there) nor its credentials: in the ready line and in every other
 * line a start logs.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Keypair, Networks } from "@stellar/stellar-sdk";
import { loadConfig } from "../../src/config.ts";
import { readyLine, rpcOrigin } from "../../src/boot/start-summary.ts";
import { capturingLogger, startTestRelay, type TestRelay } from "../support/relay.ts";

const KEYED = "https://user:pw-in-url@rpc.provider.example:8443/v2/PROVIDERKEY0123?apikey=QUERYKEY0123";

test("rpcOrigin: scheme, host and port only", () => {
  expect(rpcOrigin(KEYED)).toBe("https://rpc.provider.example:8443");
  expect(rpcOrigin("http://127.0.0.1:8000/soroban/rpc")).toBe("http://127.0.0.1:8000");
  expect(rpcOrigin("https://[2606:4700::1]/key/abc")).toBe("https://[2606:4700::1]");
  expect(rpcOrigin("not a url")).toBe("(not a URL)");
});

test("the ready line shows an upstream RPC by scheme, host and port; an embedded one by its URL", () => {
  const line = readyLine(loadConfig({}), {
    url: "http://127.0.0.1:3917",
    networks: [
      { name: "mainnet", embedded: false, rpc: KEYED, channels: 4 },
      { name: "testnet", embedded: true, rpc: "http://127.0.0.1:3917/localnet/testnet/rpc", channels: 4 },
    ],
  });
  expect(line).toContain("mainnet: https://rpc.provider.example:8443,");
  expect(line).toContain("testnet: embedded localnet (http://127.0.0.1:3917/localnet/testnet/rpc)");
  for (const secret of ["PROVIDERKEY0123", "QUERYKEY0123", "pw-in-url", "/v2"]) expect(line).not.toContain(secret);
});

describe("a relay started with keyed upstream URLs", () => {
  let r: TestRelay;
  const { log, lines } = capturingLogger("debug");
  const url = (network: string) =>
    `http://user:pw-in-url@127.0.0.1:9/v2/${network}-PROVIDERKEY0123?apikey=QUERYKEY0123`;
  beforeAll(async () => {
    r = await startTestRelay(
      {
        TESTNET_RPC_URL: url("testnet"),
        MAINNET_RPC_URL: url("mainnet"),
        TESTNET_PASSPHRASE: Networks.TESTNET,
        MAINNET_PASSPHRASE: Networks.PUBLIC,
        TESTNET_FUNDER_SECRET: Keypair.random().secret(),
      },
      log,
    );
  });
  afterAll(() => r.stop());

  test("no log line holds the path, query or credentials of an RPC URL; the ready line names the upstream", async () => {
    await r.http.get("/health"); // a call to the (unreachable) upstreams, and what it logs
    const all = lines.map((l) => JSON.stringify(l));
    const ready = lines.find((l) => String(l.msg).startsWith("relay ready on"));
    expect(String(ready?.msg)).toContain("testnet: http://127.0.0.1:9,");
    for (const secret of ["PROVIDERKEY0123", "QUERYKEY0123", "pw-in-url"])
      expect(all.filter((l) => l.includes(secret))).toEqual([]);
  });

  test("a bad RPC URL in the configuration is not echoed", () => {
    try {
      loadConfig({ MAINNET_RPC_URL: "ftp://rpc.example/KEY-IN-PATH" });
      throw new Error("accepted");
    } catch (e) {
      expect(String(e)).toContain("MAINNET_RPC_URL must be a URL");
      expect(String(e)).not.toContain("KEY-IN-PATH");
    }
  });
});
