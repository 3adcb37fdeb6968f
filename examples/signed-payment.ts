/**
 * Prints a signed transaction (base64 XDR) from a new account funded by the relay's embedded
 * friendbot: it creates a friend's account and pays it 1 XLM.
 * Usage: bun examples/signed-payment.ts   (RELAY_URL, default http://localhost:3000; NETWORK, default testnet)
 */
import { Asset, Keypair, Operation, TransactionBuilder, rpc } from "@stellar/stellar-sdk";

export async function signedPayment(relay: string, network = "testnet"): Promise<string> {
  const server = new rpc.Server(`${relay}/localnet/${network}/rpc`, { allowHttp: true });
  const { passphrase } = await server.getNetwork();
  const user = Keypair.random();
  const friend = Keypair.random();
  const funded = await fetch(`${relay}/localnet/${network}/friendbot?addr=${user.publicKey()}`);
  if (!funded.ok) throw new Error(`friendbot: ${funded.status}`);
  const tx = new TransactionBuilder(await server.getAccount(user.publicKey()), {
    fee: "100",
    networkPassphrase: passphrase,
  })
    .addOperation(Operation.createAccount({ destination: friend.publicKey(), startingBalance: "5" }))
    .addOperation(Operation.payment({ destination: friend.publicKey(), asset: Asset.native(), amount: "1" }))
    .setTimeout(60)
    .build();
  tx.sign(user);
  return tx.toEnvelope().toXdr("base64");
}

if (import.meta.main)
  console.log(await signedPayment(process.env.RELAY_URL ?? "http://localhost:3000", process.env.NETWORK));
