/** Builders for TransactionResult / OperationResult wire values. */
import { Tx, OP_RESULT_FIELD, type OperationResultW, type TransactionResultW, type TxCode } from "../stellar/xdr.ts";

/** An inner (or plain) transaction outcome before it is wrapped. */
export interface TxOutcome {
  code: TxCode;
  opResults?: OperationResultW[];
}

/** OperationResult for opINNER with the given op-specific code (and extra arm fields). */
export function opInner(opType: number, code: number, extra: Record<string, unknown> = {}): OperationResultW {
  return {
    code: 0,
    tr: { type: opType, [OP_RESULT_FIELD[opType]]: { code, ...extra } },
  } as unknown as OperationResultW;
}

/** True for opINNER with the operation's success code. */
export function opSucceeded(r: OperationResultW): boolean {
  if (r.code !== 0) return false;
  const tr = r.tr as unknown as Record<string, { code: number }> & { type: number };
  return tr[OP_RESULT_FIELD[tr.type]].code === 0;
}

/** OperationResult codes outside opINNER. */
export const OpOuter = {
  badAuth: -1,
  noAccount: -2,
  notSupported: -3,
  tooManySubentries: -4,
  exceededWorkLimit: -5,
  tooManySponsoring: -6,
} as const;
export const opOuter = (code: number): OperationResultW => ({ code }) as OperationResultW;

function innerResultBody(o: TxOutcome) {
  return o.code === Tx.success || o.code === Tx.failed
    ? { code: o.code, results: o.opResults ?? [] }
    : { code: o.code };
}

/** TransactionResult for a plain transaction. */
export function plainResult(feeCharged: bigint, o: TxOutcome): TransactionResultW {
  return { feeCharged, result: innerResultBody(o), ext: { v: 0 } } as TransactionResultW;
}

/** TransactionResult for a fee-bump whose inner transaction had outcome `o` (inner feeCharged is 0 since p25). */
export function feeBumpResult(feeCharged: bigint, innerHash: Uint8Array, o: TxOutcome): TransactionResultW {
  const code = o.code === Tx.success ? Tx.feeBumpInnerSuccess : Tx.feeBumpInnerFailed;
  return {
    feeCharged,
    result: {
      code,
      innerResultPair: {
        transactionHash: innerHash,
        result: { feeCharged: 0n, result: innerResultBody(o), ext: { v: 0 } },
      },
    },
    ext: { v: 0 },
  } as TransactionResultW;
}

/** An outer-level fee-bump error (no inner pair). */
export function outerError(feeCharged: bigint, code: TxCode): TransactionResultW {
  return { feeCharged, result: { code }, ext: { v: 0 } } as TransactionResultW;
}
