/**
 * Classic operations localnet applies with their state effects: accounts (createAccount, setOptions,
 * manageData, accountMerge, bumpSequence), payments and path payments in one asset (payments.ts),
 * trustlines (trust.ts) and reserve sponsorship (sponsorship.ts). What it does not model (offers,
 * path payments across assets aside, claimable balances, clawbacks, liquidity pools, inflation) is
 * refused with opNOT_SUPPORTED: never a success without effect. Each function returns the result.
 */
import {
  Op,
  rawToAddress,
  muxedKey,
  muxedToAddress,
  xdrText,
  type OperationW,
  type OperationResultW,
} from "../stellar/xdr.ts";
import { minBalance, newAccount, type Account, type Overlay } from "./state.ts";
import { opInner, opOuter, OpOuter } from "./results.ts";
import type { OpContext } from "./op-context.ts";
import { checkPaymentValid, payment, pathPaymentStrictReceive, pathPaymentStrictSend } from "./payments.ts";
import { allowTrust, changeTrust, checkTrustValid, setTrustLineFlags } from "./trust.ts";
import { beginSponsoring, endSponsoring, releaseReserve, revokeSponsorship, takeReserve } from "./sponsorship.ts";
import { movementEvent } from "./classic-events.ts";

export type { OpContext };

const INT64_MAX = (1n << 63n) - 1n;
const MAX_SIGNERS = 20;
const ok = (t: number, extra?: Record<string, unknown>) => opInner(t, 0, extra);

/** createAccount: a sponsored one (CAP-33) may start with 0; its sponsor pays its two base reserves. */
function createAccount(
  o: Overlay,
  src: Account,
  op: Extract<OperationW["body"], { type: 0 }>["createAccountOp"],
  ctx: OpContext,
): OperationResultW {
  const T = Op.createAccount;
  if (op.startingBalance < 0n) return opInner(T, -1);
  const dest = rawToAddress(op.destination.ed25519);
  if (o.account(dest)) return opInner(T, -4);
  const account = newAccount(dest, op.startingBalance, ctx.startingSeq, ctx.ledgerSeq);
  if (ctx.sponsorships.has(dest)) {
    const sponsor = takeReserve(o, account, 2, ctx);
    if (sponsor === false) return opInner(T, -3);
    account.sponsor = sponsor;
  } else if (op.startingBalance < minBalance(account, ctx.baseReserve)) return opInner(T, -3);
  if (src.balance - op.startingBalance < minBalance(src, ctx.baseReserve)) return opInner(T, -2);
  src.balance -= op.startingBalance;
  o.putAccount(account);
  ctx.events.push(
    movementEvent(
      {
        from: src.id,
        to: dest,
        asset: "native",
        amount: op.startingBalance,
        fromKey: ctx.sourceKey,
        toKey: op.destination.ed25519,
      },
      ctx.networkId,
    ),
  );
  return ok(T);
}

function setOptions(
  o: Overlay,
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
        const [gone] = src.signers.splice(i, 1);
        src.numSubEntries--;
        releaseReserve(o, src, gone.sponsor ?? null, 1);
      }
    } else if (i >= 0) {
      src.signers[i].weight = op.signer.weight;
    } else {
      if (src.signers.length >= MAX_SIGNERS) return opInner(T, -2);
      const sponsor = takeReserve(o, src, 1, ctx);
      if (sponsor === false) return opInner(T, -1);
      src.signers.push({ key, weight: op.signer.weight, sponsor });
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
  o: Overlay,
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
    releaseReserve(o, src, src.dataSponsors.get(name) ?? null, 1);
    src.dataSponsors.delete(name);
    return ok(T);
  }
  if (!src.data.has(name)) {
    const sponsor = takeReserve(o, src, 1, ctx);
    if (sponsor === false) return opInner(T, -3);
    if (sponsor) src.dataSponsors.set(name, sponsor);
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
  if ((src.flags & 4) !== 0) return opInner(T, -3); // AUTH_IMMUTABLE
  if (src.numSubEntries !== src.signers.length) return opInner(T, -4); // signers go with it, nothing else
  if (src.seqNum >= ctx.startingSeq) return opInner(T, -5);
  if (dest.balance + src.balance > INT64_MAX) return opInner(T, -6);
  if (src.numSponsoring > 0) return opInner(T, -7); // IS_SPONSOR
  for (const s of src.signers) releaseReserve(o, src, s.sponsor ?? null, 1);
  releaseReserve(o, src, src.sponsor, 2);
  const moved = src.balance;
  dest.balance += moved;
  o.deleteAccount(src.id);
  const move = { from: src.id, to: destId, asset: "native", amount: moved, fromKey: ctx.sourceKey };
  ctx.events.push(movementEvent({ ...move, toKey: muxedKey(destination) }, ctx.networkId));
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
    case Op.pathPaymentStrictReceive:
    case Op.pathPaymentStrictSend:
      return checkPaymentValid(op);
    case Op.changeTrust:
    case Op.allowTrust:
    case Op.setTrustLineFlags:
      return checkTrustValid(op, sourceId);
    case Op.beginSponsoringFutureReserves:
      return rawToAddress(b.beginSponsoringFutureReservesOp.sponsoredId.ed25519) === sourceId
        ? opInner(b.type, -1)
        : null;
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

/** The result an operation holds when another operation made a transaction invalid. */
export function defaultOpResult(op: OperationW): OperationResultW {
  return op.body.type === Op.accountMerge ? ok(op.body.type, { sourceAccountBalance: 0n }) : ok(op.body.type);
}

/** Applies one classic operation of `sourceId` in the overlay. */
export function applyClassicOp(o: Overlay, sourceId: string, op: OperationW, ctx: OpContext): OperationResultW {
  const b = op.body;
  // the new account a sponsorship began for ends it, before it exists for anything else
  if (b.type === Op.endSponsoringFutureReserves) return endSponsoring(sourceId, ctx);
  const src = o.loadAccount(sourceId);
  if (!src) return opOuter(OpOuter.noAccount);
  switch (b.type) {
    case Op.createAccount:
      return createAccount(o, src, b.createAccountOp, ctx);
    case Op.payment:
      return payment(o, src, b.paymentOp, ctx);
    case Op.pathPaymentStrictReceive:
      return pathPaymentStrictReceive(o, src, b.pathPaymentStrictReceiveOp, ctx);
    case Op.pathPaymentStrictSend:
      return pathPaymentStrictSend(o, src, b.pathPaymentStrictSendOp, ctx);
    case Op.setOptions:
      return setOptions(o, src, b.setOptionsOp, ctx);
    case Op.changeTrust:
      return changeTrust(o, src, b.changeTrustOp, ctx);
    case Op.allowTrust:
      return allowTrust(o, src, b.allowTrustOp);
    case Op.setTrustLineFlags:
      return setTrustLineFlags(o, src, b.setTrustLineFlagsOp);
    case Op.manageData:
      return manageData(o, src, b.manageDataOp, ctx);
    case Op.accountMerge:
      return accountMerge(o, src, b.destination, ctx);
    case Op.bumpSequence:
      return bumpSequence(src, b.bumpSequenceOp.bumpTo, ctx);
    case Op.beginSponsoringFutureReserves:
      return beginSponsoring(sourceId, rawToAddress(b.beginSponsoringFutureReservesOp.sponsoredId.ed25519), ctx);
    case Op.revokeSponsorship:
      return revokeSponsorship(o, sourceId, b.revokeSponsorshipOp, ctx);
    default:
      return opOuter(OpOuter.notSupported); // offers, claimable balances, clawbacks, pools, inflation
  }
}
