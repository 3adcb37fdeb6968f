/**
 * Where channel accounts' keys live. `sealed` (the default): made by the relay, the secret sealed in
 * the database with CHANNEL_ENCRYPTION_KEY (secret-box.ts). `pkcs11` (CHANNEL_KEYS=pkcs11): generated
 * in the token of CHANNEL_SIGNER, never extractable; the row keeps `pkcs11:<id>` (the objects' CKA_ID,
 * hex) and no secret. Rows of either kind are opened whatever new keys are made as, so that channels
 * made before a switch keep working until they are retired.
 */
import { randomBytes } from "node:crypto";
import { Keypair } from "@stellar/stellar-sdk";
import type { SecretBox } from "../../kernel/secret-box.ts";
import type { Pkcs11Token } from "../../kernel/pkcs11/token.ts";
import { TokenKeypair } from "../../stellar/token-keypair.ts";

const TOKEN_REF = "pkcs11:";

export interface ChannelKeys {
  /** How new keys are made: `sealed` or `pkcs11`. */
  readonly kind: "sealed" | "pkcs11";
  /** The token's label, when there is one. */
  readonly tokenLabel: string | null;
  /** `n` new key pairs of a network's channels, each with what its row keeps. */
  make(network: string, n: number): { keypair: Keypair; stored: string }[];
  /** A row's key pair; throws (naming the channel, never a secret) when it cannot be opened. */
  open(network: string, row: { publicKey: string; secret: string }): Keypair;
  /** How a row's key is kept: `sealed` or `pkcs11`. */
  kindOf(row: { secret: string }): "sealed" | "pkcs11";
}

/** New keys as `kind` (pkcs11: in `token`); rows of both kinds opened (a token's with `token`). */
export function channelKeys(box: SecretBox, token: Pkcs11Token | null, kind: "sealed" | "pkcs11"): ChannelKeys {
  if (kind === "pkcs11" && !token) throw new Error("CHANNEL_KEYS=pkcs11 needs CHANNEL_SIGNER (the token's URI)");
  return {
    kind,
    tokenLabel: token?.label ?? null,
    make(network, n) {
      return Array.from({ length: n }, () => {
        if (kind === "sealed" || !token) {
          const keypair = Keypair.random();
          return { keypair, stored: box.seal(keypair.secret(), `${network}:${keypair.publicKey()}`) };
        }
        const id = randomBytes(16);
        const key = token.generate(`${network}-channel-${id.toString("hex").slice(0, 12)}`, id);
        return { keypair: new TokenKeypair(token, key), stored: `${TOKEN_REF}${id.toString("hex")}` };
      });
    },
    open(network, row) {
      if (!row.secret.startsWith(TOKEN_REF)) {
        try {
          return Keypair.fromSecret(box.open(row.secret, `${network}:${row.publicKey}`));
        } catch {
          throw new Error(
            `the ${network} channel ${row.publicKey} cannot be decrypted: ` +
              "CHANNEL_ENCRYPTION_KEY is not the key it was sealed with",
          );
        }
      }
      const id = Buffer.from(row.secret.slice(TOKEN_REF.length), "hex");
      if (!token)
        throw new Error(`the ${network} channel ${row.publicKey}'s key is in a PKCS#11 token: set CHANNEL_SIGNER`);
      const key = token.keyById(id);
      if (!key?.publicKey.equals(Keypair.fromPublicKey(row.publicKey).rawPublicKey()))
        throw new Error(
          `the ${network} channel ${row.publicKey}'s key (id ${id.toString("hex")}) is not in ${token.description}`,
        );
      return new TokenKeypair(token, key);
    },
    kindOf: (row) => (row.secret.startsWith(TOKEN_REF) ? "pkcs11" : "sealed"),
  };
}
