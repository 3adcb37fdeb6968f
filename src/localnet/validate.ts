/**
 * Transaction validity as stellar-core checks it (TransactionFrame / FeeBumpTransactionFrame
 * commonValid): structure, fees, time and ledger bounds, sequence numbers, signature weights and
 * balances. Used on submission (against the next ledger) and again when a ledger applies it.
 */
import { Tx, Op, muxedToAddress, type OperationW, type TxCode } from "../stellar/xdr.ts";
import { availableBalance, type Account, type StateReader } from "./state.ts";
import { SignatureChecker } from "./signatures.ts";
import { opOuter, OpOuter, type TxOutcome } from "./results.ts";
import { checkOpValid, defaultOpResult } from "./ops.ts";
import type { Frame, InnerTx } from "./frame.ts";
import { sorobanValidity } from "./soroban/validity.ts";
import { MAX_OPS_PER_TX } from "../stellar/protocol.ts";

export { MAX_OPS_PER_TX };
const MAX_RESOURCE_FEE = 1n << 50n;

/** What the checks read of the ledger the transaction would be applied in. */
export interface ValidationContext {
  state: StateReader;
  ledgerSeq: number; // the ledger being built (LCL + 1)
  closeTime: bigint; // its expected close time (seconds)
  baseFee: number;
  baseReserve: number;
  /** At apply time fees were already charged: skip fee and fee-source balance checks. */
  applying: boolean;
}

export type Validity = { ok: true } | { ok: false; outer?: TxCode; inner?: TxOutcome; feeCharged: bigint };

type Threshold = 1 | 2 | 3;
const LOW: Threshold = 1,
  MEDIUM: Threshold = 2,
  HIGH: Threshold = 3;

/** The threshold level an operation needs from its source account. */
function opThreshold(op: OperationW): Threshold {
  switch (op.body.type) {
    case Op.bumpSequence:
    case Op.allowTrust:
    case Op.setTrustLineFlags:
    case Op.inflation:
    case Op.extendFootprintTtl:
    case Op.restoreFootprint:
      return LOW;
    case Op.accountMerge:
      return HIGH;
    case Op.setOptions: {
      const s = op.body.setOptionsOp;
      return s.masterWeight !== null ||
        s.lowThreshold !== null ||
        s.medThreshold !== null ||
        s.highThreshold !== null ||
        s.signer !== null
        ? HIGH
        : MEDIUM;
    }
    default:
      return MEDIUM;
  }
}

/** The minimum full fee stellar-core reports in a validation error result. */
export const minFeeFor = (f: Frame, baseFee: number): bigint =>
  f.inner.resourceFee + BigInt(baseFee) * BigInt(f.feeOps);

function structure(inner: InnerTx): TxCode | null {
  const n = inner.ops.length;
  if (n === 0) return Tx.missingOperation;
  if (n > MAX_OPS_PER_TX) return Tx.malformed;
  if (inner.isSoroban) {
    if (n !== 1 || inner.tx.ext.v !== 1) return Tx.malformed;
    if (inner.resourceFee < 0n || inner.resourceFee > MAX_RESOURCE_FEE) return Tx.malformed;
  } else if (inner.tx.ext.v !== 0) return Tx.malformed;
  return null;
}

function bounds(inner: InnerTx, ctx: ValidationContext, slack: bigint): TxCode | null {
  const c = inner.tx.cond;
  const tb = c.type === 1 ? c.timeBounds : c.type === 2 ? c.v2.timeBounds : null;
  if (tb) {
    if (tb.minTime > ctx.closeTime) return Tx.tooEarly;
    if (tb.maxTime !== 0n && tb.maxTime < ctx.closeTime + slack) return Tx.tooLate;
  }
  if (c.type === 2 && c.v2.ledgerBounds) {
    const lb = c.v2.ledgerBounds;
    if (lb.minLedger > ctx.ledgerSeq) return Tx.tooEarly;
    if (lb.maxLedger !== 0 && lb.maxLedger <= ctx.ledgerSeq) return Tx.tooLate;
  }
  return null;
}

function sequence(inner: InnerTx, acc: Account, ctx: ValidationContext): TxCode | null {
  const c = inner.tx.cond;
  if (inner.seqNum === BigInt(ctx.ledgerSeq) << 32n) return Tx.badSeq;
  const minSeq = c.type === 2 ? c.v2.minSeqNum : null;
  if (minSeq !== null) {
    if (!(minSeq <= acc.seqNum && acc.seqNum < inner.seqNum)) return Tx.badSeq;
  } else if (inner.seqNum !== acc.seqNum + 1n) return Tx.badSeq;
  if (c.type === 2) {
    if (c.v2.minSeqAge > 0n && ctx.closeTime - acc.seqTime < c.v2.minSeqAge) return Tx.badMinSeqAgeOrGap;
    if (c.v2.minSeqLedgerGap > 0 && ctx.ledgerSeq - acc.seqLedger < c.v2.minSeqLedgerGap) return Tx.badMinSeqAgeOrGap;
  }
  return null;
}

/**
 * Checks a plain transaction, or the inner transaction of a fee-bump (`chargeFee` false: no
 * minimum fee and no balance check for the inner source).
 */
