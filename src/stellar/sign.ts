/**
 * Signing with the platform's native ed25519. The SDK's `sign()` and `addSignature()` run a pure-JS
 * curve (about 1 ms a signature, and addSignature verifies what it adds); a native signature over the
 * same hash costs about 20 us. The key object is made once per keypair (a PKCS#11 token's key signs
 * in its token: envelope.ts's signingKey).
 */
import { xdr, type FeeBumpTransaction, type Keypair, type Transaction } from "@stellar/stellar-sdk";
import { txHash } from "./xdr.ts";
import { signingKey } from "./envelope.ts";

/** Adds `kp`'s signature over the transaction's hash (as the SDK's `tx.sign(kp)` does). */
export function signTx(tx: Transaction | FeeBumpTransaction, kp: Keypair): void {
  const k = signingKey(kp);
  tx.signatures.push(new xdr.DecoratedSignature({ hint: k.hint, signature: k.sign(txHash(tx)) }));
}
