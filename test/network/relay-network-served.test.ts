/**
 * A network this relay does not serve (NETWORKS) is the caller's mistake, not an outage: 400
 * NETWORK_NOT_SERVED on every route that takes a network (a 503 would be retried for ever).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestRelay, type TestRelay } from "../support/relay.ts";
import { xdrOf } from "../support/harness.ts";

let r: TestRelay;
let liveKey: string;
let tx: string;
beforeAll(async () => {
  r = await startTestRelay({ NETWORKS: "testnet" });
  liveKey = (await r.project({ credits: 10_000_000n })).liveKey;
  tx = xdrOf(await r.payment(await r.funded()));
}, 90_000);
afterAll(() => r?.stop());

test.each(["/v1/sponsor", "/v1/simulate", "/v1/estimate"])(
  "%s for mainnet on a testnet-only relay is 400 NETWORK_NOT_SERVED, naming the networks served",
  async (path) => {
    const res = await r.post(path, { transaction: tx, network: "mainnet" }, { "x-api-key": liveKey });
    expect(res.status).toBe(400);
    expect(res.headers.get("retry-after")).toBeNull();
    expect(res.body.error.code).toBe("NETWORK_NOT_SERVED");
    expect(res.body.error.details).toEqual({ network: "mainnet", served: ["testnet"] });
    expect(res.body.error.message).toContain("does not serve mainnet");
  },
);

test("the live key's own network, inferred when none is named, is not served either: 400", async () => {
  const res = await r.post("/v1/estimate", { transaction: tx }, { "x-api-key": liveKey });
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe("NETWORK_NOT_SERVED");
});

test("the channels protocol on an unserved network is 400 UNSUPPORTED_NETWORK (relayCode NETWORK_NOT_SERVED)", async () => {
  const res = await r.post("/compat/channels/mainnet", { params: { xdr: tx } }, { "x-api-key": liveKey });
  expect(res.status).toBe(400);
  expect(res.body.success).toBe(false);
  expect(res.body.data.code).toBe("UNSUPPORTED_NETWORK");
  expect(res.body.data.details.relayCode).toBe("NETWORK_NOT_SERVED");
});

test("/v1/sponsor without network: the key's network (a live key: mainnet, not served here), testnet without a key", async () => {
  const live = await r.post("/v1/sponsor", { transaction: tx }, { "x-api-key": liveKey });
  expect(live.status).toBe(400);
  expect(live.body.error.code).toBe("NETWORK_NOT_SERVED");
  expect(live.body.error.details.network).toBe("mainnet");
  const anonymous = await r.post("/v1/sponsor", { transaction: xdrOf(await r.payment(await r.funded())) });
  expect(anonymous.status).toBe(200);
  expect(anonymous.body.status).toBe("success");
});
