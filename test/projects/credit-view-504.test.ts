/**
 * Credits as the admin API shows them, against the journal and the chain (both found by a black-box test):
 * while a submission's outcome is not known (answered 504) what it reserved is gone from the balance and
 * shown as reserved (it read 0 on a single instance); the overview's credits spent today count every
 * charge answered (they lagged the answers).
 */
import { afterEach, expect, test } from "bun:test";
import { until } from "../support/harness.ts";
import { AFTER_504_ENV, startTestRelay, type TestRelay } from "../support/relay.ts";
import { fundedMainnetUser, mainnetOf, mainnetPayment, rawTransaction } from "../support/mainnet.ts";
import { resultSummary } from "../../src/stellar/xdr.ts";

let r: TestRelay;
afterEach(() => r?.stop());
const CREDITS = 1_000_000n;

const credits = async (projectId: string) => {
  const v = (await r.admin("GET", `/projects/${projectId}`)).body;
  return { balance: BigInt(v.creditBalance), reserved: BigInt(v.creditReserved) };
};

test("answered 504: its reservation shown as reserved until its outcome is known, then charged what the chain charged", async () => {
  r = await startTestRelay(AFTER_504_ENV);
  const net = r.networks.get("mainnet").localnet!;
  const p = await r.project({ credits: CREDITS });
  const { tx } = mainnetPayment(r, await fundedMainnetUser(r));
  const body = { transaction: tx.toEnvelope().toXDR("base64"), network: "mainnet" };
  const first = await r.post("/v1/sponsor", body, { "x-api-key": p.liveKey });
  expect(first.status).toBe(504);
  const unknown = await credits(p.id);
  expect(unknown.reserved).toBeGreaterThan(0n);
  expect(unknown.balance + unknown.reserved).toBe(CREDITS);
  // the ledger closes: recovery (or the retry) settles it
  net.closeLedger();
  const innerHash = Buffer.from(tx.hash()).toString("hex");
  const onChain = await rawTransaction(r, "mainnet", innerHash);
  expect(onChain.status).toBe("SUCCESS");
  const charged = resultSummary((onChain as unknown as { resultXdr: string }).resultXdr).feeCharged;
  await until("settled", async () => (await credits(p.id)).reserved === 0n, 10_000);
  expect(await credits(p.id)).toEqual({ balance: CREDITS - charged, reserved: 0n });
});

test("the overview's credits spent today: every charge answered, at once", async () => {
  r = await startTestRelay({});
  const main = mainnetOf(r);
  const p = await r.project({ credits: CREDITS });
  const users = await main.fund(4);
  const before = BigInt((await r.admin("GET", "/stats")).body.creditsSpentToday);
  const answers = await Promise.all(users.map(async (u) => main.sponsor(p.liveKey, await main.payment(u))));
  for (const a of answers) expect(a.status).toBe(200);
  const charged = answers.reduce((sum, a) => sum + BigInt(a.body.feePaid), 0n);
  expect(BigInt((await r.admin("GET", "/stats")).body.creditsSpentToday) - before).toBe(charged);
});
