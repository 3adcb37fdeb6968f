/**
 * Channel secret keys at rest: AES-256-GCM (node:crypto) with a 96-bit random nonce per seal and
 * associated data naming the channel, so a sealed secret cannot be moved to another row. The key is
 * CHANNEL_ENCRYPTION_KEY (32 bytes, base64 or hex) or, for the embedded default, a key generated
 * once into DATA_DIR (mode 0600).
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseKey } from "./config-keys.ts";

const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const KEY_FILE = "channel-encryption.key";

export class SecretBox {
  private constructor(private readonly key: Buffer) {}

  /** The configured key, or the one in `dataDir` (generated on first use). */
  static open(configured: string | undefined, dataDir: string): SecretBox {
    if (configured) return new SecretBox(parseKey(configured, "CHANNEL_ENCRYPTION_KEY"));
    const file = join(dataDir, KEY_FILE);
    if (!existsSync(file)) {
      mkdirSync(dataDir, { recursive: true });
      writeFileSync(file, `${randomBytes(32).toString("base64")}\n`, { mode: 0o600, flag: "wx" });
    }
    return new SecretBox(parseKey(readFileSync(file, "utf8").trim(), file));
  }

  seal(plaintext: string, associated: string): string {
    const nonce = randomBytes(NONCE_BYTES);
    const c = createCipheriv("aes-256-gcm", this.key, nonce).setAAD(Buffer.from(associated));
    const body = Buffer.concat([c.update(plaintext, "utf8"), c.final()]);
    return Buffer.concat([nonce, body, c.getAuthTag()]).toString("base64");
  }

  /** Throws when the key is not the one that sealed it, or the sealed text or its associated data changed. */
  open(sealed: string, associated: string): string {
    const raw = Buffer.from(sealed, "base64");
    const d = createDecipheriv("aes-256-gcm", this.key, raw.subarray(0, NONCE_BYTES)).setAAD(Buffer.from(associated));
    d.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
    return Buffer.concat([d.update(raw.subarray(NONCE_BYTES, raw.length - TAG_BYTES)), d.final()]).toString("utf8");
  }
}
