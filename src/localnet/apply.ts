/**
 * Applying a ledger's transaction set as stellar-core does: first every fee is charged (at the
 * lane's market rate, capped at the fee source's balance), then each transaction is re-validated
 * and its operations applied atomically; Soroban refunds go back to the fee source.
 */
import {
  X,
  Tx,
  SOROBAN_OPS,
  muxedKey,
  muxedToAddress,
  rawToAddress,
  type OperationResultW,
  type TransactionResultW,
  type ContractEventW,
  type DiagnosticEventW,
  type ScValW,
  type TxCode,
} from "../stellar/xdr.ts";
import { Overlay, type StateReader, type LedgerStore } from "./state.ts";
import { checkValid, type ValidationContext } from "./validate.ts";
import { applyClassicOp } from "./ops.ts";
import { eventXdr } from "./classic-events.ts";
import { accountEntryData } from "./entries.ts";
import { plainResult, feeBumpResult, outerError, opSucceeded, type TxOutcome } from "./results.ts";
import { applySorobanOp, maxRefundable } from "./soroban/apply.ts";
import type { Frame } from "./frame.ts";

export interface ApplyContext {
  store: LedgerStore;
  ledgerSeq: number;
  closeTime: bigint;
  baseFee: number;
  baseReserve: number;
  networkId: Uint8Array;
  passphrase: string;
}

export interface Applied {
  frame: Frame;
  result: TransactionResultW;
  resultXdr: Uint8Array;
  metaXdr: Uint8Array;
  feeCharged: bigint;
  successful: boolean;
  diagnosticEvents: DiagnosticEventW[];
  contractEvents: ContractEventW[][];
  /** stellar-rpc's fee-stats sample: classic fee charged per operation (inner operations of a fee-bump); Soroban the inclusion fee charged. */
  feeSample: bigint;
}

/** Errors after the sequence check still consume the sequence number at apply. */
const CONSUMES_SEQ: ReadonlySet<TxCode> = new Set([
  Tx.badMinSeqAgeOrGap,
  Tx.badAuth,
  Tx.badAuthExtra,
  Tx.failed,
  Tx.insufficientBalance,
]);

function bumpSeq(store: LedgerStore, f: Frame, ctx: ApplyContext): void {
  const acc = store.account(f.inner.source);
  if (!acc) return;
  const a = {
    ...acc,
    seqNum: f.inner.seqNum,
    seqLedger: ctx.ledgerSeq,
    seqTime: ctx.closeTime,
    lastModified: ctx.ledgerSeq,
  };
  store.putAccount(a);
}

function wrap(f: Frame, fee: bigint, o: TxOutcome): TransactionResultW {
  return f.isFeeBump ? feeBumpResult(fee, f.inner.hash, o) : plainResult(fee, o);
}

/**
 * The ledger entries an applied transaction's operations created: accounts of createAccount (the
 * SDK's requestAirdrop reads the new account's sequence number from them). Other changes are not modelled.
 */
function createdEntries(f: Frame, store: StateReader, ledgerSeq: number): unknown[][] {
  return f.inner.ops.map((op) => {
    if (op.body.type !== 0) return [];
    const a = store.account(rawToAddress(op.body.createAccountOp.destination.ed25519));
    return a
      ? [{ type: 0, created: { lastModifiedLedgerSeq: ledgerSeq, data: accountEntryData(a), ext: { v: 0 } } }]
      : [];
  });
}

function meta(
  opResultsEvents: ContractEventW[][],
  returnValue: ScValW | null,
  isSoroban: boolean,
  diagnostic: DiagnosticEventW[],
  changes: unknown[][] = [],
): Uint8Array {
  return X.meta.encode({
    v: 4,
    v4: {
      ext: { v: 0 },
      txChangesBefore: [],
      txChangesAfter: [],
      operations: opResultsEvents.map((events, k) => ({ ext: { v: 0 }, changes: changes[k] ?? [], events })),
      sorobanMeta: isSoroban ? { ext: { v: 0 }, returnValue } : null,
      events: [],
      diagnosticEvents: diagnostic,
    },
  } as never);
}

