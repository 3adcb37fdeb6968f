/** Fast ed25519 keys and signatures for benchmark set-up (node:crypto instead of the SDK's pure-JS signer). */
import { createPrivateKey, createPublicKey, randomBytes, sign, type KeyObject } from "node:crypto";
import { StrKey, xdr, type Transaction } from "@stellar/stellar-sdk";

const PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");

export interface FastKey {
  publicKey: string;
  raw: Uint8Array;
  key: KeyObject;
}

export function fastKey(): FastKey {
  const key = createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, randomBytes(32)]), format: "der", type: "pkcs8" });
  const raw = new Uint8Array(createPublicKey(key).export({ format: "der", type: "spki" }).subarray(12));
  return { publicKey: StrKey.encodeEd25519PublicKey(raw), raw, key };
}

/** Adds the key's signature over the transaction hash (addSignature would verify it with the pure-JS curve). */
export function fastSign(tx: Transaction, k: FastKey): void {
  tx.signatures.push(
    new xdr.DecoratedSignature({ hint: Buffer.from(k.raw.subarray(28)), signature: sign(null, tx.hash(), k.key) }),
  );
}
