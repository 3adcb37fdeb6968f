/**
 * A Stellar key pair whose private key stays in a PKCS#11 token: public-only to the SDK (no seed to
 * read: `secret()` throws), its signatures made by the token. Everything that holds a `Keypair`
 * (the funder, a channel, a fee-bump's fee source) signs with it unchanged (sign.ts, envelope.ts).
 */
import { Keypair } from "@stellar/stellar-sdk";
import type { Pkcs11Token, TokenKey } from "../kernel/pkcs11/token.ts";

export class TokenKeypair extends Keypair {
  constructor(
    readonly token: Pkcs11Token,
    readonly key: TokenKey,
  ) {
    super({ type: "ed25519", publicKey: key.publicKey });
  }

  override canSign(): boolean {
    return true;
  }

  /** The token's CKM_EDDSA signature of `data` (503 naming the token when it cannot sign). */
  override sign(data: Buffer): Buffer {
    return this.token.sign(this.key, Buffer.from(data));
  }
}

/** What signs for a key: the token for a TokenKeypair, else the key's own seed. */
export const signerKind = (kp: Keypair): "pkcs11" | "seed" => (kp instanceof TokenKeypair ? "pkcs11" : "seed");
