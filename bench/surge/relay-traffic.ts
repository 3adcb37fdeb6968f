/**
 * The relay's own traffic: users of a project sending signed payments (100 stroops per operation,
 * the SDK's default) to POST /v1/sponsor at a steady rate, each waiting for its answer.
 */
import { rpc } from "@stellar/stellar-sdk";
import { type User, payment, refreshSeq } from "./accounts.ts";
import type { LedgerBook } from "./ledgers.ts";
import { pace } from "./pacer.ts";

export interface RelayResult {
  /** The latest closed ledger when the request was sent (the next one is "the next ledger"). */
  sentLedger: number;
  /** When it was sent (epoch ms). */
  sentAt: number;
  status: number;
  code: string;
  ledger: number | null;
  feePaid: number | null;
  hash: string | null;
  innerHash: string;
  details?: Record<string, unknown>;
}

export class RelayTraffic {
  rate = 0;
  readonly results: RelayResult[] = [];
  private pacer: { stop(): void } | null = null;
  private readonly inflight = new Set<Promise<void>>();
  private readonly server: rpc.Server;

  constructor(
    private readonly relayUrl: string,
    private readonly apiKey: string,
    rpcUrl: string,
    book: LedgerBook,
    private readonly users: User[],
    private readonly sink: string,
    private readonly passphrase: string,
    /** The latest ledger the network has closed (from its own log: sooner than a poll). */
    private readonly latest: () => number = () => book.latest,
  ) {
    this.server = new rpc.Server(rpcUrl, { allowHttp: true });
  }

  start(): void {
    this.pacer = pace(
      () => this.rate,
      () => {
        const u = this.users.find((x) => !x.busy);
        if (!u) {
          console.error("relay traffic: every user is waiting for an answer (raise the user count)");
          return false;
        }
        const p = this.send(u).finally(() => this.inflight.delete(p));
        this.inflight.add(p);
        return true;
      },
    );
  }

  /** Stops sending and waits for the answers still out. */
  async stop(): Promise<void> {
    this.pacer?.stop();
    await Promise.allSettled([...this.inflight]);
  }

  private async send(u: User): Promise<void> {
    u.busy = true;
    const tx = payment(u, this.sink, 100n, this.passphrase);
    const sentLedger = this.latest();
    const r: RelayResult = {
      sentLedger,
      sentAt: Date.now(),
      status: 0,
      code: "",
      ledger: null,
      feePaid: null,
      hash: null,
      innerHash: tx.hash,
    };
    try {
      const res = await fetch(`${this.relayUrl}/v1/sponsor`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": this.apiKey },
        body: JSON.stringify({ transaction: tx.xdr, network: "mainnet" }),
      });
      r.status = res.status;
      const j = (await res.json()) as {
        ledger?: number;
        feePaid?: string;
        hash?: string;
        error?: { code: string; details?: Record<string, unknown> };
      };
      if (res.status === 200) {
        r.ledger = j.ledger ?? null;
        r.feePaid = Number(j.feePaid);
        r.hash = j.hash ?? null;
        u.seq += 1n;
      } else {
        r.code = `${j.error?.code ?? "?"}${j.error?.details?.reason ? ` (${j.error.details.reason})` : ""}`;
        r.details = j.error?.details;
        await refreshSeq(this.server, u).catch(() => {});
      }
    } catch (e) {
      r.code = `fetch: ${e instanceof Error ? e.message : e}`;
      await refreshSeq(this.server, u).catch(() => {});
    }
    this.results.push(r);
    u.busy = false;
  }
}
