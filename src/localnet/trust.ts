/**
 * Trustlines as stellar-core keeps them (protocol 23): `changeTrust` creates, changes and removes
 * them, `allowTrust` and `setTrustLineFlags` let the issuer authorize them. A trustline is a subentry
 * of its account and needs a reserve (its sponsor's when one sponsors the account, CAP-33). Liquidity
 * pool shares are not modelled: refused as opNOT_SUPPORTED.
 */
import { Op, publicKeyW, rawToAddress, type OperationW, type OperationResultW } from "../stellar/xdr.ts";
import { assetName, issuerOf, validCode, type AssetW } from "./assets.ts";
import { TrustFlags, type Account, type Overlay } from "./state.ts";
import { opInner, opOuter, OpOuter } from "./results.ts";
import { releaseReserve, takeReserve, type SponsorContext } from "./sponsorship.ts";

/** AccountFlags of an issuer. */
const AUTH_REQUIRED = 1;
const AUTH_REVOCABLE = 2;
const AUTH_CLAWBACK_ENABLED = 8;
const AUTH_FLAGS = TrustFlags.authorized | TrustFlags.maintainLiabilities;

const Change = { malformed: -1, noIssuer: -2, invalidLimit: -3, lowReserve: -4 } as const;
const Allow = { malformed: -1, noTrustLine: -2, cantRevoke: -4 } as const;
const SetFlags = { malformed: -1, noTrustLine: -2, cantRevoke: -3, invalidState: -4 } as const;

type ChangeTrustOp = Extract<OperationW["body"], { type: 6 }>["changeTrustOp"];
type AllowTrustOp = Extract<OperationW["body"], { type: 7 }>["allowTrustOp"];
type SetFlagsOp = Extract<OperationW["body"], { type: 21 }>["setTrustLineFlagsOp"];

/** A credit asset that `source` may not hold a line of (malformed), or null. */
function badLine(line: AssetW, source: string): boolean {
  return line.type === 0 || !validCode(line) || issuerOf(line) === source;
}

/** Stateless checks (doCheckValid) of the trust operations; null when they pass. */
export function checkTrustValid(op: OperationW, source: string): OperationResultW | null {
  const b = op.body;
  if (b.type === Op.changeTrust) {
    const line = b.changeTrustOp.line as AssetW;
    if (line.type === 3) return null; // a pool share: refused at apply
    return b.changeTrustOp.limit < 0n || badLine(line, source) ? opInner(b.type, Change.malformed) : null;
  }
  if (b.type === Op.allowTrust) {
    const o = b.allowTrustOp;
    const asset = allowTrustAsset(o, source);
    const malformed = !asset || !validCode(asset) || o.authorize > 2 || rawToAddress(o.trustor.ed25519) === source;
    return malformed ? opInner(b.type, Allow.malformed) : null;
  }
  if (b.type === Op.setTrustLineFlags) {
    const o = b.setTrustLineFlagsOp;
    const asset = o.asset as AssetW;
    const known = TrustFlags.authorized | TrustFlags.maintainLiabilities | TrustFlags.clawbackEnabled;
    const malformed =
      asset.type === 0 ||
      !validCode(asset) ||
      issuerOf(asset) !== source ||
      rawToAddress(o.trustor.ed25519) === source ||
      (o.setFlags & o.clearFlags) !== 0 ||
      ((o.setFlags | o.clearFlags) & ~known) !== 0 ||
      (o.setFlags & TrustFlags.clawbackEnabled) !== 0 ||
      (o.setFlags & AUTH_FLAGS) === AUTH_FLAGS;
    return malformed ? opInner(b.type, SetFlags.malformed) : null;
  }
  return null;
}

