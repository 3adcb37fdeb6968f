/** Fee math and the fee-bump envelope the relay signs. All amounts are bigint stroops. */
import { TransactionBuilder, type FeeBumpTransaction, type Keypair } from "@stellar/stellar-sdk";
import type { DecodedTx } from "./decode.ts";
import { signTx } from "../stellar/sign.ts";

/** The inner transaction's own inclusion rate per operation, rounded up (a fee-bump must bid at least this). */
export function innerRate(d: DecodedTx): bigint {
  const inclusion = BigInt(d.inner.fee) - d.resourceFee;
  const ops = BigInt(d.operations);
  return inclusion <= 0n ? 0n : (inclusion + ops - 1n) / ops;
}

/** Wraps the inner transaction in a fee-bump paid and signed by `sponsor`. */
export function buildFeeBump(d: DecodedTx, sponsor: Keypair, rate: bigint, passphrase: string): FeeBumpTransaction {
  const fb = TransactionBuilder.buildFeeBumpTransaction(sponsor, rate.toString(), d.inner, passphrase);
  signTx(fb, sponsor);
  return fb;
}
