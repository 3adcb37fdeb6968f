/**
 * API keys: `sr_test_` (testnet) or `sr_live_` (mainnet) followed by 43 base62 characters (256
 * random bits). Only the SHA-256 of a key is stored and looked up, so a lookup's timing depends on
 * the hash, never on how much of a stored key the presented one matches.
 */
import basex from "base-x";
import type { KeyEnvironment } from "../../../stellar/networks.ts";

const base62 = basex("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz");
const FORMAT = /^sr_(test|live)_[0-9A-Za-z]{32,128}$/;

export function generateKey(environment: KeyEnvironment): string {
  return `sr_${environment}_${base62.encode(crypto.getRandomValues(new Uint8Array(32)))}`;
}

export const hashKey = (key: string): string => new Bun.CryptoHasher("sha256").update(key).digest("hex");

/** The displayable start of a key: its environment prefix and 4 characters. */
export const keyPrefix = (key: string): string => key.slice(0, key.indexOf("_", 3) + 5);

/** The environment a well-formed key claims, or null for a malformed one. */
export function keyEnvironment(key: string): KeyEnvironment | null {
  const m = FORMAT.exec(key);
  return m ? (m[1] as KeyEnvironment) : null;
}
