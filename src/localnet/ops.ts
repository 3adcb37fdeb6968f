/**
 * Classic operations localnet applies with their state effects (createAccount, native payment,
 * bumpSequence, setOptions, manageData, accountMerge). Every other classic operation succeeds
 * without effect ("not modelled"). Each function returns the operation's result.
 */
import {
  Op,
  publicKeyW,
  rawToAddress,
  muxedToAddress,
  sha256,
  xdrText,
  type OperationW,
  type OperationResultW,
} from "../stellar/xdr.ts";
import { availableBalance, newAccount, type Account, type Overlay } from "./state.ts";
import { opInner, opOuter, OpOuter } from "./results.ts";

export interface OpContext {
  ledgerSeq: number;
  closeTime: bigint;
  baseReserve: number;
  /** Sequence number ledgerSeq << 32, the starting sequence of new accounts. */
  startingSeq: bigint;
  /** Seed for ids an operation creates (claimable balances). */
  opId: Uint8Array;
}

const INT64_MAX = (1n << 63n) - 1n;
const MAX_SIGNERS = 20;
const ok = (t: number, extra?: Record<string, unknown>) => opInner(t, 0, extra);

function createAccount(
  o: Overlay,
  src: Account,
  op: Extract<OperationW["body"], { type: 0 }>["createAccountOp"],
  ctx: OpContext,
): OperationResultW {
  const T = Op.createAccount;
  if (op.startingBalance <= 0n) return opInner(T, -1);
  const dest = rawToAddress(op.destination.ed25519);
  if (o.account(dest)) return opInner(T, -4);
  if (op.startingBalance < 2n * BigInt(ctx.baseReserve)) return opInner(T, -3);
  if (availableBalance(src, ctx.baseReserve) < op.startingBalance) return opInner(T, -2);
  src.balance -= op.startingBalance;
  o.putAccount(newAccount(dest, op.startingBalance, ctx.startingSeq, ctx.ledgerSeq));
  return ok(T);
}

function payment(
  o: Overlay,
  src: Account,
  op: Extract<OperationW["body"], { type: 1 }>["paymentOp"],
  ctx: OpContext,
): OperationResultW {
  const T = Op.payment;
  if (op.amount <= 0n) return opInner(T, -1);
  if (op.asset.type !== 0) return ok(T); // credit assets: not modelled
  const destId = muxedToAddress(op.destination);
  const dest = o.loadAccount(destId);
  if (!dest) return opInner(T, -5);
  if (dest.id === src.id) return ok(T);
  if (availableBalance(src, ctx.baseReserve) < op.amount) return opInner(T, -2);
  if (dest.balance + op.amount > INT64_MAX) return opInner(T, -8);
  src.balance -= op.amount;
  dest.balance += op.amount;
  return ok(T);
}

function setOptions(
  src: Account,
  op: Extract<OperationW["body"], { type: 5 }>["setOptionsOp"],
  ctx: OpContext,
): OperationResultW {
  const T = Op.setOptions;
  const weights = [op.masterWeight, op.lowThreshold, op.medThreshold, op.highThreshold];
  if (weights.some((w) => w !== null && w > 255)) return opInner(T, -7);
  if (op.homeDomain !== null && xdrText(op.homeDomain).length > 32) return opInner(T, -9);
  if (op.setFlags !== null && op.clearFlags !== null && (op.setFlags & op.clearFlags) !== 0) return opInner(T, -3);
  if (op.signer) {
    if (op.signer.key.type !== 0) return opInner(T, -8); // only ed25519 signers are modelled
    const key = rawToAddress(op.signer.key.ed25519);
    if (key === src.id || op.signer.weight > 255) return opInner(T, -8);
    const i = src.signers.findIndex((s) => s.key === key);
    if (op.signer.weight === 0) {
      if (i >= 0) {
        src.signers.splice(i, 1);
        src.numSubEntries--;
      }
    } else if (i >= 0) {
      src.signers[i].weight = op.signer.weight;
    } else {
      if (src.signers.length >= MAX_SIGNERS) return opInner(T, -2);
      if (src.balance < BigInt(3 + src.numSubEntries) * BigInt(ctx.baseReserve)) return opInner(T, -1);
      src.signers.push({ key, weight: op.signer.weight });
      src.signers.sort((a, b) => (a.key < b.key ? -1 : 1));
      src.numSubEntries++;
    }
  }
  if (op.masterWeight !== null) src.thresholds[0] = op.masterWeight;
  if (op.lowThreshold !== null) src.thresholds[1] = op.lowThreshold;
  if (op.medThreshold !== null) src.thresholds[2] = op.medThreshold;
  if (op.highThreshold !== null) src.thresholds[3] = op.highThreshold;
  if (op.homeDomain !== null) src.homeDomain = xdrText(op.homeDomain);
  if (op.clearFlags !== null) src.flags &= ~op.clearFlags;
  if (op.setFlags !== null) src.flags |= op.setFlags;
  return ok(T);
}

function manageData(
  src: Account,
  op: Extract<OperationW["body"], { type: 10 }>["manageDataOp"],
  ctx: OpContext,
): OperationResultW {
  const T = Op.manageData;
  const name = xdrText(op.dataName);
  if (name.length === 0 || name.length > 64) return opInner(T, -4);
  if (op.dataValue === null) {
    if (!src.data.delete(name)) return opInner(T, -2);
    src.numSubEntries--;
    return ok(T);
  }
  if (!src.data.has(name)) {
    if (src.balance < BigInt(3 + src.numSubEntries) * BigInt(ctx.baseReserve)) return opInner(T, -3);
    src.numSubEntries++;
  }
  src.data.set(name, op.dataValue);
  return ok(T);
}

