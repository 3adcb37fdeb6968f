/**
 * What enters the queue and what stays in it, as stellar-core's TransactionQueue decides: a
 * submission is admitted (canAdd, then tryAdd) against the next ledger, and after every close the
 * queue ages, and what timed out or became invalid is dropped and banned.
 */
import { X, Tx, toB64, type TransactionResultW } from "../stellar/xdr.ts";
import { availableBalance } from "./state.ts";
import type { Frame } from "./frame.ts";
import { checkValid, minFeeFor, type ValidationContext } from "./validate.ts";
import { plainResult, outerError, feeBumpResult, type TxOutcome } from "./results.ts";
import { BAN_LEDGERS, REPLACE_BY_FEE_MULTIPLIER, type TxQueue } from "./queue.ts";

export type SubmitStatus = "PENDING" | "DUPLICATE" | "TRY_AGAIN_LATER" | "ERROR";
export interface SubmitResult {
  status: SubmitStatus;
  hash: string;
  errorResult?: TransactionResultW;
  errorResultXdr?: string;
}

/** The queue and what its decisions are checked against. */
export interface QueueContext {
  queue: TxQueue;
  /** Validity against the next ledger (its `state` is the ledger's). */
  next: ValidationContext;
  /** Slack on maxTime while queued (it grows with the time since the last close). */
  slack: () => bigint;
}

const wrapOutcome = (f: Frame, fee: bigint, o: TxOutcome): TransactionResultW =>
  f.isFeeBump ? feeBumpResult(fee, f.inner.hash, o) : plainResult(fee, o);

/** stellar-core's TransactionQueue::canAdd followed by tryAdd. */
export function admit(f: Frame, { queue, next: ctx, slack }: QueueContext): SubmitResult {
  const hash = f.hashHex;
  const error = (r: TransactionResultW): SubmitResult => ({
    status: "ERROR",
    hash,
    errorResult: r,
    errorResultXdr: toB64(X.result.encode(r)),
  });
  if (queue.isBanned(hash)) return { status: "TRY_AGAIN_LATER", hash };
  if (f.fullFee < 0n || f.inclusionFee < 0n) return error(plainResult(0n, { code: Tx.malformed }));
  const queued = queue.bySource.get(f.inner.source);
  let replaced: Frame | null = null;
  if (queued) {
    const q = queued.frame;
    if (q.hashHex === hash || (q.isFeeBump && q.inner.hashHex === hash)) return { status: "DUPLICATE", hash };
    if (f.inner.seqNum < q.inner.seqNum) return error(outerError(0n, Tx.badSeq));
    if (!f.isFeeBump || f.inner.seqNum !== q.inner.seqNum || f.inner.isSoroban !== q.inner.isSoroban)
      return { status: "TRY_AGAIN_LATER", hash };
    // replace-by-fee: the new rate must be at least 10x the old one
    if (f.inclusionFee * BigInt(q.feeOps) < REPLACE_BY_FEE_MULTIPLIER * q.inclusionFee * BigInt(f.feeOps)) {
      const need =
        (REPLACE_BY_FEE_MULTIPLIER * q.inclusionFee * BigInt(f.feeOps) + BigInt(q.feeOps) - 1n) / BigInt(q.feeOps) +
        f.inner.resourceFee;
      return error(outerError(need, Tx.insufficientFee));
    }
    replaced = q;
  }
  let evict: Frame[] = [];
  if (!replaced) {
    const room = queue.makeRoom(f);
    if ("needFee" in room) {
      queue.ban(hash, ctx.ledgerSeq + BAN_LEDGERS);
      return room.needFee === null
        ? { status: "TRY_AGAIN_LATER", hash }
        : error(outerError(room.needFee, Tx.insufficientFee));
    }
    evict = room.evict;
  }
  // validity against the next ledger; while queued, maxTime gets the queue's slack
  const v = checkValid(f, ctx, slack());
  if (!v.ok) {
    const r = v.outer !== undefined ? outerError(v.feeCharged, v.outer) : wrapOutcome(f, v.feeCharged, v.inner!);
    return error(r);
  }
  // the fee source must afford this fee on top of everything it already has queued
  const payer = ctx.state.account(f.feeSource)!;
  const alreadyQueued =
    queue.queuedFees(f.feeSource) - (replaced && replaced.feeSource === f.feeSource ? replaced.fullFee : 0n);
  if (availableBalance(payer, ctx.baseReserve) - f.fullFee < alreadyQueued) {
    return error(
      f.isFeeBump
        ? outerError(minFeeFor(f, ctx.baseFee), Tx.insufficientBalance)
        : plainResult(minFeeFor(f, ctx.baseFee), { code: Tx.insufficientBalance }),
    );
  }
  const age = replaced ? queued!.age : 0;
  if (replaced) queue.remove(replaced); // replaced, not banned: its inner transaction is still the queued one
  for (const e of evict) {
    queue.remove(e);
    queue.ban(e.hashHex, ctx.ledgerSeq + BAN_LEDGERS);
  }
  queue.add(f, age);
  return { status: "PENDING", hash };
}

/** After ledger `seq` closed: age the queue, drop what became invalid or too old (banned), lift old bans. */
export function trimQueue(seq: number, { queue, next, slack }: QueueContext): void {
  queue.unban(seq);
  for (const f of queue.age()) {
    queue.remove(f);
    queue.ban(f.hashHex, seq + BAN_LEDGERS);
  }
  for (const f of queue.frames()) {
    if (!checkValid(f, next, slack()).ok) {
      queue.remove(f);
      queue.ban(f.hashHex, seq + BAN_LEDGERS);
    }
  }
}
