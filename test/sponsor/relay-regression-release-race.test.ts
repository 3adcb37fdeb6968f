/**
 * Regression (found in review; the test failed before the fix): recovery decides to give a reservation back from a row it read before its network lookup,
 * and `release()` marks the row released unconditionally. A client's retry that resumes the
 * submission meanwhile (sends its envelope again) is then in the network's queue while the row says
 * "released": when the retry times out and the transaction lands, recovery never charges it.
 * Instrumented: the first request's sendTransactions of the transaction are lost (RPC timeouts before
 * they reached the network) and recovery's getTransaction lookup is held until the retry has sent.
 */
import { afterEach, expect, test } from "bun:test";
import { TransactionBuilder } from "@stellar/stellar-sdk";
import { AFTER_504_ENV, startTestRelay, type TestRelay } from "../support/relay.ts";
import { fundedMainnetUser, journalSum, mainnetPayment } from "../support/mainnet.ts";
import { RelayError } from "../../src/kernel/errors.ts";
import { RETRY_POLICY } from "../../src/network/submit-protocol.ts";

let r: TestRelay;
afterEach(() => r?.stop());
const CREDITS = 100_000_000n;

test("recovery does not release a submission a concurrent retry has just resent; it is charged when it lands", {
  timeout: 30_000,
}, async () => {
  r = await startTestRelay(AFTER_504_ENV);
  const net = r.networks.get("mainnet").localnet!;
  const p = await r.project({ credits: CREDITS, policy: { requestsPerSecond: 1000, burst: 1000 } });
  const user = await fundedMainnetUser(r);
  const { innerHash, body } = mainnetPayment(r, user, { timeoutSeconds: 600 });
  const headers = { "x-api-key": p.liveKey };

  const gw = r.networks.get("mainnet").gateway!;
  const find = gw.find.bind(gw);
  const send = gw.send.bind(gw);
  let recoveryAsked = false;
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  gw.find = async (hash: string) => {
    if (hash === innerHash && !recoveryAsked) {
      recoveryAsked = true; // the first lookup of this inner hash is recovery's (the first request does not look up)
      await gate;
    }
    return find(hash);
  };
  let sends = 0;
  let resent = false;
  const isOurs = (envelope: string) => {
    const t = TransactionBuilder.fromXDR(envelope, gw.passphrase);
    return "innerTransaction" in t && Buffer.from(t.innerTransaction.hash()).toString("hex") === innerHash;
  };
  gw.send = async (t) => {
    // the first request's send and its resends are lost before the network saw them
    if (isOurs(t) && sends++ <= RETRY_POLICY.lostAnswerResends)
      throw new RelayError("NETWORK_UNAVAILABLE", "timeout", { reason: "timeout" });
    const s = await send(t);
    if (isOurs(t)) resent = true;
    return s;
  };

  const first = await r.post("/v1/sponsor", body, headers);
  expect(first.status).toBe(504);
  expect(first.body.error.details.reason).toBe("network_unavailable");
  for (let i = 0; i < 100 && !recoveryAsked; i++) await Bun.sleep(20);
  expect(recoveryAsked).toBe(true);
  for (let i = 0; i < 13; i++) net.closeLedger(); // more than 12 ledgers since the intent: recovery will give it back
  await Bun.sleep(100);

  const retry = r.post("/v1/sponsor", body, headers); // the client retries: resumes, sends the envelope
  for (let i = 0; i < 100 && !resent; i++) await Bun.sleep(10);
  expect(resent).toBe(true);
  open(); // recovery's lookup answers (not in a ledger yet): it releases
  expect((await retry).status).toBe(504); // queued, no ledger within the timeout
  net.closeLedger(); // the retry's fee-bump lands
  const onChain = await find(innerHash);
  expect(onChain?.successful).toBe(true);

  let j = await journalSum(r, p.id);
  for (let i = 0; i < 20 && j !== CREDITS - 200n; i++) {
    await Bun.sleep(100);
    j = await journalSum(r, p.id);
  }
  expect(j).toBe(CREDITS - 200n); // the network charged 200 for it: recovery must charge it
});
