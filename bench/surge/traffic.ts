/**
 * Traffic straight to the network: the competing load (ordinary accounts at a multiple of a
 * ledger's capacity, bids from `competingBid`) and the direct client (the SDK's default fee, 100
 * stroops per operation, sent once: what an app without the relay gets under the same load).
 */
import { rpc } from "@stellar/stellar-sdk";
import { type User, payment, refreshSeq } from "./accounts.ts";
import type { LedgerBook } from "./ledgers.ts";
import { rpcCall } from "./ledgers.ts";
import { competingBid } from "./settings.ts";
import { pace } from "./pacer.ts";

interface Sent {
  status: string;
  latestLedger: number;
  errorResultXdr?: string;
}

/** Ledgers after which a queued transaction that was not included is gone (dropped after 4). */
const GONE_AFTER = 6;

/** A user's transaction in flight: free again once included or gone. */
function track(book: LedgerBook, u: User, hash: string, sentLedger: number, done: (ledger: number | null) => void) {
  const off = book.onLedger((l) => {
    const inc = book.included.get(hash);
    if (inc) {
      off();
      u.seq += 1n;
      u.busy = false;
      done(inc.ledger);
    } else if (l.sequence > sentLedger + GONE_AFTER) {
      off();
      u.busy = false;
      done(null);
    }
  });
}

export class CompetingLoad {
  /** Transactions per second now (0: none). */
  rate = 0;
  sent = 0;
  accepted = 0;
  refused = 0;
  private pacer: { stop(): void } | null = null;
  private next = 0;
  private readonly server: rpc.Server;

  constructor(
    private readonly rpcUrl: string,
    private readonly book: LedgerBook,
    private readonly users: User[],
    private readonly sink: string,
    private readonly passphrase: string,
  ) {
    this.server = new rpc.Server(rpcUrl, { allowHttp: true });
  }

  start(): void {
    this.pacer = pace(
      () => this.rate,
      () => {
        const u = this.freeUser();
        if (u) void this.send(u);
        return u !== null;
      },
    );
  }

  stop(): void {
    this.pacer?.stop();
  }

  private freeUser(): User | null {
    for (let i = 0; i < this.users.length; i++) {
      const u = this.users[(this.next + i) % this.users.length]!;
      if (!u.busy) {
        this.next = (this.next + i + 1) % this.users.length;
        return u;
      }
    }
    return null;
  }

  private async send(u: User): Promise<void> {
    u.busy = true;
    this.sent++;
    const tx = payment(u, this.sink, competingBid(), this.passphrase);
    try {
      const r = await rpcCall<Sent>(this.rpcUrl, "sendTransaction", { transaction: tx.xdr });
      if (r.status === "PENDING" || r.status === "DUPLICATE") {
        this.accepted++;
        track(this.book, u, tx.hash, r.latestLedger, () => {});
        return;
      }
      this.refused++;
      if (r.status === "ERROR" && r.errorResultXdr && !isInsufficientFee(r.errorResultXdr))
        await refreshSeq(this.server, u).catch(() => {});
    } catch {
      this.refused++;
    }
    u.busy = false;
  }
}

/** Whether an error result is tx_insufficient_fee (the queue wanted a higher bid). */
function isInsufficientFee(resultXdr: string): boolean {
  // TransactionResult: feeCharged (int64), then the result code (int32): txINSUFFICIENT_FEE = -9
  const b = Buffer.from(resultXdr, "base64");
  return b.length >= 12 && b.readInt32BE(8) === -9;
}

/** One direct client's transaction: the ledger it was sent at, and the ledger it got into (null: never). */
export interface DirectResult {
  sentLedger: number;
  sentAt: number;
  ledger: number | null;
  refused: string | null;
}

/** Sends one payment at 100 stroops per operation from a free user, as an SDK client would, and follows it. */
export async function directSend(
  rpcUrl: string,
  book: LedgerBook,
  users: User[],
  sink: string,
  passphrase: string,
  latest: () => number = () => book.latest,
): Promise<DirectResult | null> {
  const u = users.find((x) => !x.busy);
  if (!u) return null;
  u.busy = true;
  const tx = payment(u, sink, 100n, passphrase);
  const sentLedger = latest();
  const sentAt = Date.now();
  try {
    const r = await rpcCall<Sent>(rpcUrl, "sendTransaction", { transaction: tx.xdr });
    if (r.status !== "PENDING" && r.status !== "DUPLICATE") {
      u.busy = false;
      const code = r.errorResultXdr ? Buffer.from(r.errorResultXdr, "base64").readInt32BE(8) : 0;
      return { sentLedger, sentAt, ledger: null, refused: r.status === "ERROR" ? `error ${code}` : r.status };
    }
    const ledger = await new Promise<number | null>((resolve) => track(book, u, tx.hash, r.latestLedger, resolve));
    return { sentLedger, sentAt, ledger, refused: null };
  } catch (e) {
    u.busy = false;
    return { sentLedger, sentAt, ledger: null, refused: e instanceof Error ? e.message : String(e) };
  }
}
