/**
 * Friendbot: funds new accounts with 10,000 XLM from the root account. Requests are batched into
 * createAccount transactions of up to 100 operations, one in flight at a time (the root account
 * has one sequence number), submitted and applied like any other transaction.
 */
import { Account as SdkAccount, Operation, TransactionBuilder, StrKey } from "@stellar/stellar-sdk";
import type { Localnet } from "./ledger.ts";
import type { TxRecord } from "./history.ts";
import { resultCodes } from "../stellar/result-codes.ts";

export const FRIENDBOT_XLM = "10000";
const BATCH = 100;

export class FriendbotError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly extras?: Record<string, unknown>,
  ) {
    super(message);
  }
}

const alreadyFunded = () =>
  new FriendbotError(400, "account already funded to starting balance", {
    result_codes: { transaction: "tx_failed", operations: ["op_already_exists"] },
  });

export class Friendbot {
  private waiting = new Map<string, { resolve: (r: TxRecord) => void; reject: (e: Error) => void }[]>();
  private inFlight: string | null = null;
  private batch: string[] = [];

  constructor(private readonly net: Localnet) {
    net.onLedgerClosed(() => this.settle());
  }

  /** Funds `address`; resolves with the applied transaction once its ledger closes. */
  fund(address: string): Promise<TxRecord> {
    if (!StrKey.isValidEd25519PublicKey(address))
      return Promise.reject(new FriendbotError(400, "invalid address: addr must be a G... account id"));
    if (this.net.account(address)) return Promise.reject(alreadyFunded());
    return new Promise((resolve, reject) => {
      const list = this.waiting.get(address);
      if (list) list.push({ resolve, reject });
      else this.waiting.set(address, [{ resolve, reject }]);
      if (!this.inFlight) this.send();
    });
  }

  private send(): void {
    for (const a of [...this.waiting.keys()]) if (this.net.account(a)) this.fail([a], alreadyFunded());
    // a transaction never holds more operations than a ledger takes (a small test ledger included)
    const batch = [...this.waiting.keys()].slice(0, Math.min(BATCH, this.net.header.maxTxSetSize));
    if (batch.length === 0) return;
    const root = this.net.root;
    const acc = this.net.account(root.publicKey())!;
    const b = new TransactionBuilder(new SdkAccount(root.publicKey(), acc.seqNum.toString()), {
      fee: String(this.net.header.baseFee),
      networkPassphrase: this.net.passphrase,
    }).setTimeout(0);
    for (const destination of batch)
      b.addOperation(Operation.createAccount({ destination, startingBalance: FRIENDBOT_XLM }));
    const tx = b.build();
    tx.sign(root);
    const r = this.net.submitXdr(tx.toEnvelope().toXdr());
    if (r.status !== "PENDING") {
      this.fail(batch, new FriendbotError(500, `friendbot transaction was not accepted: ${r.status}`));
      return;
    }
    this.inFlight = r.hash;
    this.batch = batch;
  }
  private settle(): void {
    if (this.inFlight) {
      const rec = this.net.records.get(this.inFlight);
      if (!rec) {
        if (!this.net.queue.byAnyHash(this.inFlight)) {
          this.fail(this.batch, new FriendbotError(500, "friendbot transaction was dropped"));
          this.inFlight = null;
        } else return;
      } else {
        this.inFlight = null;
        for (const a of this.batch) {
          const list = this.waiting.get(a) ?? [];
          this.waiting.delete(a);
          for (const w of list)
            rec.successful
              ? w.resolve(rec)
              : w.reject(
                  new FriendbotError(400, "friendbot transaction failed", { result_codes: resultCodes(rec.result) }),
                );
        }
      }
    }
    if (this.waiting.size) this.send();
  }

  private fail(batch: string[], e: Error): void {
    for (const a of batch) {
      for (const w of this.waiting.get(a) ?? []) w.reject(e);
      this.waiting.delete(a);
    }
  }
}
