/**
 * The gateway to one Stellar network: its RPC client (the official SDK's rpc.Server), passphrase,
 * ledger watcher and fee statistics (read once per new ledger).
 */
import { rpc } from "@stellar/stellar-sdk";
import { LedgerWatcher } from "./ledger-watcher.ts";
import type { Logger } from "../log.ts";
import { RelayError } from "../http/errors.ts";

export type NetworkName = "testnet" | "mainnet";
export const NETWORKS: readonly NetworkName[] = ["testnet", "mainnet"];

export interface GatewayOptions {
  name: NetworkName;
  rpcUrl: string;
  /** "localnet" for an embedded network, else the upstream host. */
  upstream: string;
  /** Known passphrase (embedded networks); otherwise read with getNetwork. */
  passphrase?: string;
  pollMs: number;
  log: Logger;
}

export type FeePercentile = "p10" | "p20" | "p30" | "p40" | "p50" | "p60" | "p70" | "p80" | "p90" | "p95" | "p99";

export class Gateway {
  readonly name: NetworkName;
  readonly upstream: string;
  readonly rpc: rpc.Server;
  readonly watcher: LedgerWatcher;
  passphrase = "";
  private fees: Promise<{ ledger: number; classic: Record<string, string>; soroban: Record<string, string> }> | null = null;
  private feesLedger = -1;

  constructor(private readonly opts: GatewayOptions) {
    this.name = opts.name;
    this.upstream = opts.upstream;
    this.rpc = new rpc.Server(opts.rpcUrl, { allowHttp: opts.rpcUrl.startsWith("http://") });
    this.watcher = new LedgerWatcher(this.rpc, { pollMs: opts.pollMs, log: opts.log, network: opts.name });
  }

  /** Reads the passphrase (unless configured) and starts the watcher; throws when the passphrase cannot be had. */
  async start(): Promise<void> {
    this.passphrase = this.opts.passphrase ?? (await this.rpc.getNetwork()).passphrase;
    await this.watcher.start();
  }

  /** Whether the network answered its last poll. */
  get reachable(): boolean {
    return this.watcher.lastError === null && this.watcher.latestLedger > 0;
  }
  stop(): void { this.watcher.stop(); }

  /** Runs an RPC call; a network that cannot be reached is NETWORK_UNAVAILABLE (503, Retry-After). */
  async call<T>(what: string, fn: (server: rpc.Server) => Promise<T>): Promise<T> {
    try {
      return await fn(this.rpc);
    } catch (e) {
      this.opts.log.warn({ network: this.name, call: what, err: e instanceof Error ? e.message : String(e) }, "network call failed");
      throw new RelayError("NETWORK_UNAVAILABLE", `the ${this.name} network could not be reached (${what})`, undefined, { "Retry-After": "2" });
    }
  }

  /** The inclusion fee rate (stroops per operation) at `percentile` of recent fees charged. */
  /** Fee statistics are read once per ledger: concurrent requests share the one call. */
  async feeRate(percentile: FeePercentile, soroban: boolean): Promise<bigint> {
    if (!this.fees || this.feesLedger < this.watcher.latestLedger) {
      this.feesLedger = this.watcher.latestLedger;
      this.fees = this.call("getFeeStats", (r) => r.getFeeStats() as Promise<unknown>).then((raw) => {
        const s = raw as { inclusionFee: Record<string, string>; sorobanInclusionFee: Record<string, string>; latestLedger: number };
        return { ledger: s.latestLedger, classic: s.inclusionFee, soroban: s.sorobanInclusionFee };
      });
      this.fees.catch(() => { this.fees = null; }); // a failed read is retried by the next request
    }
    const f = await this.fees;
    return BigInt((soroban ? f.soroban : f.classic)[percentile] ?? "0");
  }
}
