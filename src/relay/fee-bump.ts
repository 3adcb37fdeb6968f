/** Fee math and the fee-bump envelope the relay signs. All amounts are bigint stroops. */
import { createPrivateKey, sign, type KeyObject } from "node:crypto";
import { TransactionBuilder, type FeeBumpTransaction, type Keypair } from "@stellar/stellar-sdk";
import type { DecodedTx } from "./decode.ts";

/** The inner transaction's own inclusion rate per operation, rounded up (a fee-bump must bid at least this). */
export function innerRate(d: DecodedTx): bigint {
  const inclusion = BigInt(d.inner.fee) - d.resourceFee;
  const ops = BigInt(d.operations);
  return inclusion <= 0n ? 0n : (inclusion + ops - 1n) / ops;
}

const PKCS8_ED25519_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");
const signingKeys = new WeakMap<Keypair, KeyObject>();

/** Signs with the platform's native ed25519 (the SDK's pure-JS signer costs about 1 ms a signature). */
function signNative(tx: FeeBumpTransaction, kp: Keypair): void {
  let key = signingKeys.get(kp);
  if (!key) {
    key = createPrivateKey({
      key: Buffer.concat([PKCS8_ED25519_PREFIX, kp.rawSecretKey()]),
      format: "der",
      type: "pkcs8",
    });
    signingKeys.set(kp, key);
  }
  tx.addSignature(kp.publicKey(), sign(null, tx.hash(), key).toString("base64"));
}

/** Wraps the inner transaction in a fee-bump paid and signed by `sponsor`. */
export function buildFeeBump(d: DecodedTx, sponsor: Keypair, rate: bigint, passphrase: string): FeeBumpTransaction {
  const fb = TransactionBuilder.buildFeeBumpTransaction(sponsor, rate.toString(), d.inner, passphrase);
  signNative(fb, sponsor);
  return fb;
}
