/**
 * Reserve sponsorship (CAP-33): within a transaction, `beginSponsoringFutureReserves` makes its source
 * pay the reserves of the entries another account creates until that account's
 * `endSponsoringFutureReserves`; `revokeSponsorship` moves or ends an entry's sponsorship. Each
 * sponsored reserve counts once in the sponsor's `numSponsoring` and once in the owner's
 * `numSponsored`, so that the minimum balance of each is what it pays for.
 */
import { Op, rawToAddress, xdrText, type OperationW, type OperationResultW } from "../stellar/xdr.ts";
import { assetName, type AssetW } from "./assets.ts";
import { minBalance, type Account, type Overlay } from "./state.ts";
import { opInner } from "./results.ts";

/** What the sponsorship operations need of the transaction being applied. */
export interface SponsorContext {
  baseReserve: number;
  /** This transaction's open sponsorships: sponsored account -> its sponsor. */
  sponsorships: Map<string, string>;
}

/**
 * Takes the reserve of `count` new entries of `owner` (its subentry count not yet raised): the
 * sponsor's when this transaction sponsors the owner, else the owner's. The sponsor (null: the
 * owner pays), or false when the payer cannot afford it (the operation's LOW_RESERVE).
 */
export function takeReserve(o: Overlay, owner: Account, count: number, ctx: SponsorContext): string | null | false {
  const sponsorId = ctx.sponsorships.get(owner.id);
  if (!sponsorId) return owner.balance < minBalance(owner, ctx.baseReserve, count) ? false : null;
  const sponsor = o.loadAccount(sponsorId);
  if (!sponsor || sponsor.balance < minBalance(sponsor, ctx.baseReserve, count)) return false;
  sponsor.numSponsoring += count;
  owner.numSponsored += count;
  return sponsorId;
}

/** Gives back the reserve of `count` entries of `owner` that `sponsorId` paid (nothing when null). */
export function releaseReserve(o: Overlay, owner: Account, sponsorId: string | null, count: number): void {
  if (!sponsorId) return;
  const sponsor = o.loadAccount(sponsorId);
  if (sponsor) sponsor.numSponsoring -= count;
  owner.numSponsored -= count;
}

const Begin = { malformed: -1, alreadySponsored: -2, recursive: -3 } as const;
const Revoke = { doesNotExist: -1, notSponsor: -2, lowReserve: -3, malformed: -5 } as const;

export function beginSponsoring(source: string, sponsoredId: string, ctx: SponsorContext): OperationResultW {
  const T = Op.beginSponsoringFutureReserves;
  if (sponsoredId === source) return opInner(T, Begin.malformed);
  if (ctx.sponsorships.has(sponsoredId)) return opInner(T, Begin.alreadySponsored);
  // a sponsored account cannot sponsor, nor a sponsor be sponsored
  if (ctx.sponsorships.has(source) || [...ctx.sponsorships.values()].includes(sponsoredId))
    return opInner(T, Begin.recursive);
  ctx.sponsorships.set(sponsoredId, source);
  return opInner(T, 0);
}

export function endSponsoring(source: string, ctx: SponsorContext): OperationResultW {
  const T = Op.endSponsoringFutureReserves;
  if (!ctx.sponsorships.delete(source)) return opInner(T, -1); // NOT_SPONSORED
  return opInner(T, 0);
}

/** An entry whose sponsorship can be revoked: its owner, its reserve count and where its sponsor is kept. */
interface Sponsorable {
  owner: Account;
  count: number;
  sponsor: string | null;
  setSponsor(s: string | null): void;
}

function sponsorable(o: Overlay, op: Extract<OperationW["body"], { type: 18 }>["revokeSponsorshipOp"]) {
  if (op.type === 1) {
    const owner = o.loadAccount(rawToAddress(op.signer.accountId.ed25519));
    if (!owner || op.signer.signerKey.type !== 0) return null;
    const key = rawToAddress(op.signer.signerKey.ed25519);
    const s = owner.signers.find((x) => x.key === key);
    return s
      ? { owner, count: 1, sponsor: s.sponsor ?? null, setSponsor: (v: string | null) => void (s.sponsor = v) }
      : null;
  }
  const k = op.ledgerKey;
  if (k.type === 0) {
    const owner = o.loadAccount(rawToAddress(k.account.accountId.ed25519));
    return owner
      ? { owner, count: 2, sponsor: owner.sponsor, setSponsor: (v: string | null) => void (owner.sponsor = v) }
      : null;
  }
  if (k.type === 1) {
    const owner = o.loadAccount(rawToAddress(k.trustLine.accountId.ed25519));
    const name = assetName(k.trustLine.asset as AssetW);
    const line = name && owner?.trustlines.get(name);
    return owner && line
      ? { owner, count: 1, sponsor: line.sponsor, setSponsor: (v: string | null) => void (line.sponsor = v) }
      : null;
  }
  if (k.type === 3) {
    const owner = o.loadAccount(rawToAddress(k.data.accountId.ed25519));
    const name = xdrText(k.data.dataName);
    if (!owner?.data.has(name)) return null;
    const setSponsor = (v: string | null) =>
      void (v ? owner.dataSponsors.set(name, v) : owner.dataSponsors.delete(name));
    return { owner, count: 1, sponsor: owner.dataSponsors.get(name) ?? null, setSponsor };
  }
  return null; // offers, claimable balances and pools are not modelled: none exists
}

/**
 * revokeSponsorship: by the entry's sponsor (or its owner when it has none). When someone sponsors
 * the source in this transaction the sponsorship moves to them; otherwise it ends and the owner pays.
 */
export function revokeSponsorship(
  o: Overlay,
  source: string,
  op: Extract<OperationW["body"], { type: 18 }>["revokeSponsorshipOp"],
  ctx: SponsorContext,
): OperationResultW {
  const T = Op.revokeSponsorship;
  if (op.type === 0 && op.ledgerKey.type > 5) return opInner(T, Revoke.malformed);
  const e: Sponsorable | null = sponsorable(o, op);
  if (!e) return opInner(T, Revoke.doesNotExist);
  if ((e.sponsor ?? e.owner.id) !== source) return opInner(T, Revoke.notSponsor);
  const next = ctx.sponsorships.get(source) ?? null;
  if (next === e.sponsor || (!e.sponsor && !next)) return opInner(T, 0);
  if (next) {
    const payer = o.loadAccount(next);
    if (!payer || payer.balance < minBalance(payer, ctx.baseReserve, e.count)) return opInner(T, Revoke.lowReserve);
    payer.numSponsoring += e.count;
    e.owner.numSponsored += e.count;
  } else if (e.owner.balance < minBalance(e.owner, ctx.baseReserve, e.count)) return opInner(T, Revoke.lowReserve);
  releaseReserve(o, e.owner, e.sponsor, e.count);
  e.setSponsor(next);
  return opInner(T, 0);
}