export function changeTrust(o: Overlay, src: Account, op: ChangeTrustOp, ctx: SponsorContext): OperationResultW {
  const T = Op.changeTrust;
  const line = op.line as AssetW;
  if (line.type === 3) return opOuter(OpOuter.notSupported);
  const name = assetName(line)!;
  const existing = src.trustlines.get(name);
  if (existing) {
    if (op.limit === 0n) {
      if (existing.balance > 0n) return opInner(T, Change.invalidLimit);
      src.trustlines.delete(name);
      src.numSubEntries--;
      releaseReserve(o, src, existing.sponsor, 1);
      return opInner(T, 0);
    }
    if (op.limit < existing.balance) return opInner(T, Change.invalidLimit);
    existing.limit = op.limit;
    return opInner(T, 0);
  }
  if (op.limit === 0n) return opInner(T, Change.invalidLimit);
  const issuer = o.account(issuerOf(line)!);
  if (!issuer) return opInner(T, Change.noIssuer);
  const sponsor = takeReserve(o, src, 1, ctx);
  if (sponsor === false) return opInner(T, Change.lowReserve);
  src.numSubEntries++;
  const flags =
    ((issuer.flags & AUTH_REQUIRED) === 0 ? TrustFlags.authorized : 0) |
    ((issuer.flags & AUTH_CLAWBACK_ENABLED) !== 0 ? TrustFlags.clawbackEnabled : 0);
  src.trustlines.set(name, { asset: name, balance: 0n, limit: op.limit, flags, sponsor });
  return opInner(T, 0);
}

/** The asset an allowTrust names: its code, issued by the operation's source. */
function allowTrustAsset(op: AllowTrustOp, issuer: string): AssetW | null {
  const a = op.asset as { type: number; assetCode4?: Uint8Array; assetCode12?: Uint8Array };
  const issuerKey = publicKeyW(issuer);
  if (a.type === 1) return { type: 1, alphaNum4: { assetCode: a.assetCode4!, issuer: issuerKey } };
  if (a.type === 2) return { type: 2, alphaNum12: { assetCode: a.assetCode12!, issuer: issuerKey } };
  return null;
}

/** Whether going from `before` to `after` takes an authorization away (the issuer must be revocable). */
const revokes = (before: number, after: number) =>
  ((before & TrustFlags.authorized) !== 0 && (after & TrustFlags.authorized) === 0) ||
  ((before & AUTH_FLAGS) !== 0 && (after & AUTH_FLAGS) === 0);

export function allowTrust(o: Overlay, src: Account, op: AllowTrustOp): OperationResultW {
  const T = Op.allowTrust;
  const asset = allowTrustAsset(op, src.id)!;
  const trustor = o.loadAccount(rawToAddress(op.trustor.ed25519));
  const line = trustor?.trustlines.get(assetName(asset)!);
  if (!line) return opInner(T, Allow.noTrustLine);
  const after =
    (line.flags & ~AUTH_FLAGS) |
    (op.authorize === 1 ? TrustFlags.authorized : op.authorize === 2 ? TrustFlags.maintainLiabilities : 0);
  if ((src.flags & AUTH_REVOCABLE) === 0 && revokes(line.flags, after)) return opInner(T, Allow.cantRevoke);
  line.flags = after;
  return opInner(T, 0);
}

export function setTrustLineFlags(o: Overlay, src: Account, op: SetFlagsOp): OperationResultW {
  const T = Op.setTrustLineFlags;
  const trustor = o.loadAccount(rawToAddress(op.trustor.ed25519));
  const line = trustor?.trustlines.get(assetName(op.asset as AssetW)!);
  if (!line) return opInner(T, SetFlags.noTrustLine);
  const after = (line.flags & ~op.clearFlags) | op.setFlags;
  if ((src.flags & AUTH_REVOCABLE) === 0 && revokes(line.flags, after)) return opInner(T, SetFlags.cantRevoke);
  if ((after & AUTH_FLAGS) === AUTH_FLAGS) return opInner(T, SetFlags.invalidState);
  line.flags = after;
  return opInner(T, 0);
}