function checkInner(
  inner: InnerTx,
  ctx: ValidationContext,
  chargeFee: boolean,
  slack: bigint,
): TxOutcome | SignatureChecker {
  const s = structure(inner);
  if (s !== null) return { code: s };
  if (inner.isSoroban) {
    const code = sorobanValidity(inner, chargeFee);
    if (code !== null) return { code };
  }
  const b = bounds(inner, ctx, slack);
  if (b !== null) return { code: b };
  if (
    chargeFee &&
    !ctx.applying &&
    inner.fee - inner.resourceFee < BigInt(ctx.baseFee) * BigInt(Math.max(1, inner.ops.length))
  )
    return { code: Tx.insufficientFee };
  const acc = ctx.state.account(inner.source);
  if (!acc) return { code: Tx.noAccount };
  const seq = sequence(inner, acc, ctx);
  if (seq !== null) return { code: seq };
  // the transaction hash is the sha256 of its signature payload
  const checker = new SignatureChecker(inner.hash, inner.signatures);
  if (!checker.check(acc, acc.thresholds[LOW])) return { code: Tx.badAuth };
  const c = inner.tx.cond;
  if (c.type === 2 && c.v2.extraSigners.length) {
    for (const es of c.v2.extraSigners) {
      if (
        es.type !== 0 ||
        !checker.checkSigners([{ key: muxedToAddress({ type: 0, ed25519: es.ed25519 }), weight: 1 }], 1)
      )
        return { code: Tx.badAuth };
    }
  }
  if (chargeFee && !ctx.applying && availableBalance(acc, ctx.baseReserve) < inner.fee)
    return { code: Tx.insufficientBalance };
  // operations: each op's source signs at the op's threshold (an op source that does not exist yet
  // must have signed with its master key, as checkSignatureNoAccount), then the op's own checks
  let opFailed = false;
  const opResults = inner.ops.map((op) => {
    const srcId = op.sourceAccount ? muxedToAddress(op.sourceAccount) : inner.source;
    const src = ctx.state.account(srcId);
    const signed = src
      ? checker.check(src, src.thresholds[opThreshold(op)])
      : checker.checkSigners([{ key: srcId, weight: 1 }], 0);
    const r = signed ? checkOpValid(op, srcId) : opOuter(OpOuter.badAuth);
    if (r) opFailed = true;
    return r;
  });
  if (opFailed) return { code: Tx.failed, opResults: opResults.map((r, i) => r ?? defaultOpResult(inner.ops[i])) };
  if (!checker.allUsed()) return { code: Tx.badAuthExtra };
  return checker;
}

/** Full validity of a frame, as stellar-core's checkValid. */
export function checkValid(f: Frame, ctx: ValidationContext, slack = 0n): Validity {
  const minFee = minFeeFor(f, ctx.baseFee);
  const innerOnly = (chargeFee: boolean): Validity => {
    const r = checkInner(f.inner, ctx, chargeFee, slack);
    if (r instanceof SignatureChecker) return { ok: true };
    return { ok: false, inner: r, feeCharged: r.code === Tx.malformed && chargeFee ? 0n : minFee };
  };
  if (!f.isFeeBump) return innerOnly(true);
  const inner = f.inner;
  if (f.fullFee < 0n || structure(inner) === Tx.malformed) return { ok: false, outer: Tx.malformed, feeCharged: 0n };
  // at apply a fee-bump's outer envelope is not checked again (CAP-15): only its inner transaction
  if (ctx.applying) return innerOnly(false);
  const outerIncl = f.inclusionFee;
  const n = BigInt(Math.max(1, inner.ops.length));
  const base = BigInt(ctx.baseFee);
  if (outerIncl < base * BigInt(f.feeOps)) return { ok: false, outer: Tx.insufficientFee, feeCharged: minFee };
  const innerIncl = inner.fee - inner.resourceFee;
  if (innerIncl >= 0n) {
    // outerIncl / (n + 1) must be at least innerIncl / n
    if (outerIncl * (base * n) < innerIncl * (base * BigInt(f.feeOps))) {
      const need = (innerIncl * BigInt(f.feeOps) + n - 1n) / n;
      return { ok: false, outer: Tx.insufficientFee, feeCharged: need };
    }
  } else if (!inner.isSoroban) {
    return { ok: false, inner: { code: Tx.malformed }, feeCharged: minFee };
  }
  const feeAcc = ctx.state.account(f.feeSource);
  if (!feeAcc) return { ok: false, outer: Tx.noAccount, feeCharged: minFee };
  const outerChecker = new SignatureChecker(f.hash, f.signatures);
  if (!outerChecker.check(feeAcc, feeAcc.thresholds[LOW])) return { ok: false, outer: Tx.badAuth, feeCharged: minFee };
  if (availableBalance(feeAcc, ctx.baseReserve) < f.fullFee)
    return { ok: false, outer: Tx.insufficientBalance, feeCharged: minFee };
  if (!outerChecker.allUsed()) return { ok: false, outer: Tx.badAuthExtra, feeCharged: minFee };
  return innerOnly(false);
}
