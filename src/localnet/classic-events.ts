/**
 * The events classic operations emit since protocol 23 (CAP-67), at the moved asset's Stellar Asset
 * Contract: `transfer` (from, to, asset), `mint` when the issuer sends (to, asset), `burn` when it
 * receives (from, asset); the data is the i128 amount, or a map with `to_muxed_id` when the
 * destination is a muxed account.
 *
 * Every classic payment has one, so they are made cheaply: the constant parts are built once, and
 * each event's XDR is written here by hand (one buffer, no schema walk) and kept beside it, so that
 * `eventXdr` does not encode it again. `test/localnet/classic-events.test.ts` holds the bytes to the
 * SDK's encoding of the same event.
 */
import { X, addressToRaw, toB64, type ContractEventW, type ScAddressW, type ScValW } from "../stellar/xdr.ts";
import { assetContractId } from "./assets.ts";
import { addr, i128, str, sym, u64 } from "./soroban/host.ts";

export interface Movement {
  from: string;
  to: string;
  /** "native" or "CODE:ISSUER". */
  asset: string;
  amount: bigint;
  /** The destination's muxed id, when it was given as an M address. */
  toMuxedId?: bigint | null;
  /** The parties' keys, raw, when the caller has them (else decoded from `from` and `to`). */
  fromKey?: Uint8Array;
  toKey?: Uint8Array;
}

type Kind = "transfer" | "mint" | "burn";
const SYMBOLS: Record<Kind, ScValW> = { transfer: sym("transfer"), mint: sym("mint"), burn: sym("burn") };
const AMOUNT = sym("amount");
const TO_MUXED_ID = sym("to_muxed_id");
/** A value kept in `map` under `key`, made by `make` the first time. */
function kept<T>(map: Map<string, T>, key: string, make: (k: string) => T): T {
  let v = map.get(key);
  if (v === undefined) map.set(key, (v = make(key)));
  return v;
}
const names = new Map<string, ScValW>();
const nameOf = (asset: string) => kept(names, asset, str);

/** Raw keys of the accounts seen lately (a strkey's decoding is the dearest part of an event). */
const raw = new Map<string, Uint8Array>();
function rawKey(g: string): Uint8Array {
  if (raw.size >= 4096 && !raw.has(g)) raw.clear();
  return kept(raw, g, addressToRaw);
}

/** Each event's XDR, written as it was made. */
const written = new WeakMap<ContractEventW, string>();

/** The event of a movement of value. */
export function movementEvent(m: Movement, networkId: Uint8Array): ContractEventW {
  const issuer = m.asset === "native" ? null : m.asset.slice(m.asset.indexOf(":") + 1);
  const kind: Kind = issuer === m.from ? "mint" : issuer === m.to ? "burn" : "transfer";
  const from = m.fromKey ?? rawKey(m.from);
  const to = m.toKey ?? rawKey(m.to);
  const keys = kind === "mint" ? [to] : kind === "burn" ? [from] : [from, to];
  const accounts = keys.map((ed25519) => addr({ type: 0, accountId: { type: 0, ed25519 } } as ScAddressW));
  const topics = [SYMBOLS[kind], ...accounts, nameOf(m.asset)];
  const muxed = m.toMuxedId ?? null;
  const data: ScValW =
    muxed === null
      ? i128(m.amount)
      : ({
          type: 17,
          map: [
            { key: AMOUNT, val: i128(m.amount) },
            { key: TO_MUXED_ID, val: u64(muxed) },
          ],
        } as ScValW);
  const contractId = assetContractId(m.asset, networkId);
  const event = { ext: { v: 0 }, contractId, type: 1, body: { v: 0, v0: { topics, data } } } as ContractEventW;
  written.set(event, encodeMovement(kind, contractId, keys, m.asset, m.amount, muxed));
  return event;
}

/** An event's XDR, base64: a movement's as written, any other encoded. */
export const eventXdr = (e: ContractEventW): string => written.get(e) ?? toB64(X.contractEvent.encode(e));

const utf8 = new TextEncoder();
const padded = (n: number) => (n + 3) & ~3;
const texts = new Map<string, Uint8Array>();
/** A symbol's or an asset name's UTF-8 bytes (few distinct ones: kept). */
const textOf = (t: string) => kept(texts, t, (k) => utf8.encode(k));
/** Where each event is written before its base64 is read (one at a time: apply is synchronous). */
const scratch = Buffer.alloc(512);

/** The XDR of a movement's ContractEvent, byte by byte, as base64. */
function encodeMovement(
  kind: Kind,
  contractId: Uint8Array,
  keys: Uint8Array[],
  asset: string,
  amount: bigint,
  muxed: bigint | null,
): string {
  const out = scratch;
  let at = 0;
  const int = (v: number) => (at = out.writeInt32BE(v, at));
  const bytes = (b: Uint8Array) => {
    out.set(b, at);
    at += b.length;
  };
  const string = (type: number, s: Uint8Array) => {
    int(type);
    int(s.length);
    bytes(s);
    const end = padded(at);
    out.fill(0, at, end);
    at = end;
  };
  const i128 = (v: bigint) => {
    int(10);
    at = out.writeBigInt64BE(BigInt.asIntN(64, v >> 64n), at);
    at = out.writeBigUInt64BE(v & 0xffffffffffffffffn, at);
  };
  int(0); // ext
  int(1); // contractId present
  bytes(contractId);
  int(1); // CONTRACT
  int(0); // body v0
  int(2 + keys.length); // topics
  string(15, textOf(kind));
  for (const key of keys) {
    int(18); // address
    int(0); // account
    int(0); // ed25519
    bytes(key);
  }
  string(14, textOf(asset));
  if (muxed === null) i128(amount);
  else {
    int(17); // map
    int(1); // present
    int(2);
    string(15, textOf("amount"));
    i128(amount);
    string(15, textOf("to_muxed_id"));
    int(5);
    at = out.writeBigUInt64BE(muxed, at);
  }
  return out.toString("base64", 0, at);
}
