import { describe, expect, test } from "bun:test";
import {
  CURRENT_SOROBAN_SETTINGS as S,
  adjustInstructions,
  adjustRefundableFee,
  adjustTxSize,
  computeRentFee,
  computeResourceFee,
  exceededLimit,
  rentWriteFeePer1Kb,
  type RentChange,
  type TxResources,
} from "../../src/localnet/soroban/fees.ts";

const NONE: TxResources = {
  instructions: 0,
  diskReadEntries: 0,
  writeEntries: 0,
  diskReadBytes: 0,
  writeBytes: 0,
  txSizeBytes: 0,
  contractEventsSizeBytes: 0,
};

/** The reference's worked example (section 5). */
const EXAMPLE: TxResources = {
  instructions: 1_500_000,
  diskReadEntries: 2,
  writeEntries: 2,
  diskReadBytes: 300,
  writeBytes: 300,
  txSizeBytes: 600,
  contractEventsSizeBytes: 300,
};

/** History fee of an empty transaction: ceil(300 B base result × 4059 / 1024) = ceil(1189.16). */
const HISTORY_BASE = 1_190n;

describe("computeResourceFee", () => {
  test("the reference example: non-refundable 13,370, events 1,465", () => {
    expect(computeResourceFee(EXAMPLE)).toEqual({ nonRefundable: 13_370n, refundable: 1_465n });
  });

  test("each component of the example", () => {
    const only = (r: Partial<TxResources>): bigint => computeResourceFee({ ...NONE, ...r }).nonRefundable;
    expect(only({ instructions: 1_500_000 }) - HISTORY_BASE).toBe(1_050n); // 1.5M × 7 / 10k
    expect(only({ diskReadEntries: 2 }) - HISTORY_BASE).toBe(3_126n); // 2 × 1563
    expect(only({ writeEntries: 2 }) - HISTORY_BASE).toBe(5_000n); // 2 × 2500
    expect(only({ diskReadBytes: 300 }) - HISTORY_BASE).toBe(131n); // ceil(300 × 447 / 1024 = 130.96)
    expect(only({ writeBytes: 300 }) - HISTORY_BASE).toBe(257n); // ceil(300 × 875 / 1024 = 256.35)
    // history ceil(900 × 4059 / 1024 = 3567.48) + bandwidth ceil(600 × 406 / 1024 = 237.89)
    expect(only({ txSizeBytes: 600 })).toBe(3_568n + 238n);
    expect(computeResourceFee({ ...NONE, contractEventsSizeBytes: 300 }).refundable).toBe(1_465n);
  });

  test("zero resources still pay history for the base result size", () => {
    expect(computeResourceFee(NONE)).toEqual({ nonRefundable: HISTORY_BASE, refundable: 0n });
  });

  test("every byte-based fee rounds up", () => {
    expect(computeResourceFee({ ...NONE, instructions: 1 }).nonRefundable).toBe(HISTORY_BASE + 1n);
    expect(computeResourceFee({ ...NONE, contractEventsSizeBytes: 1 }).refundable).toBe(5n); // ceil(5000 / 1024)
  });
});

describe("rentWriteFeePer1Kb", () => {
  const at = (size: bigint): bigint => rentWriteFeePer1Kb({ ...S, averageSorobanStateSize: size });

  test("the chosen average state size gives 3,250", () => {
    // -17000 + ceil(27000 × 3e9 / 4e9) = -17000 + 20250
    expect(rentWriteFeePer1Kb()).toBe(3_250n);
  });

  test("small states are floored at 1,000", () => {
    expect(at(0n)).toBe(1_000n);
    expect(at(2_600_000_000n)).toBe(1_000n); // -17000 + 17550 = 550
  });

  test("below the target the slope rounds up", () => {
    // 27000 × 2,814,814,815 / 4e9 = 19000.00000125 → 19001
    expect(at(2_814_814_815n)).toBe(2_001n);
    expect(at(3_999_999_999n)).toBe(10_000n);
  });

  test("at and above the target it grows by the growth factor", () => {
    expect(at(4_000_000_000n)).toBe(10_000n);
    // 10000 + ceil(27000 × 1e8 × 5000 / 4e9) = 10000 + 3,375,000
    expect(at(4_100_000_000n)).toBe(3_385_000n);
  });
});

