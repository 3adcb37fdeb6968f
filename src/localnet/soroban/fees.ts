/**
 * Soroban resource and rent fees, following rs-soroban-env `soroban-env-host/src/fees.rs`
 * (`compute_transaction_resource_fee`, `compute_rent_fee`, `compute_rent_write_fee_per_1kb`) and the
 * default simulation adjustments of `soroban-simulation`. Pure: all money is `bigint` stroops.
 */

/** Soroban network fee/limit settings (the current SLP-4/SLP-5 values of the reference, section 5). */
export interface SorobanSettings {
  /** Fee per 10,000 instructions. */
  feePerInstructionIncrement: bigint;
  feePerDiskReadEntry: bigint;
  feePerWriteEntry: bigint;
  feePerDiskRead1Kb: bigint;
  /** Flat write fee per 1 KB (p23+ `ContractLedgerCostExtV0.feeWrite1KB`); also paid for TTL-entry writes. */
  feePerWrite1Kb: bigint;
  feePerTransactionSize1Kb: bigint;
  feePerHistorical1Kb: bigint;
  feePerContractEvent1Kb: bigint;
  /** 1 KB of persistent state is charged the rent fee per 1 KB once every this many ledgers. */
  persistentRentRateDenominator: bigint;
  /** As `persistentRentRateDenominator`, for temporary state. */
  tempRentRateDenominator: bigint;
  minPersistentTtl: number;
  minTemporaryTtl: number;
  maxEntryTtl: number;
  /** The rent fee per 1 KB grows linearly from `rentFee1KbLow` to `rentFee1KbHigh` up to this state size. */
  sorobanStateTargetSizeBytes: bigint;
  rentFee1KbLow: bigint;
  rentFee1KbHigh: bigint;
  /** Multiplier of the rent fee slope past the target size. */
  rentFeeGrowthFactor: bigint;
  /** The (average) in-memory Soroban state size the rent fee per 1 KB is computed from. */
  averageSorobanStateSize: bigint;
  txMaxInstructions: number;
  txMaxDiskReadEntries: number;
  txMaxDiskReadBytes: number;
  txMaxWriteLedgerEntries: number;
  txMaxWriteBytes: number;
  txMaxSizeBytes: number;
  txMaxFootprintEntries: number;
  txMaxContractEventsSizeBytes: number;
  txMemoryLimit: number;
  ledgerMaxTxCount: number;
  /** Per execution thread; the network runs 2 (`ledger_max_dependent_tx_clusters`). */
  ledgerMaxInstructions: number;
}

/**
 * The reference's "current (SLP-4)" fees and limits table, with the testnet rent settings.
 *
 * `averageSorobanStateSize` is a chosen value, not a network reading: 3,000,000,000 bytes (3/4 of
 * the 4 GB target). Below about 2.52 GB the linear rent formula (low -17,000, high 10,000) is below
 * the 1,000 floor, so every smaller state gives the floor. At 3 GB the formula gives exactly
 * -17,000 + 27,000 × 3/4 = 3,250 stroops per 1 KB, which is above the floor, below the target, and
 * about 3.7× the flat write fee. At that rate, 1 KB of persistent state for `minPersistentTtl`
 * (120,960 ledgers, about 7 days) costs about 0.032 XLM.
 */
export const CURRENT_SOROBAN_SETTINGS: SorobanSettings = {
  feePerInstructionIncrement: 7n,
  feePerDiskReadEntry: 1_563n,
  feePerWriteEntry: 2_500n,
  feePerDiskRead1Kb: 447n,
  feePerWrite1Kb: 875n,
  feePerTransactionSize1Kb: 406n,
  feePerHistorical1Kb: 4_059n,
  feePerContractEvent1Kb: 5_000n,
  persistentRentRateDenominator: 1_215n,
  tempRentRateDenominator: 2_430n,
  minPersistentTtl: 120_960,
  minTemporaryTtl: 720,
  maxEntryTtl: 3_110_400,
  sorobanStateTargetSizeBytes: 4_000_000_000n,
  rentFee1KbLow: -17_000n,
  rentFee1KbHigh: 10_000n,
  rentFeeGrowthFactor: 5_000n,
  averageSorobanStateSize: 3_000_000_000n,
  txMaxInstructions: 400_000_000,
  txMaxDiskReadEntries: 200,
  txMaxDiskReadBytes: 200_000,
  txMaxWriteLedgerEntries: 200,
  txMaxWriteBytes: 132_096,
  txMaxSizeBytes: 132_096,
  txMaxFootprintEntries: 400,
  txMaxContractEventsSizeBytes: 16_384,
  txMemoryLimit: 41_943_040,
  ledgerMaxTxCount: 2_000,
  ledgerMaxInstructions: 580_000_000,
};

