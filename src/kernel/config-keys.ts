/** A 32-byte key given as text (configuration or a key file): base64 or hex. */
export function parseKey(text: string, where: string): Buffer {
  const key = /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, "hex") : Buffer.from(text, "base64");
  if (key.length !== 32)
    throw new Error(
      `invalid configuration: ${where} must be a 32-byte key, written in base64 (44 characters) or hex (64 characters): ` +
        `make one with openssl rand -base64 32 (this one is ${key.length} bytes)`,
    );
  return key;
}
