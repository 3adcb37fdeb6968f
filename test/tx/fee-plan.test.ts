/** The one fee planner (sponsor and estimate): its rule as properties, and estimate agreeing with it under surge. */
import { expect, test } from "bun:test";
import fc from "fast-check";
import { planFee } from "../../src/features/tx/fee-plan.ts";
import { BASE_FEE } from "../../src/stellar/protocol.ts";

const stroops = fc.bigInt({ min: 0n, max: 10n ** 12n });

test("the first bid: the network's rate, never under the floor or the base fee, never over MAX_FEE_RATE unless the floor is", () => {
  fc.assert(
    fc.property(stroops, stroops, fc.bigInt({ min: 100n, max: 10n ** 9n }), (network, floor, cap) => {
      const { rate, floor: lowest } = planFee(network, floor, cap);
      expect(lowest).toBe(floor > BASE_FEE ? floor : BASE_FEE);
      expect(rate >= lowest).toBe(true);
      expect(rate <= (cap > lowest ? cap : lowest)).toBe(true);
      const wanted = network > lowest ? network : lowest;
      if (wanted <= cap) expect(rate).toBe(wanted);
    }),
  );
});

test("examples: quiet network, surge above the cap, an inner transaction bidding more than the cap", () => {
  expect(planFee(0n, 0n, 100_000n)).toEqual({ rate: 100n, floor: 100n });
  expect(planFee(5_000n, 100n, 100_000n)).toEqual({ rate: 5_000n, floor: 100n });
  expect(planFee(400_000n, 100n, 100_000n)).toEqual({ rate: 100_000n, floor: 100n });
  expect(planFee(400_000n, 250_000n, 100_000n)).toEqual({ rate: 250_000n, floor: 250_000n });
});