/** Declared or actual resources of one transaction. Every field is a non-negative integer. */
export interface TxResources {
  instructions: number;
  /** Classic (non-contract) footprint keys plus archived Soroban entries being restored. */
  diskReadEntries: number;
  /** The read-write footprint size. */
  writeEntries: number;
  diskReadBytes: number;
  writeBytes: number;
  /** XDR size of the (inner) transaction envelope. */
  txSizeBytes: number;
  /** Contract events plus return value; 0 for pre-submission validation. */
  contractEventsSizeBytes: number;
}

/** One change of a ledger entry with a TTL, as seen by rent computation. */
export interface RentChange {
  isPersistent: boolean;
  isCodeEntry: boolean;
  /** 0 when the entry is new. */
  oldSizeBytes: number;
  newSizeBytes: number;
  /** 0 when the entry is new. */
  oldLiveUntilLedger: number;
  newLiveUntilLedger: number;
}

const INSTRUCTIONS_INCREMENT = 10_000n;
const KB = 1024n;
/** Rough size of a transaction result in the history archives (`TX_BASE_RESULT_SIZE`). */
const TX_BASE_RESULT_SIZE = 300n;
/** Size charged for writing one TTL entry (`TTL_ENTRY_SIZE`). */
const TTL_ENTRY_SIZE = 48n;
const MINIMUM_RENT_WRITE_FEE_PER_1KB = 1_000n;
const CODE_ENTRY_RENT_DISCOUNT_FACTOR = 3n;

/** `ceil(a / b)` for `a >= 0`, `b > 0`. */
function ceilDiv(a: bigint, b: bigint): bigint {
  return (a + b - 1n) / b;
}

/** `ceil(amount * rate / increment)`: the fee for `amount` units charged `rate` per `increment`. */
function feePerIncrement(amount: number | bigint, rate: bigint, increment: bigint): bigint {
  return ceilDiv(BigInt(amount) * rate, increment);
}

/**
 * `compute_transaction_resource_fee`: the non-refundable part (compute, entry reads and writes,
 * read and write bytes, history, bandwidth) and the refundable part (events only; rent is
 * computed separately by {@link computeRentFee}).
 */
export function computeResourceFee(
  r: TxResources,
  s: SorobanSettings = CURRENT_SOROBAN_SETTINGS,
): { nonRefundable: bigint; refundable: bigint } {
  const nonRefundable =
    feePerIncrement(r.instructions, s.feePerInstructionIncrement, INSTRUCTIONS_INCREMENT) +
    BigInt(r.diskReadEntries) * s.feePerDiskReadEntry +
    BigInt(r.writeEntries) * s.feePerWriteEntry +
    feePerIncrement(r.diskReadBytes, s.feePerDiskRead1Kb, KB) +
    feePerIncrement(r.writeBytes, s.feePerWrite1Kb, KB) +
    feePerIncrement(BigInt(r.txSizeBytes) + TX_BASE_RESULT_SIZE, s.feePerHistorical1Kb, KB) +
    feePerIncrement(r.txSizeBytes, s.feePerTransactionSize1Kb, KB);
  const refundable = feePerIncrement(r.contractEventsSizeBytes, s.feePerContractEvent1Kb, KB);
  return { nonRefundable, refundable };
}

/**
 * `compute_rent_write_fee_per_1kb` for `s.averageSorobanStateSize`: linear from `rentFee1KbLow` at
 * size 0 to `rentFee1KbHigh` at the target size, then `rentFeeGrowthFactor` times steeper; never
 * below 1,000.
 */
export function rentWriteFeePer1Kb(s: SorobanSettings = CURRENT_SOROBAN_SETTINGS): bigint {
  const slope = s.rentFee1KbHigh - s.rentFee1KbLow;
  const target = s.sorobanStateTargetSizeBytes;
  const size = s.averageSorobanStateSize;
  const fee =
    size < target
      ? s.rentFee1KbLow + ceilDiv(slope * size, target)
      : s.rentFee1KbHigh + ceilDiv(slope * (size - target) * s.rentFeeGrowthFactor, target);
  return fee > MINIMUM_RENT_WRITE_FEE_PER_1KB ? fee : MINIMUM_RENT_WRITE_FEE_PER_1KB;
}

/** Rent for keeping `sizeBytes` for `ledgers` ledgers at `rentPer1Kb`. */
function rentFor(
  sizeBytes: number,
  ledgers: number,
  isPersistent: boolean,
  rentPer1Kb: bigint,
  s: SorobanSettings,
): bigint {
  const denominator = isPersistent ? s.persistentRentRateDenominator : s.tempRentRateDenominator;
  return ceilDiv(BigInt(sizeBytes) * rentPer1Kb * BigInt(ledgers), KB * denominator);
}