describe("computeRentFee", () => {
  const LEDGER = 1_000;
  /** One TTL-entry write: 2500 per entry + ceil(48 × 875 / 1024 = 41.02) = 2542. */
  const TTL_WRITE = 2_542n;
  const created = (over: Partial<RentChange>): RentChange => ({
    isPersistent: true,
    isCodeEntry: false,
    oldSizeBytes: 0,
    newSizeBytes: 100,
    oldLiveUntilLedger: 0,
    newLiveUntilLedger: LEDGER + S.minPersistentTtl - 1,
    ...over,
  });

  test("a new 100-byte persistent entry for minPersistentTtl ledgers", () => {
    // Ledgers: newLiveUntil - (LEDGER - 1) = 120,960.
    // Rent: ceil(100 × 3250 × 120960 / (1024 × 1215)) = ceil(39,312,000,000 / 1,244,160)
    //   1,244,160 × 31,597 = 39,311,723,520, remainder 276,480 → 31,598.
    // Plus one TTL write: 31,598 + 2,542 = 34,140.
    expect(computeRentFee([created({})], LEDGER)).toBe(34_140n);
  });

  test("a new 100-byte temporary entry for minTemporaryTtl ledgers", () => {
    // ceil(100 × 3250 × 720 / (1024 × 2430)) = ceil(234,000,000 / 2,488,320)
    //   2,488,320 × 94 = 233,902,080, remainder 97,920 → 95; + 2,542 = 2,637.
    const temp = created({ isPersistent: false, newLiveUntilLedger: LEDGER + S.minTemporaryTtl - 1 });
    expect(computeRentFee([temp], LEDGER)).toBe(2_637n);
  });

  test("a code entry pays a third of the rent (rounded up), but the full TTL write", () => {
    // Data: ceil(1000 × 3250 × 120960 / 1,244,160) = ceil(393,120,000,000 / 1,244,160) = 315,973
    //   (1,244,160 × 315,972 = 393,119,723,520, remainder 276,480). Code: ceil(315,973 / 3) = 105,325.
    expect(computeRentFee([created({ newSizeBytes: 1_000 })], LEDGER)).toBe(315_973n + TTL_WRITE);
    expect(computeRentFee([created({ newSizeBytes: 1_000, isCodeEntry: true })], LEDGER)).toBe(105_325n + TTL_WRITE);
  });

  test("extending and growing an existing entry pays the extension and a top-up for prepaid ledgers", () => {
    const grown: RentChange = {
      isPersistent: true,
      isCodeEntry: false,
      oldSizeBytes: 100,
      newSizeBytes: 200,
      oldLiveUntilLedger: 6_000,
      newLiveUntilLedger: 7_000,
    };
    // Extension: ceil(200 × 3250 × 1000 / 1,244,160 = 522.44) = 523.
    // Top-up for ledgers 5000..6000 (1001): ceil(100 × 3250 × 1001 / 1,244,160 = 261.48) = 262.
    expect(computeRentFee([grown], 5_000)).toBe(523n + 262n + TTL_WRITE);
    // Growing without extending: only the top-up and no TTL write.
    expect(computeRentFee([{ ...grown, newLiveUntilLedger: 6_000 }], 5_000)).toBe(262n);
  });

  test("TTL writes are charged per batch of 48-byte entries", () => {
    // Rent 2 × 31,598; TTL: 2 × 2500 + ceil(96 × 875 / 1024 = 82.03) = 5,083.
    expect(computeRentFee([created({}), created({})], LEDGER)).toBe(2n * 31_598n + 5_083n);
    expect(computeRentFee([], LEDGER)).toBe(0n);
  });
});

describe("simulation adjustments", () => {
  test("instructions: max(ceil(n × 1.04), n + 50,000), 0 stays 0", () => {
    expect(adjustInstructions(0)).toBe(0);
    expect(adjustInstructions(1)).toBe(50_001);
    expect(adjustInstructions(1_000_000)).toBe(1_050_000);
    expect(adjustInstructions(1_250_000)).toBe(1_300_000);
    expect(adjustInstructions(1_250_001)).toBe(1_300_002); // 1,300,001.04 rounds up
    expect(adjustInstructions(400_000_000)).toBe(416_000_000);
  });

  test("tx size: max(ceil(n × 1.1), n + 500), 0 stays 0", () => {
    expect(adjustTxSize(0)).toBe(0);
    expect(adjustTxSize(100)).toBe(600);
    expect(adjustTxSize(5_000)).toBe(5_500);
    expect(adjustTxSize(10_001)).toBe(11_002); // 11,001.1 rounds up
    expect(adjustTxSize(132_096)).toBe(145_306); // 145,305.6 rounds up
  });

  test("refundable fee: ceil(fee × 1.15)", () => {
    expect(adjustRefundableFee(0n)).toBe(0n);
    expect(adjustRefundableFee(1n)).toBe(2n);
    expect(adjustRefundableFee(100n)).toBe(115n);
    expect(adjustRefundableFee(1_465n)).toBe(1_685n); // 1,684.75
    expect(adjustRefundableFee(10n ** 15n + 1n)).toBe(1_150_000_000_000_002n); // beyond float precision
  });
});

describe("exceededLimit", () => {
  const AT_LIMITS: TxResources = {
    instructions: S.txMaxInstructions,
    diskReadEntries: S.txMaxDiskReadEntries,
    writeEntries: S.txMaxWriteLedgerEntries,
    diskReadBytes: S.txMaxDiskReadBytes,
    writeBytes: S.txMaxWriteBytes,
    txSizeBytes: S.txMaxSizeBytes,
    contractEventsSizeBytes: S.txMaxContractEventsSizeBytes,
  };

  test("resources at their limits are allowed", () => {
    expect(exceededLimit(EXAMPLE, 4)).toBeNull();
    expect(exceededLimit(AT_LIMITS, S.txMaxFootprintEntries)).toBeNull();
  });

  test.each([
    ["instructions", { instructions: 400_000_001 }, "instructions 400000001 > 400000000"],
    ["diskReadEntries", { diskReadEntries: 201 }, "disk read entries 201 > 200"],
    ["writeEntries", { writeEntries: 201 }, "write entries 201 > 200"],
    ["diskReadBytes", { diskReadBytes: 200_001 }, "disk read bytes 200001 > 200000"],
    ["writeBytes", { writeBytes: 132_097 }, "write bytes 132097 > 132096"],
    ["txSizeBytes", { txSizeBytes: 132_097 }, "tx size bytes 132097 > 132096"],
    ["contractEventsSizeBytes", { contractEventsSizeBytes: 16_385 }, "contract events size bytes 16385 > 16384"],
  ] as const)("%s one over its limit", (_name, over, reason) => {
    expect(exceededLimit({ ...AT_LIMITS, ...over }, S.txMaxFootprintEntries)).toBe(reason);
  });

  test("footprint entries one over the limit", () => {
    expect(exceededLimit(EXAMPLE, 401)).toBe("footprint entries 401 > 400");
  });

  test("a custom settings object is honoured", () => {
    expect(exceededLimit(EXAMPLE, 4, { ...S, txMaxInstructions: 1_000_000 })).toBe("instructions 1500000 > 1000000");
  });
});
