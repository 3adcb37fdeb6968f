/**
 * Signature weights as stellar-core's SignatureChecker counts them: every signer of an account
 * (the master key at its weight, then ed25519 signers) whose key matches a signature's hint and
 * verifies adds its weight; the check passes once the weight reaches the threshold. Signatures that
 * no check used make the transaction txBAD_AUTH_EXTRA.
 */
import { createPublicKey, verify, type KeyObject } from "node:crypto";
import { addressToRaw } from "../stellar/xdr.ts";
import type { Account } from "./state.ts";
import type { DecoratedSignatureW } from "../stellar/xdr.ts";

/** Signatures already verified (stellar-core keeps a verification cache too): apply re-checks them. */
const verifiedCache = new Set<string>();
const VERIFIED_CACHE_MAX = 500_000;

const SPKI_ED25519_PREFIX = Buffer.from("302a300506032b6570032100", "hex");
const keyCache = new Map<string, KeyObject>();

function keyObject(raw: Uint8Array, id: string): KeyObject {
  let k = keyCache.get(id);
  if (!k) {
    if (keyCache.size > 200_000) keyCache.clear();
    k = createPublicKey({ key: Buffer.concat([SPKI_ED25519_PREFIX, raw]), format: "der", type: "spki" });
    keyCache.set(id, k);
  }
  return k;
}

/** Verifies an ed25519 signature with the platform's native implementation. */
export function verifyEd25519(publicKey: string, message: Uint8Array, signature: Uint8Array): boolean {
  if (signature.length !== 64) return false;
  try {
    return verify(null, message, keyObject(addressToRaw(publicKey), publicKey), signature);
  } catch {
    return false;
  }
}

export class SignatureChecker {
  private readonly used: boolean[];
  private readonly verified = new Map<string, boolean>();

  private readonly payloadId: string;

  constructor(
    private readonly payload: Uint8Array,
    private readonly signatures: DecoratedSignatureW[],
  ) {
    this.payloadId = Buffer.from(payload).toString("base64");
    this.used = signatures.map(() => false);
  }

  private matches(i: number, key: string, raw: Uint8Array): boolean {
    const s = this.signatures[i];
    const h = s.hint;
    if (h[0] !== raw[28] || h[1] !== raw[29] || h[2] !== raw[30] || h[3] !== raw[31]) return false;
    const cacheKey = `${i}:${key}`;
    let ok = this.verified.get(cacheKey);
    if (ok === undefined) {
      const global = `${this.payloadId}:${key}:${Buffer.from(s.signature).toString("base64")}`;
      ok = verifiedCache.has(global) || verifyEd25519(key, this.payload, s.signature);
      if (ok) {
        if (verifiedCache.size >= VERIFIED_CACHE_MAX) verifiedCache.clear();
        verifiedCache.add(global);
      }
      this.verified.set(cacheKey, ok);
    }
    return ok;
  }

  /** True when signatures of `account`'s signers reach `needed` weight (at least one must match). */
  check(account: Account, needed: number): boolean {
    const signers: { key: string; weight: number }[] = [];
    if (account.thresholds[0] > 0) signers.push({ key: account.id, weight: account.thresholds[0] });
    for (const s of account.signers) signers.push(s);
    return this.checkSigners(signers, needed);
  }

  /** Same check for an explicit signer list (extra signers, or a missing account's master key). */
  checkSigners(signers: { key: string; weight: number }[], needed: number): boolean {
    let total = 0;
    for (const signer of signers) {
      const raw = addressToRaw(signer.key);
      for (let i = 0; i < this.signatures.length; i++) {
        if (!this.matches(i, signer.key, raw)) continue;
        this.used[i] = true;
        total += Math.min(signer.weight, 255);
        if (total >= needed) return true;
        break;
      }
    }
    return false;
  }

  allUsed(): boolean {
    return this.used.every(Boolean);
  }
}
