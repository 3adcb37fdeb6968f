/** Fee math and the fee-bump envelope the relay signs. All amounts are bigint stroops. */
import { TransactionBuilder, type FeeBumpTransaction, type Keypair } from "@stellar/stellar-sdk";
import type { DecodedTx } from "./decode.ts";

export const BASE_FEE = 100n;

/** The inner transaction's own inclusion rate per operation, rounded up (a fee-bump must bid at least this). */
export function innerRate(d: DecodedTx): bigint {
  const inclusion = BigInt(d.inner.fee) - d.resourceFee;
  const ops = BigInt(d.operations);
  return inclusion <= 0n ? 0n : (inclusion + ops - 1n) / ops;
}

/** The full fee of a fee-bump bidding `rate` per operation: rate x (ops + 1) + resource fee. */
export const feeBumpFee = (d: DecodedTx, rate: bigint): bigint => rate * BigInt(d.operations + 1) + d.resourceFee;

/** Wraps the inner transaction in a fee-bump paid and signed by `sponsor`. */
export function buildFeeBump(d: DecodedTx, sponsor: Keypair, rate: bigint, passphrase: string): FeeBumpTransaction {
  const fb = TransactionBuilder.buildFeeBumpTransaction(sponsor, rate.toString(), d.inner, passphrase);
  fb.sign(sponsor);
  return fb;
}
