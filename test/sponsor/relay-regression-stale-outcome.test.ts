/**
 * Regression (found in review; the test failed before the fix): a submission row that once got a non-final 422 (rejected before inclusion, fee_charged
 * null) keeps outcome_kind = failure while a later run of the same inner transaction is in flight
 * (recordIntent's upsert does not clear it). Recovery then never looks at it again, and a later
 * retry skips the network lookup. Out-of-order sequence numbers make the first 422 legitimate.
 */
import { afterEach, expect, test } from "bun:test";
import { until } from "../support/harness.ts";
import { AFTER_504_ENV, startTestRelay, type TestRelay } from "../support/relay.ts";
import { fundedMainnetUser, journalSum, mainnetPayment, rawTransaction } from "../support/mainnet.ts";

let r: TestRelay;
afterEach(() => r?.stop());
const CREDITS = 100_000_000n;

test("a submission retried after a non-final 422 is recovered, and a retry answers 200 when the network applied it", {
  timeout: 30_000,
}, async () => {
  r = await startTestRelay(AFTER_504_ENV);
  const net = r.networks.get("mainnet").localnet!;
  const p = await r.project({ credits: CREDITS, policy: { requestsPerSecond: 1000, burst: 1000 } });
  const user = await fundedMainnetUser(r);
  const seq = net.account(user.publicKey())!.seqNum;
  const tx1 = mainnetPayment(r, user, { seq }).tx; // seq + 1
  const tx2 = mainnetPayment(r, user, { seq: seq + 1n }).tx; // seq + 2: valid only after tx1
  const body2 = { transaction: tx2.toEnvelope().toXDR("base64"), network: "mainnet" };
  const headers = { "x-api-key": p.liveKey };

  // 1. tx2 before tx1: tx_bad_seq, rejected before inclusion (a 422 without a fee: not final)
  const early = await r.post("/v1/sponsor", body2, headers);
  expect(early.status).toBe(422);
  expect(early.body.error.details.result_codes.transaction).toBe("tx_bad_seq");

  // 2. tx1 lands
  const a1 = r.post("/v1/sponsor", { transaction: tx1.toEnvelope().toXDR("base64"), network: "mainnet" }, headers);
  await until("tx1 queued", () => net.queue.size > 0, 5000);
  net.closeLedger();
  expect((await a1).status).toBe(200);

  // 3. tx2 again: now valid; queued, but no ledger closes in time -> 504
  const again = await r.post("/v1/sponsor", body2, headers);
  expect(again.status).toBe(504);

  // 4. the ledger closes: tx2 is applied, the network charges its fee
  net.closeLedger();
  const inner2 = Buffer.from(tx2.hash()).toString("hex");
  expect((await rawTransaction(r, "mainnet", inner2)).status).toBe("SUCCESS");

  // 5. recovery should settle it (charge the fee, release the reservation) without a client
  const expected = CREDITS - 200n - 200n; // two payments, 200 stroops each
  let j = await journalSum(r, p.id);
  for (let i = 0; i < 30 && j !== expected; i++) {
    await Bun.sleep(100);
    j = await journalSum(r, p.id);
  }
  const afterRecovery = j;

  // 6. the client retries: the network applied it successfully, so the answer must be 200
  const retry = await r.post("/v1/sponsor", body2, headers);
  const afterRetry = await journalSum(r, p.id);

  expect({
    afterRecovery,
    retryStatus: retry.status,
    retryCode: retry.body?.error?.details?.result_codes?.transaction ?? null,
    afterRetry,
  }).toEqual({ afterRecovery: expected, retryStatus: 200, retryCode: null, afterRetry: expected });
});
