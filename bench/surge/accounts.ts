/**
 * The benchmark's user accounts on the surge network: created in createAccount transactions that
 * fit the small ledger, each with its sequence number; payments signed with node:crypto (one
 * account, one pending transaction, as stellar-core's queue allows).
 */
import { Account, Asset, Keypair, Operation, TransactionBuilder, rpc } from "@stellar/stellar-sdk";
import { type FastKey, fastKey, fastSign } from "../keys.ts";

export interface User {
  key: FastKey;
  /** The account's sequence number on the network (its next transaction uses seq + 1). */
  seq: bigint;
  busy: boolean;
}

/** Funds `count` users: friendbot funders, each sending createAccount transactions of `perTx` operations. */
export async function fundUsers(
  rpcUrl: string,
  friendbot: string,
  passphrase: string,
  count: number,
  perTx: number,
): Promise<User[]> {
  const server = new rpc.Server(rpcUrl, { allowHttp: true });
  const funders = 2; // two transactions of a ledger's size fit the queue (twice a ledger)
  const keys: Keypair[] = [];
  for (let i = 0; i < funders; i++) {
    const kp = Keypair.random();
    const res = await fetch(`${friendbot}?addr=${kp.publicKey()}`);
    if (!res.ok) throw new Error(`friendbot answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
    keys.push(kp);
  }
  const users: User[] = [];
  const todo = Array.from({ length: count }, fastKey);
  await Promise.all(
    keys.map(async (funder, f) => {
      const mine = todo.filter((_, i) => i % funders === f);
      for (let at = 0; at < mine.length; at += perTx) {
        const batch = mine.slice(at, at + perTx);
        const acc = await server.getAccount(funder.publicKey());
        const b = new TransactionBuilder(new Account(funder.publicKey(), acc.sequenceNumber()), {
          fee: "100",
          networkPassphrase: passphrase,
        }).setTimeout(0);
        for (const u of batch)
          b.addOperation(Operation.createAccount({ destination: u.publicKey, startingBalance: "50" }));
        const tx = b.build();
        tx.sign(funder);
        const sent = await server.sendTransaction(tx);
        if (sent.status !== "PENDING") {
          // the queue is full (the other funder's, a channel pool's transactions): again after a ledger
          await Bun.sleep(1000);
          at -= perTx;
          continue;
        }
        const got = await landed(server, sent.hash);
        if (!got) {
          at -= perTx; // dropped from the queue: again
          continue;
        }
        for (const u of batch) users.push({ key: u, seq: BigInt(got.ledger) << 32n, busy: false });
      }
    }),
  );
  return users;
}

/** The ledger of a successful transaction, or null when it is not in one within 15 s. */
async function landed(server: rpc.Server, hash: string): Promise<{ ledger: number } | null> {
  for (let i = 0; i < 60; i++) {
    const got = await server.getTransaction(hash);
    if (got.status === "SUCCESS") return { ledger: got.ledger };
    if (got.status === "FAILED") throw new Error(`createAccount transaction failed: ${hash}`);
    await Bun.sleep(250);
  }
  return null;
}

/** Re-reads a user's sequence number from the network. */
export async function refreshSeq(server: rpc.Server, u: User): Promise<void> {
  u.seq = BigInt((await server.getAccount(u.key.publicKey)).sequenceNumber());
}

/** A payment of a random number of stroops (every envelope has its own hash) bidding `fee` in total. */
export function payment(u: User, sink: string, fee: bigint, passphrase: string): { xdr: string; hash: string } {
  const tx = new TransactionBuilder(new Account(u.key.publicKey, u.seq.toString()), {
    fee: fee.toString(),
    networkPassphrase: passphrase,
  })
    .addOperation(
      Operation.payment({
        destination: sink,
        asset: Asset.native(),
        amount: ((1 + Math.floor(Math.random() * 9_000)) / 1e7).toFixed(7),
      }),
    )
    .setTimeout(0)
    .build();
  fastSign(tx, u.key);
  return { xdr: tx.toEnvelope().toXDR("base64"), hash: Buffer.from(tx.hash()).toString("hex") };
}
