/** Fee math and the fee-bump envelope the relay signs. All amounts are bigint stroops. */
import type { Keypair } from "@stellar/stellar-sdk";
import type { DecodedTx } from "./decode.ts";
import { feeBumpBytes, type Signed } from "../../stellar/envelope.ts";
import { BASE_FEE } from "../../stellar/protocol.ts";

/** The inner transaction's own inclusion rate per operation, rounded up (a fee-bump must bid at least this). */
export function innerRate(d: DecodedTx): bigint {
  const inclusion = d.innerFee - d.resourceFee;
  const ops = BigInt(d.operations);
  return inclusion <= 0n ? 0n : (inclusion + ops - 1n) / ops;
}

/**
 * Wraps the inner transaction in a fee-bump paid and signed by `sponsor`, bidding `rate` per
 * operation (the inner ones and the fee-bump's own) plus the inner Soroban resource fee.
 */
export function buildFeeBump(d: DecodedTx, sponsor: Keypair, rate: bigint, passphrase: string): Signed {
  if (rate < BASE_FEE || rate < innerRate(d)) throw new Error(`a fee-bump rate of ${rate} is below the inner one's`);
  return feeBumpBytes(d.inner, sponsor, rate * BigInt(d.operations + 1) + d.resourceFee, passphrase);
}
