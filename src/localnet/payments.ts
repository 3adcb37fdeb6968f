/**
 * Payments and path payments in one asset, native or credit, as stellar-core applies them: the
 * destination is credited first (NO_DESTINATION, NO_TRUST, NOT_AUTHORIZED, LINE_FULL), then the
 * source debited (SRC_NO_TRUST, SRC_NOT_AUTHORIZED, UNDERFUNDED); an issuer sends its own asset from
 * nothing and receives it into nothing. A path payment across assets needs an order book, which
 * localnet does not keep: it fails TOO_FEW_OFFERS, as on a network with no offers.
 */
import {
  Op,
  muxedKey,
  muxedToAddress,
  publicKeyW,
  type MuxedAccountW,
  type OperationW,
  type OperationResultW,
} from "../stellar/xdr.ts";
import { assetName, validCode, type AssetW } from "./assets.ts";
import { availableBalance, TrustFlags, type Account, type Overlay } from "./state.ts";
import { opInner } from "./results.ts";
import { movementEvent } from "./classic-events.ts";
import type { OpContext } from "./op-context.ts";

const INT64_MAX = (1n << 63n) - 1n;
/** The codes payments and path payments share (PaymentResultCode, PathPayment*ResultCode). */
const P = {
  malformed: -1,
  underfunded: -2,
  srcNoTrust: -3,
  srcNotAuthorized: -4,
  noDestination: -5,
  noTrust: -6,
  notAuthorized: -7,
  lineFull: -8,
  tooFewOffers: -10,
  overSendMaxOrUnderDestMin: -12,
} as const;

type PaymentOp = Extract<OperationW["body"], { type: 1 }>["paymentOp"];
type StrictReceiveOp = Extract<OperationW["body"], { type: 2 }>["pathPaymentStrictReceiveOp"];
type StrictSendOp = Extract<OperationW["body"], { type: 13 }>["pathPaymentStrictSendOp"];

const muxedId = (m: MuxedAccountW): bigint | null => (m.type === 0 ? null : m.med25519.id);

/** Credits `amount` of `asset` to `dest`: 0, or the failing code. */
function credit(dest: Account, asset: string, amount: bigint): number {
  if (asset === "native") {
    if (dest.balance + amount > INT64_MAX) return P.lineFull;
    dest.balance += amount;
    return 0;
  }
  if (asset.endsWith(`:${dest.id}`)) return 0; // the issuer: burned
  const line = dest.trustlines.get(asset);
  if (!line) return P.noTrust;
  if ((line.flags & TrustFlags.authorized) === 0) return P.notAuthorized;
  if (line.balance + amount > line.limit) return P.lineFull;
  line.balance += amount;
  return 0;
}

/** Debits `amount` of `asset` from `src`: 0, or the failing code. */
function debit(src: Account, asset: string, amount: bigint, baseReserve: number): number {
  if (asset === "native") {
    if (availableBalance(src, baseReserve) < amount) return P.underfunded;
    src.balance -= amount;
    return 0;
  }
  if (asset.endsWith(`:${src.id}`)) return 0; // the issuer: minted
  const line = src.trustlines.get(asset);
  if (!line) return P.srcNoTrust;
  if ((line.flags & TrustFlags.authorized) === 0) return P.srcNotAuthorized;
  if (line.balance < amount) return P.underfunded;
  line.balance -= amount;
  return 0;
}

/** Moves `amount` of `asset` from `src` to the destination: 0, or the failing code. */
function move(o: Overlay, src: Account, to: MuxedAccountW, asset: string, amount: bigint, ctx: OpContext): number {
  const destId = muxedToAddress(to);
  const dest = o.loadAccount(destId);
  if (!dest) return P.noDestination;
  if (dest.id === src.id) return 0; // to oneself: nothing moves
  const code = credit(dest, asset, amount) || debit(src, asset, amount, ctx.baseReserve);
  if (code === 0)
    ctx.events.push(
      movementEvent(
        {
          from: src.id,
          to: destId,
          asset,
          amount,
          toMuxedId: muxedId(to),
          fromKey: ctx.sourceKey,
          toKey: muxedKey(to),
        },
        ctx.networkId,
      ),
    );
  return code;
}

export function payment(o: Overlay, src: Account, op: PaymentOp, ctx: OpContext): OperationResultW {
  return opInner(Op.payment, move(o, src, op.destination, assetName(op.asset as AssetW)!, op.amount, ctx));
}

/** Whether a path payment stays in one asset (no offer to cross). */
const oneAsset = (send: AssetW, dest: AssetW, path: unknown[]) =>
  path.length === 0 && assetName(send) === assetName(dest);

/** A path payment's success: no offers crossed, what the destination received. */
const pathSuccess = (type: number, to: MuxedAccountW, asset: unknown, amount: bigint) =>
  opInner(type, 0, {
    success: { offers: [], last: { destination: publicKeyW(muxedToAddress(to)), asset, amount } },
  });

export function pathPaymentStrictReceive(
  o: Overlay,
  src: Account,
  op: StrictReceiveOp,
  ctx: OpContext,
): OperationResultW {
  const T = Op.pathPaymentStrictReceive;
  if (!o.account(muxedToAddress(op.destination))) return opInner(T, P.noDestination);
  if (!oneAsset(op.sendAsset as AssetW, op.destAsset as AssetW, op.path)) return opInner(T, P.tooFewOffers);
  if (op.destAmount > op.sendMax) return opInner(T, P.overSendMaxOrUnderDestMin);
  const code = move(o, src, op.destination, assetName(op.destAsset as AssetW)!, op.destAmount, ctx);
  return code ? opInner(T, code) : pathSuccess(T, op.destination, op.destAsset, op.destAmount);
}

export function pathPaymentStrictSend(o: Overlay, src: Account, op: StrictSendOp, ctx: OpContext): OperationResultW {
  const T = Op.pathPaymentStrictSend;
  if (!o.account(muxedToAddress(op.destination))) return opInner(T, P.noDestination);
  if (!oneAsset(op.sendAsset as AssetW, op.destAsset as AssetW, op.path)) return opInner(T, P.tooFewOffers);
  if (op.sendAmount < op.destMin) return opInner(T, P.overSendMaxOrUnderDestMin);
  const code = move(o, src, op.destination, assetName(op.sendAsset as AssetW)!, op.sendAmount, ctx);
  return code ? opInner(T, code) : pathSuccess(T, op.destination, op.destAsset, op.sendAmount);
}

/** Stateless checks of payments and path payments (amounts, asset codes); null when they pass. */
export function checkPaymentValid(op: OperationW): OperationResultW | null {
  const b = op.body;
  const bad = (assets: AssetW[], amounts: bigint[]) =>
    amounts.some((a) => a <= 0n) || assets.some((a) => a.type === 3 || !validCode(a));
  if (b.type === Op.payment)
    return bad([b.paymentOp.asset as AssetW], [b.paymentOp.amount]) ? opInner(b.type, P.malformed) : null;
  if (b.type === Op.pathPaymentStrictReceive) {
    const p = b.pathPaymentStrictReceiveOp;
    const assets = [p.sendAsset, p.destAsset, ...p.path] as AssetW[];
    return bad(assets, [p.sendMax, p.destAmount]) ? opInner(b.type, P.malformed) : null;
  }
  if (b.type === Op.pathPaymentStrictSend) {
    const p = b.pathPaymentStrictSendOp;
    const assets = [p.sendAsset, p.destAsset, ...p.path] as AssetW[];
    return bad(assets, [p.sendAmount, p.destMin]) ? opInner(b.type, P.malformed) : null;
  }
  return null;
}
