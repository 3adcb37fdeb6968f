/** The native asset's Stellar Asset Contract on a test relay's testnet: a transfer as a func+auth client sends it. */
import {
  Address,
  Asset,
  authorizeEntry,
  type Keypair,
  nativeToScVal,
  Operation,
  rpc,
  TransactionBuilder,
  type xdr,
} from "@stellar/stellar-sdk";
import type { TestRelay } from "./relay.ts";

export const sacId = (r: TestRelay) => Asset.native().contractId(r.passphrase);

/**
 * `from` moves `amount` stroops to `to` through the SAC: simulated with `to` as the source (so that
 * `from` gets address credentials), `from`'s entry signed; the operation as base64 XDR.
 */
export async function signedTransfer(r: TestRelay, from: Keypair, to: Keypair, amount = 5n): Promise<string> {
  const addr = (pk: string) => nativeToScVal(Address.fromString(pk));
  const transfer = (auth: xdr.SorobanAuthorizationEntry[] = []) =>
    Operation.invokeContractFunction({
      contract: sacId(r),
      function: "transfer",
      args: [addr(from.publicKey()), addr(to.publicKey()), nativeToScVal(amount, { type: "i128" })],
      auth,
    });
  const sim = await r.rpc.simulateTransaction(
    new TransactionBuilder(await r.rpc.getAccount(to.publicKey()), { fee: "100", networkPassphrase: r.passphrase })
      .addOperation(transfer())
      .setTimeout(60)
      .build(),
  );
  if (!rpc.Api.isSimulationSuccess(sim)) throw new Error("simulation failed");
  const signed = await authorizeEntry(sim.result!.auth[0]!, from, sim.latestLedger + 100, r.passphrase);
  return transfer([signed]).toXDR("base64");
}
