/**
 * The load generator's user accounts on one network: keys (node:crypto ed25519), the sequence
 * number each account has on the network, and whether that number is known. An account whose last
 * request did not answer 200 is "dirty" (its transaction may or may not have used the number) and
 * is not used again until `refresh` has read it back from the network.
 *
 * Funding: one friendbot-funded funder per 100 users, each sending one transaction of 100
 * createAccount operations, all at once (the localnet takes big transaction sets).
 */
import { Account, Keypair, Operation, type rpc, StrKey, TransactionBuilder, xdr } from "@stellar/stellar-sdk";
import { type FastKey, fastKey } from "../keys.ts";

const PER_TX = 100;
/** The most account keys one getLedgerEntries call may ask for. */
const KEYS_PER_CALL = 200;
const USER_XLM = "20";

export class Accounts {
  readonly keys: FastKey[] = [];
  /** The account's sequence number on the network (its next transaction uses seq + 1). */
  readonly seq: bigint[] = [];
  readonly dirty: boolean[] = [];

  constructor(
    private readonly server: rpc.Server,
    private readonly friendbot: string,
    private readonly passphrase: string,
  ) {}

  /** Indices of the accounts whose sequence number is known. */
  clean(): number[] {
    const out: number[] = [];
    for (let i = 0; i < this.keys.length; i++) if (!this.dirty[i]) out.push(i);
    return out;
  }

  /** A new account with 10,000 XLM from friendbot. */
  async friendbotFunded(): Promise<Keypair> {
    const kp = Keypair.random();
    const res = await fetch(`${this.friendbot}?addr=${kp.publicKey()}`);
    if (!res.ok) throw new Error(`friendbot answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
    return kp;
  }

  /** Creates `count` more users. */
  async fund(count: number): Promise<void> {
    const users = Array.from({ length: count }, fastKey);
    const batches: FastKey[][] = [];
    for (let i = 0; i < count; i += PER_TX) batches.push(users.slice(i, i + PER_TX));
    const funders = await Promise.all(batches.map(() => this.friendbotFunded()));
    await Promise.all(batches.map((batch, i) => this.createAll(funders[i]!, batch)));
  }

  private async createAll(funder: Keypair, batch: FastKey[]): Promise<void> {
    const acc = await this.server.getAccount(funder.publicKey());
    const b = new TransactionBuilder(new Account(funder.publicKey(), acc.sequenceNumber()), {
      fee: "100",
      networkPassphrase: this.passphrase,
    }).setTimeout(0);
    for (const u of batch)
      b.addOperation(Operation.createAccount({ destination: u.publicKey, startingBalance: USER_XLM }));
    const tx = b.build();
    tx.sign(funder);
    const sent = await this.server.sendTransaction(tx);
    if (sent.status !== "PENDING") throw new Error(`createAccount transaction: ${sent.status}`);
    const got = await this.server.pollTransaction(sent.hash);
    if (got.status !== "SUCCESS") throw new Error(`createAccount transaction: ${got.status}`);
    // a created account's sequence number is its ledger's number << 32
    for (const u of batch) {
      this.keys.push(u);
      this.seq.push(BigInt(got.ledger) << 32n);
      this.dirty.push(false);
    }
  }

  /** Reads back the sequence numbers of the dirty accounts; how many were read. */
  async refresh(): Promise<number> {
    const todo = this.keys.map((_, i) => i).filter((i) => this.dirty[i]);
    const byKey = new Map(todo.map((i) => [this.keys[i]!.publicKey, i]));
    for (let at = 0; at < todo.length; at += KEYS_PER_CALL * 4) {
      const calls = [];
      for (let j = at; j < Math.min(todo.length, at + KEYS_PER_CALL * 4); j += KEYS_PER_CALL) {
        const keys = todo
          .slice(j, j + KEYS_PER_CALL)
          .map((i) =>
            xdr.LedgerKey.account(
              new xdr.LedgerKeyAccount({ accountId: Keypair.fromPublicKey(this.keys[i]!.publicKey).xdrAccountId() }),
            ),
          );
        calls.push(this.server.getLedgerEntries(...keys));
      }
      for (const res of await Promise.all(calls))
        for (const e of res.entries) {
          if (e.val.type !== "account") continue;
          const a = e.val.account;
          const i = byKey.get(StrKey.encodeEd25519PublicKey(Buffer.from(a.accountId.ed25519.value)));
          if (i === undefined) continue;
          this.seq[i] = a.seqNum;
          this.dirty[i] = false;
        }
    }
    return todo.length;
  }
}