/** `rent_fee_per_entry_change`: extension at the new size plus a top-up of prepaid ledgers for growth. */
function rentForChange(c: RentChange, currentLedger: number, rentPer1Kb: bigint, s: SorobanSettings): bigint {
  const isNew = c.oldSizeBytes === 0 && c.oldLiveUntilLedger === 0;
  const paidThrough = isNew ? Math.max(currentLedger - 1, 0) : c.oldLiveUntilLedger;
  let fee = 0n;
  if (c.newLiveUntilLedger >= paidThrough) {
    fee += rentFor(c.newSizeBytes, c.newLiveUntilLedger - paidThrough, c.isPersistent, rentPer1Kb, s);
  }
  if (!isNew && c.oldLiveUntilLedger >= currentLedger && c.newSizeBytes >= c.oldSizeBytes) {
    const prepaidLedgers = c.oldLiveUntilLedger - currentLedger + 1;
    fee += rentFor(c.newSizeBytes - c.oldSizeBytes, prepaidLedgers, c.isPersistent, rentPer1Kb, s);
  }
  return c.isCodeEntry ? ceilDiv(fee, CODE_ENTRY_RENT_DISCOUNT_FACTOR) : fee;
}

/**
 * `compute_rent_fee`: rent for every change (code entries at a third), plus, for each entry whose
 * live-until ledger grows, one entry write and 48 bytes written for its TTL entry.
 */
export function computeRentFee(
  changes: RentChange[],
  currentLedger: number,
  s: SorobanSettings = CURRENT_SOROBAN_SETTINGS,
): bigint {
  const rentPer1Kb = rentWriteFeePer1Kb(s);
  let fee = 0n;
  let extended = 0n;
  for (const c of changes) {
    fee += rentForChange(c, currentLedger, rentPer1Kb, s);
    if (c.oldLiveUntilLedger < c.newLiveUntilLedger) extended += 1n;
  }
  return fee + extended * s.feePerWriteEntry + feePerIncrement(extended * TTL_ENTRY_SIZE, s.feePerWrite1Kb, KB);
}

/**
 * `max(ceil(x * num / den), x + add)`, with 0 kept at 0 (an unused resource is not padded), as
 * soroban-simulation's `SimulationAdjustmentFactor` does. Upstream floors an f64 product instead of
 * rounding up, so its result can be 1 lower.
 */
function adjust(x: bigint, num: bigint, den: bigint, add: bigint): bigint {
  if (x === 0n) return 0n;
  const scaled = ceilDiv(x * num, den);
  return scaled > x + add ? scaled : x + add;
}

/** The simulator's instruction adjustment: `max(ceil(n × 1.04), n + 50,000)`; 0 stays 0. */
export function adjustInstructions(n: number): number {
  return Number(adjust(BigInt(n), 104n, 100n, 50_000n));
}

/** The simulator's transaction-size adjustment: `max(ceil(n × 1.1), n + 500)`; 0 stays 0. */
export function adjustTxSize(n: number): number {
  return Number(adjust(BigInt(n), 11n, 10n, 500n));
}

/** The simulator's adjustment of the refundable fee (events + rent): `ceil(fee × 1.15)`. */
export function adjustRefundableFee(fee: bigint): bigint {
  return adjust(fee, 115n, 100n, 0n);
}

/**
 * The first per-transaction limit the resources exceed, as `"<resource> <value> > <limit>"`, or
 * null when all are within limits (a value equal to its limit is allowed).
 */
export function exceededLimit(
  r: TxResources,
  footprintEntries: number,
  s: SorobanSettings = CURRENT_SOROBAN_SETTINGS,
): string | null {
  const checks: [string, number, number][] = [
    ["instructions", r.instructions, s.txMaxInstructions],
    ["disk read entries", r.diskReadEntries, s.txMaxDiskReadEntries],
    ["write entries", r.writeEntries, s.txMaxWriteLedgerEntries],
    ["footprint entries", footprintEntries, s.txMaxFootprintEntries],
    ["disk read bytes", r.diskReadBytes, s.txMaxDiskReadBytes],
    ["write bytes", r.writeBytes, s.txMaxWriteBytes],
    ["tx size bytes", r.txSizeBytes, s.txMaxSizeBytes],
    ["contract events size bytes", r.contractEventsSizeBytes, s.txMaxContractEventsSizeBytes],
  ];
  const over = checks.find(([, value, limit]) => value > limit);
  return over ? `${over[0]} ${over[1]} > ${over[2]}` : null;
}
