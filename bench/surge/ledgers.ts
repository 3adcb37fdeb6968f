/**
 * The benchmark's view of the network: every ledger's transactions read once (getTransactions),
 * with each one's bid and charge per operation, and per ledger the clearing rate (the lowest
 * included bid per operation), the rate charged and the highest bid. Transactions are found by
 * their hash or, for a fee-bump, their inner hash.
 */
import { TransactionBuilder } from "@stellar/stellar-sdk";
import { resultSummary } from "../../src/stellar/xdr.ts";

export interface Included {
  ledger: number;
  /** The bid per operation (a fee-bump's outer fee over its operations + 1). */
  bid: number;
  /** What the network charged per operation. */
  charged: number;
  feeBump: boolean;
}

export interface LedgerInfo {
  sequence: number;
  txs: number;
  /** Classic lane units used: operations, + 1 per fee-bump. */
  ops: number;
  /** The lowest included bid per operation (100 on an empty ledger). */
  clearing: number;
  /** The lowest rate charged per operation. */
  charged: number;
  maxBid: number;
}

interface RpcTx {
  txHash: string;
  ledger: number;
  envelopeXdr: string;
  resultXdr: string;
}

/** One JSON-RPC call. */
export async function rpcCall<T>(url: string, method: string, params: unknown = {}): Promise<T> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const j = (await res.json()) as { result?: T; error?: { message: string } };
  if (j.error || j.result === undefined) throw new Error(`${method}: ${j.error?.message ?? "no result"}`);
  return j.result;
}

/** The bid per operation and operation count of an envelope (base64). */
function bidOf(envelopeXdr: string, passphrase: string): { bid: number; feeOps: number; feeBump: boolean } {
  const tx = TransactionBuilder.fromXDR(envelopeXdr, passphrase);
  if ("innerTransaction" in tx) {
    const ops = tx.innerTransaction.operations.length + 1;
    return { bid: Number(tx.fee) / ops, feeOps: ops, feeBump: true };
  }
  const ops = tx.operations.length;
  return { bid: Number(tx.fee) / ops, feeOps: ops, feeBump: false };
}

export class LedgerBook {
  readonly ledgers = new Map<number, LedgerInfo>();
  readonly included = new Map<string, Included>();
  latest = 0;
  private readonly listeners = new Set<(l: LedgerInfo) => void>();
  private stopped = false;

  constructor(
    private readonly rpc: string,
    private readonly passphrase: string,
  ) {}

  /** Follows the network from its current ledger on. */
  async start(): Promise<void> {
    this.latest = (await rpcCall<{ sequence: number }>(this.rpc, "getLatestLedger")).sequence;
    void this.loop();
  }

  stop(): void {
    this.stopped = true;
  }

  onLedger(fn: (l: LedgerInfo) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Resolves at the close of a ledger at least `seq`. */
  waitFor(seq: number): Promise<void> {
    if (this.latest >= seq) return Promise.resolve();
    return new Promise((resolve) => {
      const off = this.onLedger((l) => {
        if (l.sequence >= seq) {
          off();
          resolve();
        }
      });
    });
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      try {
        const seq = (await rpcCall<{ sequence: number }>(this.rpc, "getLatestLedger")).sequence;
        for (let l = this.latest + 1; l <= seq; l++) await this.read(l);
      } catch (e) {
        console.error(`ledger reader: ${e instanceof Error ? e.message : e}`);
      }
      await Bun.sleep(50);
    }
  }

  private async read(seq: number): Promise<void> {
    const txs: RpcTx[] = [];
    let params: Record<string, unknown> = { startLedger: seq, pagination: { limit: 200 } };
    for (;;) {
      const page = await rpcCall<{ transactions: RpcTx[] | null; cursor: string }>(this.rpc, "getTransactions", params);
      const here = (page.transactions ?? []).filter((t) => t.ledger === seq);
      txs.push(...here);
      if (here.length < 200) break;
      params = { pagination: { cursor: page.cursor, limit: 200 } };
    }
    let clearing = Number.POSITIVE_INFINITY;
    let charged = Number.POSITIVE_INFINITY;
    let maxBid = 0;
    let ops = 0;
    for (const t of txs) {
      const b = bidOf(t.envelopeXdr, this.passphrase);
      const r = resultSummary(t.resultXdr, false);
      const fee = Number(r.feeCharged);
      const inc: Included = { ledger: seq, bid: b.bid, charged: fee / b.feeOps, feeBump: b.feeBump };
      this.included.set(t.txHash, inc);
      if (r.innerHash) this.included.set(r.innerHash, inc);
      clearing = Math.min(clearing, b.bid);
      charged = Math.min(charged, inc.charged);
      maxBid = Math.max(maxBid, b.bid);
      ops += b.feeOps; // lane units: a fee-bump counts its operations + 1
    }
    const info: LedgerInfo = {
      sequence: seq,
      txs: txs.length,
      ops,
      clearing: Number.isFinite(clearing) ? clearing : 100,
      charged: Number.isFinite(charged) ? charged : 100,
      maxBid,
    };
    this.ledgers.set(seq, info);
    this.latest = seq;
    for (const fn of this.listeners) fn(info);
  }
}
