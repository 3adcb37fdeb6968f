/**
 * Regression (found in review; the test failed before the fix): a fee-bump lease ends at the request's 504 with `charged = 0` (FeeLease.end ignores
 * `consumed`), so the channel's hold is dropped while the fee-bump is still queued, and when it
 * lands later (settled by recovery) the channel actor's balance is never lowered by the fee.
 */
import { afterEach, expect, test } from "bun:test";
import { AFTER_504_ENV, startTestRelay, type TestRelay } from "../support/relay.ts";

let r: TestRelay;
afterEach(() => r?.stop());

test("after a 504 the channel keeps its fee hold while the fee-bump is queued, and its balance follows the fee once it lands", {
  timeout: 30_000,
}, async () => {
  r = await startTestRelay({
    ...AFTER_504_ENV,
    TESTNET_CHANNELS: "1",
  });
  const user = await r.funded();
  const tx = await r.payment(user);
  const res = await r.post("/v1/sponsor", { transaction: tx.toEnvelope().toXDR("base64"), network: "testnet" });
  expect(res.status).toBe(504); // queued, no ledger yet
  const pool = r.networks.get("testnet").pool!;
  const [ch] = pool.list().channels;
  const inFlightWhileQueued = ch!.inFlight.count; // the queued fee-bump may still be charged to it

  r.close(); // it lands: the network charges the channel
  const onNetwork = r.networks.get("testnet").localnet!.account(ch!.publicKey)!.balance;
  const actor = () => BigInt(pool.list().channels[0]!.balance);
  // recovery settles the submission (every 100 ms): the actor's balance is lowered by the fee, or never is
  for (let i = 0; i < 150 && actor() !== onNetwork; i++) await Bun.sleep(20);
  expect({ inFlightWhileQueued, actor: actor() }).toEqual({ inFlightWhileQueued: 1, actor: onNetwork });
});
