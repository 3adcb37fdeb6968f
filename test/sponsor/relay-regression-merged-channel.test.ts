/**
 * A channel retired while a fee-bump it signed may still be queued (the request answered 504) is
 * not merged until that submission is resolved: the 504 keeps the channel's hold. Recovery then
 * finds the applied fee-bump, charges it, and the channel is merged; a merged channel's earlier
 * fees are still recognised as the relay's, so a retry answers the network's outcome.
 */
import { afterEach, expect, test } from "bun:test";
import { TransactionBuilder, type FeeBumpTransaction } from "@stellar/stellar-sdk";
import { sql } from "drizzle-orm";
import { AFTER_504_ENV, startTestRelay, type TestRelay } from "../support/relay.ts";
import { fundedMainnetUser, journalSum, mainnetPayment, sqlRows } from "../support/mainnet.ts";

let r: TestRelay;
afterEach(() => r?.stop());
const CREDITS = 100_000_000n;

test("a channel retired while its 504 fee-bump is queued keeps the hold until recovery charges it, then merges", {
  timeout: 30_000,
}, async () => {
  r = await startTestRelay({
    ...AFTER_504_ENV,
    MAINNET_CHANNELS: "2",
  });
  const net = r.networks.get("mainnet").localnet!;
  const p = await r.project({ credits: CREDITS, policy: { requestsPerSecond: 1000, burst: 1000 } });
  const user = await fundedMainnetUser(r);
  const { innerHash, body } = mainnetPayment(r, user, { timeoutSeconds: 600 });
  const headers = { "x-api-key": p.liveKey };

  const first = await r.post("/v1/sponsor", body, headers);
  expect(first.status).toBe(504); // queued; no ledger yet
  const [row] = await sqlRows<{ envelope: string }>(
    r,
    sql`select envelope from submissions where inner_hash = ${innerHash}`,
  );
  const channel = (TransactionBuilder.fromXDR(row!.envelope, net.passphrase) as FeeBumpTransaction).feeSource;

  // the operator retires that channel: it drains, but its hold for the queued fee-bump stays
  expect((await r.admin("DELETE", `/channels/${channel}?network=mainnet`)).status).toBe(202);
  const state = () =>
    r.networks
      .get("mainnet")
      .pool!.list()
      .channels.find((c) => c.publicKey === channel);
  await Bun.sleep(300);
  expect(state()).toMatchObject({ state: "draining", inFlight: { count: 1 } });
  net.closeLedger(); // the fee-bump applies
  // recovery finds it and charges it; the hold ends and the channel is merged
  for (let i = 0; i < 100 && state(); i++) {
    await Bun.sleep(50);
    if (i % 10 === 9) net.closeLedger(); // the merge's own ledger
  }
  expect(state()).toBeUndefined();
  expect(await journalSum(r, p.id)).toBe(CREDITS - 200n);
  const retry = await r.post("/v1/sponsor", body, headers);
  expect(retry.status).toBe(200); // found by its inner hash, paid by a channel merged since
  expect(retry.body.feePaid).toBe("200");
});
