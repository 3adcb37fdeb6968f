/** The fee strategy as a pure function, and the clearing rates read from ledger results. */
import { expect, test } from "bun:test";
import fc from "fast-check";
import {
  asFeeStrategy,
  FAST_MULTIPLIER,
  likelyRate,
  planBid,
  recentClearing,
  REPLACE_AFTER,
} from "../../src/features/tx/fee-strategy.ts";
import { chargedRate, ClearingRates, type Market } from "../../src/network/clearing-rates.ts";
import { BASE_FEE } from "../../src/stellar/protocol.ts";
import { X, toB64 } from "../../src/stellar/xdr.ts";
import { feeBumpResult, plainResult } from "../../src/localnet/results.ts";

const market = (recent: bigint[], median = 100n, percentile = 100n): Market => ({ recent, median, percentile });
const stroops = fc.bigInt({ min: 0n, max: 10n ** 9n });

test("fast bids 10x the highest recent clearing rate: at least 10x the base fee, at most the cap", () => {
  expect(planBid("fast", market([]), 100n, 100_000n)).toMatchObject({ rate: 1_000n, clearing: 100n });
  // the relay's own reading of the last ledgers wins over an older statistic when higher
  expect(planBid("fast", market([120n, 450n, 300n]), 100n, 100_000n).rate).toBe(4_500n);
  expect(planBid("fast", market([120n], 100n, 800n), 100n, 100_000n).rate).toBe(8_000n);
  // capped by the operator's or the policy's cap, but never under the inner transaction's own rate
  expect(planBid("fast", market([50_000n]), 100n, 100_000n).rate).toBe(100_000n);
  expect(planBid("fast", market([50_000n]), 200_000n, 100_000n).rate).toBe(200_000n);
  expect(planBid("fast", market([]), 100n, 100n).rate).toBe(100n);
  expect(planBid("fast", market([]), 100n, 100_000n).replaceAfterLedgers).toBe(1);
});

test("economy bids the fee statistic's median and replaces after two missed ledgers", () => {
  expect(planBid("economy", market([5_000n], 130n, 900n), 100n, 100_000n)).toMatchObject({
    rate: 130n,
    replaceAfterLedgers: 2,
    strategy: "economy",
  });
  expect(planBid("economy", market([], 0n, 0n), 100n, 100_000n).rate).toBe(100n);
  expect(planBid("economy", market([], 300n), 500n, 100_000n).rate).toBe(500n); // the inner transaction's rate
  expect(planBid("economy", market([], 300_000n), 100n, 100_000n).rate).toBe(100_000n);
});

test("properties: within [floor, max(cap, floor)], fast never below economy's or the clearing rate when the cap allows", () => {
  fc.assert(
    fc.property(
      fc.array(stroops, { maxLength: 5 }),
      stroops,
      stroops,
      stroops,
      fc.bigInt({ min: 100n, max: 10n ** 8n }),
      (recent, median, percentile, floor, cap) => {
        const m = market(recent, median, percentile);
        const lowest = floor > BASE_FEE ? floor : BASE_FEE;
        for (const s of ["fast", "economy"] as const) {
          const b = planBid(s, m, floor, cap);
          expect(b.floor).toBe(lowest);
          expect(b.rate >= lowest).toBe(true);
          expect(b.rate <= (cap > lowest ? cap : lowest)).toBe(true);
          expect(b.replaceAfterLedgers).toBe(REPLACE_AFTER[s]);
        }
        const fast = planBid("fast", m, floor, cap).rate;
        const clearing = recentClearing(m);
        if (cap >= clearing * FAST_MULTIPLIER) expect(fast >= clearing * FAST_MULTIPLIER).toBe(true);
        if (cap >= median) expect(fast >= planBid("economy", m, floor, cap).rate).toBe(true);
      },
    ),
  );
});

test("likely: what the last ledgers cleared at (the relay's reading), else the statistics' mode; within [base fee, bid]", () => {
  // a hot surge: the last ledgers cleared at 440 to 672, the statistics' mode (a longer window) says 100
  const hot = planBid("fast", market([440n, 672n, 510n], 100n, 200n), 100n, 100_000n);
  expect(hot.cleared).toBe(672n);
  expect(likelyRate(hot, 100n)).toBe(672n);
  // nothing read lately: the mode
  const quiet = planBid("fast", market([], 100n, 100n), 100n, 100_000n);
  expect(quiet.cleared).toBeNull();
  expect(likelyRate(quiet, 130n)).toBe(130n);
  expect(likelyRate(quiet, 0n)).toBe(BASE_FEE);
  // never above the bid (a cap under the market)
  expect(likelyRate(planBid("fast", market([5_000n]), 100n, 300n), 100n)).toBe(300n);
  // the statistics (a fee-bump counted at its inner operations) may drive the bid; cleared stays the ledgers'
  const stats = planBid("fast", market([100n], 100n, 200n), 100n, 100_000n);
  expect([stats.clearing, stats.cleared]).toEqual([200n, 100n]);
});

test("a stored strategy other than fast or economy is the default, fast", () => {
  expect(asFeeStrategy("economy")).toBe("economy");
  expect(asFeeStrategy(undefined)).toBe("fast");
  expect(asFeeStrategy("turbo")).toBe("fast");
});

const opOk = { code: 0, tr: { type: 1, paymentResult: { code: 0 } } };
const resultB64 = (r: Parameters<typeof X.result.encode>[0]) => toB64(X.result.encode(r));

test("the rate charged per operation, from a result: a fee-bump counts one operation more; Soroban is left out", () => {
  expect(chargedRate(resultB64(plainResult(600n, { code: 0, opResults: [opOk, opOk] } as never)))).toBe(300n);
  expect(
    chargedRate(resultB64(feeBumpResult(900n, new Uint8Array(32), { code: 0, opResults: [opOk, opOk] } as never))),
  ).toBe(300n);
  const soroban = { code: 0, tr: { type: 24, invokeHostFunctionResult: { code: 0, success: new Uint8Array(32) } } };
  expect(chargedRate(resultB64(plainResult(90_000n, { code: 0, opResults: [soroban] } as never)))).toBeNull();
  expect(chargedRate(resultB64(plainResult(100n, { code: -5 } as never)))).toBeNull(); // no operation results
  expect(chargedRate("not xdr")).toBeNull();
});

test("clearing rates: per ledger the median of a few samples, for the last ledgers only", () => {
  const c = new ClearingRates();
  const plain = (fee: bigint) => resultB64(plainResult(fee, { code: 0, opResults: [opOk] } as never));
  for (const fee of [300n, 300n, 5n]) c.see(10, plain(fee)); // 5: a fee capped at a fee source's balance
  c.see(11, plain(100n));
  c.see(14, plain(2_000n));
  expect(c.recent(14)).toEqual([300n, 100n, 2_000n]);
  expect(c.recent(15, 3)).toEqual([2_000n]);
  c.see(30, plain(100n)); // ledgers long past are forgotten
  expect(c.recent(30, 100)).toEqual([100n]);
  // asked again with nothing read since: the same answer, not worked out again; a sample read since counts
  expect(c.recent(30, 100)).toBe(c.recent(30, 100));
  for (const fee of [300n, 300n]) c.see(30, plain(fee));
  expect(c.recent(30, 100)).toEqual([300n]);
});