function accountMerge(
  o: Overlay,
  src: Account,
  destination: Extract<OperationW["body"], { type: 8 }>["destination"],
  ctx: OpContext,
): OperationResultW {
  const T = Op.accountMerge;
  const destId = muxedToAddress(destination);
  if (destId === src.id) return opInner(T, -1);
  const dest = o.loadAccount(destId);
  if (!dest) return opInner(T, -2);
  if (src.numSubEntries > 0) return opInner(T, -4);
  if (src.seqNum >= ctx.startingSeq) return opInner(T, -5);
  if (dest.balance + src.balance > INT64_MAX) return opInner(T, -6);
  const moved = src.balance;
  dest.balance += moved;
  o.deleteAccount(src.id);
  return ok(T, { sourceAccountBalance: moved });
}

function bumpSequence(src: Account, bumpTo: bigint, ctx: OpContext): OperationResultW {
  if (bumpTo < 0n) return opInner(Op.bumpSequence, -1);
  if (bumpTo > src.seqNum) {
    src.seqNum = bumpTo;
    src.seqLedger = ctx.ledgerSeq;
    src.seqTime = ctx.closeTime;
  }
  return ok(Op.bumpSequence);
}

/**
 * An operation's stateless checks (stellar-core OperationFrame::doCheckValid) for the modelled
 * operations: the failing result, or null. They run on submission, so that a malformed operation
 * is rejected before anyone pays for it.
 */
export function checkOpValid(op: OperationW, sourceId: string): OperationResultW | null {
  const b = op.body;
  switch (b.type) {
    case Op.createAccount:
      return b.createAccountOp.startingBalance < 0n || rawToAddress(b.createAccountOp.destination.ed25519) === sourceId
        ? opInner(b.type, -1)
        : null;
    case Op.payment:
      return b.paymentOp.amount <= 0n ? opInner(b.type, -1) : null;
    case Op.accountMerge:
      return muxedToAddress(b.destination) === sourceId ? opInner(b.type, -1) : null;
    case Op.bumpSequence:
      return b.bumpSequenceOp.bumpTo < 0n ? opInner(b.type, -1) : null;
    case Op.manageData: {
      const name = xdrText(b.manageDataOp.dataName);
      return name.length === 0 || name.length > 64 ? opInner(b.type, -4) : null;
    }
    case Op.setOptions: {
      const o = b.setOptionsOp;
      if ([o.masterWeight, o.lowThreshold, o.medThreshold, o.highThreshold].some((w) => w !== null && w > 255))
        return opInner(b.type, -7);
      if (o.setFlags !== null && o.clearFlags !== null && (o.setFlags & o.clearFlags) !== 0) return opInner(b.type, -3);
      if (
        o.signer &&
        (o.signer.weight > 255 || (o.signer.key.type === 0 && rawToAddress(o.signer.key.ed25519) === sourceId))
      )
        return opInner(b.type, -8);
      return null;
    }
    default:
      return null;
  }
}

/** The result an operation holds when another operation made a transaction invalid (its success shape). */
export function defaultOpResult(op: OperationW): OperationResultW {
  return op.body.type === Op.accountMerge
    ? opInner(op.body.type, 0, { sourceAccountBalance: 0n })
    : notModelled(op, { opId: new Uint8Array(32) } as OpContext);
}

/** Success results of operations that are accepted without state effect. */
function notModelled(op: OperationW, ctx: Pick<OpContext, "opId">): OperationResultW {
  const b = op.body;
  switch (b.type) {
    case Op.pathPaymentStrictReceive:
      return ok(b.type, {
        success: {
          offers: [],
          last: {
            destination: publicKeyW(muxedToAddress(b.pathPaymentStrictReceiveOp.destination)),
            asset: b.pathPaymentStrictReceiveOp.destAsset,
            amount: b.pathPaymentStrictReceiveOp.destAmount,
          },
        },
      });
    case Op.pathPaymentStrictSend:
      return ok(b.type, {
        success: {
          offers: [],
          last: {
            destination: publicKeyW(muxedToAddress(b.pathPaymentStrictSendOp.destination)),
            asset: b.pathPaymentStrictSendOp.destAsset,
            amount: b.pathPaymentStrictSendOp.destMin,
          },
        },
      });
    case Op.manageSellOffer:
    case Op.createPassiveSellOffer:
    case Op.manageBuyOffer:
      return ok(b.type, { success: { offersClaimed: [], offer: { effect: 2 } } });
    case Op.inflation:
      return ok(b.type, { payouts: [] });
    case Op.createClaimableBalance:
      return ok(b.type, { balanceId: { type: 0, v0: sha256(ctx.opId) } });
    default:
      return ok(b.type);
  }
}

/** Applies one classic operation of `sourceId` in the overlay. */
export function applyClassicOp(o: Overlay, sourceId: string, op: OperationW, ctx: OpContext): OperationResultW {
  const src = o.loadAccount(sourceId);
  if (!src) return opOuter(OpOuter.noAccount);
  const b = op.body;
  switch (b.type) {
    case Op.createAccount:
      return createAccount(o, src, b.createAccountOp, ctx);
    case Op.payment:
      return payment(o, src, b.paymentOp, ctx);
    case Op.setOptions:
      return setOptions(src, b.setOptionsOp, ctx);
    case Op.manageData:
      return manageData(src, b.manageDataOp, ctx);
    case Op.accountMerge:
      return accountMerge(o, src, b.destination, ctx);
    case Op.bumpSequence:
      return bumpSequence(src, b.bumpSequenceOp.bumpTo, ctx);
    default:
      return notModelled(op, ctx);
  }
}