/** Applies `frames` in order; `laneBaseFee` gives the per-operation market rate of each lane. */
export function applyTransactions(
  ctx: ApplyContext,
  frames: Frame[],
  laneBaseFee: { classic: bigint; soroban: bigint },
): Applied[] {
  const { store } = ctx;
  // 1. charge every fee
  const charged = frames.map((f) => {
    const rate = f.inner.isSoroban ? laneBaseFee.soroban : laneBaseFee.classic;
    const bid = f.inclusionFee;
    const market = rate * BigInt(f.feeOps);
    let fee = f.inner.resourceFee + (bid < market ? bid : market);
    const payer = store.account(f.feeSource);
    if (!payer) return 0n;
    if (fee > payer.balance) fee = payer.balance;
    store.putAccount({ ...payer, balance: payer.balance - fee });
    return fee;
  });

  // 2. apply each transaction
  const refunds: { to: string; amount: bigint }[] = [];
  const vctx: ValidationContext = {
    state: store,
    ledgerSeq: ctx.ledgerSeq,
    closeTime: ctx.closeTime,
    baseFee: ctx.baseFee,
    baseReserve: ctx.baseReserve,
    applying: true,
  };
  const applied = frames.map((f, i) => {
    let fee = charged[i];
    const inclusion = fee - f.inner.resourceFee;
    const refundable = f.inner.isSoroban && f.inner.soroban ? maxRefundable(f.inner) : 0n;
    let consumed = 0n;
    let outcome: TxOutcome;
    let outer: TxCode | null = null;
    const events: ContractEventW[][] = [];
    const diagnostic: DiagnosticEventW[] = [];
    let returnValue: ScValW | null = null;
    const v = checkValid(f, vctx);
    if (!v.ok) {
      if (v.outer !== undefined) outer = v.outer;
      outcome = v.inner ?? { code: Tx.failed };
      if (v.inner && CONSUMES_SEQ.has(v.inner.code)) bumpSeq(store, f, ctx);
    } else {
      bumpSeq(store, f, ctx);
      const overlay = new Overlay(store);
      let failed = false;
      const sponsorships = new Map<string, string>();
      const opResults: OperationResultW[] = f.inner.ops.map((op) => {
        const source = op.sourceAccount ? muxedToAddress(op.sourceAccount) : f.inner.source;
        if (SOROBAN_OPS.has(op.body.type)) {
          const r = applySorobanOp(overlay, f.inner, op, source, {
            ledgerSeq: ctx.ledgerSeq,
            closeTime: ctx.closeTime,
            networkId: ctx.networkId,
            baseReserve: ctx.baseReserve,
            passphrase: ctx.passphrase,
          });
          if (!r.success) failed = true;
          consumed += r.consumedRefundable;
          events.push(r.events);
          diagnostic.push(...r.diagnostic);
          returnValue = r.returnValue;
          return r.result;
        }
        const opEvents: ContractEventW[] = [];
        const r = applyClassicOp(overlay, source, op, {
          ledgerSeq: ctx.ledgerSeq,
          closeTime: ctx.closeTime,
          baseReserve: ctx.baseReserve,
          startingSeq: BigInt(ctx.ledgerSeq) << 32n,
          sourceKey: op.sourceAccount ? muxedKey(op.sourceAccount) : f.inner.sourceKey,
          networkId: ctx.networkId,
          sponsorships,
          events: opEvents,
        });
        events.push(opEvents);
        if (!opSucceeded(r)) failed = true;
        return r;
      });
      // a sponsorship begun and never ended fails the whole transaction (CAP-33)
      const badSponsorship = !failed && sponsorships.size > 0;
      if (failed || badSponsorship) {
        outcome = badSponsorship ? { code: Tx.badSponsorship } : { code: Tx.failed, opResults };
        consumed = 0n;
        events.length = 0;
        returnValue = null;
      } else {
        overlay.commitTo(store, ctx.ledgerSeq);
        outcome = { code: Tx.success, opResults };
      }
    }
    // Soroban: the unused refundable fee (all of it on failure) goes back to the fee source once
    // the whole set is applied (protocol 23+)
    if (refundable > 0n) {
      const refund = outcome.code === Tx.success ? refundable - consumed : refundable;
      if (refund > 0n) {
        refunds.push({ to: f.feeSource, amount: refund });
        fee -= refund;
      }
    }
    const result = outer !== null ? outerError(fee, outer) : wrap(f, fee, outcome);
    const successful = outer === null && outcome.code === Tx.success;
    return {
      frame: f,
      result,
      resultXdr: X.result.encode(result),
      metaXdr: meta(
        f.inner.ops.map((_, k) => events[k] ?? []),
        returnValue,
        f.inner.isSoroban,
        diagnostic,
        outcome.code === Tx.success ? createdEntries(f, store, ctx.ledgerSeq) : [],
      ),
      feeCharged: fee,
      successful,
      diagnosticEvents: diagnostic,
      contractEvents: f.inner.ops.map((_, k) => events[k] ?? []),
      feeSample: f.inner.isSoroban ? (inclusion > 0n ? inclusion : 0n) : fee / BigInt(Math.max(1, f.inner.ops.length)),
    };
  });
  for (const r of refunds) {
    const payer = store.account(r.to);
    if (payer) store.putAccount({ ...payer, balance: payer.balance + r.amount });
  }
  return applied;
}

export const eventsToB64 = (evs: ContractEventW[]): string[] => evs.map(eventXdr);
