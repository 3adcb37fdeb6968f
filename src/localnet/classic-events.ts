/**
 * The events classic operations emit since protocol 23 (CAP-67), at the moved asset's Stellar Asset
 * Contract: `transfer` (from, to, asset), `mint` when the issuer sends (to, asset), `burn` when it
 * receives (from, asset); the data is the i128 amount, or a map with `to_muxed_id` when the
 * destination is a muxed account.
 */
import type { ContractEventW, ScValW } from "../stellar/xdr.ts";
import { assetContractId } from "./assets.ts";
import { addr, i128, str, sym, u64 } from "./soroban/host.ts";
import { scAddress } from "./soroban/footprint.ts";

const account = (g: string) => addr(scAddress(g));

export interface Movement {
  from: string;
  to: string;
  /** "native" or "CODE:ISSUER". */
  asset: string;
  amount: bigint;
  /** The destination's muxed id, when it was given as an M address. */
  toMuxedId?: bigint | null;
}

/** The event of a movement of value. */
export function movementEvent(m: Movement, networkId: Uint8Array): ContractEventW {
  const issuer = m.asset === "native" ? null : m.asset.split(":")[1];
  const name = str(m.asset);
  const topics =
    issuer === m.from
      ? [sym("mint"), account(m.to), name]
      : issuer === m.to
        ? [sym("burn"), account(m.from), name]
        : [sym("transfer"), account(m.from), account(m.to), name];
  const data: ScValW =
    m.toMuxedId != null
      ? ({
          type: 17,
          map: [
            { key: sym("amount"), val: i128(m.amount) },
            { key: sym("to_muxed_id"), val: u64(m.toMuxedId) },
          ],
        } as ScValW)
      : i128(m.amount);
  return {
    ext: { v: 0 },
    contractId: assetContractId(m.asset, networkId),
    type: 1,
    body: { v: 0, v0: { topics, data } },
  } as ContractEventW;
}
