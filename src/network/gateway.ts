/**
 * The gateway to one Stellar network: typed RPC calls (each with a timeout, each answer's shape
 * checked), the passphrase, the ledger watcher and fee statistics (read once per new ledger).
 * Nothing else in the relay talks to the network's RPC.
 */
import {
  Keypair,
  StrKey,
  TransactionBuilder,
  xdr,
  type FeeBumpTransaction,
  type Transaction,
} from "@stellar/stellar-sdk";
import type { Static } from "@sinclair/typebox";
import { LedgerWatcher, type Confirmed } from "./ledger-watcher.ts";
import type { Market } from "./clearing-rates.ts";
import { RpcClient, RpcFailure, httpTransport, messageOf, type RpcTransport } from "./rpc-client.ts";
import * as S from "./rpc-schemas.ts";
import { X, fromB64, resultSummary, type LedgerEntryDataW } from "../stellar/xdr.ts";
import type { Logger } from "../kernel/log.ts";
import { BASE_RESERVE } from "../stellar/protocol.ts";
import type { RpcMetrics, WatcherMetrics } from "../kernel/metrics.ts";
import { RelayError } from "../kernel/errors.ts";
import type { NetworkName } from "../stellar/networks.ts";

export interface GatewayOptions {
  name: NetworkName;
  rpcUrl: string;
  /** How calls reach the RPC; default over HTTP to `rpcUrl` (an embedded network is called in-process). */
  transport?: RpcTransport;
  /** "localnet" for an embedded network, else the upstream host. */
  upstream: string;
  /** Known passphrase (embedded networks); otherwise read with getNetwork. */
  passphrase?: string;
  /** The longest time between two polls of the watcher. */
  pollMs: number;
  /** The watcher's poll period around an expected ledger close. */
  fastPollMs: number;
  /** The longest any one RPC call may take. */
  timeoutMs: number;
  log: Logger;
  /** RPC calls, and the watcher's confirmation delays and ledger reads, for GET /metrics. */
  metrics?: RpcMetrics & WatcherMetrics;
}

export type FeePercentile = "p10" | "p20" | "p30" | "p40" | "p50" | "p60" | "p70" | "p80" | "p90" | "p95" | "p99";

/** What sendTransaction said; `errorResultXdr` (a decodable TransactionResult) comes with ERROR. */
export type Sent = Static<typeof S.SendResult>;

/** A transaction the network applied, found by its hash or (for a fee-bump) its inner hash. */
export interface Found extends Confirmed {
  /** The account that paid the fee: the fee-bump's fee source, or the transaction's source. */
  feeSource: string;
}

export interface AccountState {
  balance: bigint;
  seq: bigint;
  /** The minimum balance: (2 + subentries) base reserves. */
  reserve: bigint;
}

const LEDGER_ENTRIES_PER_CALL = 200;

/** The inclusion fee rate at `percentile` of fee statistics (stroops per operation; 0 when not given). */
function rateOf(f: Static<typeof S.FeeStats>, percentile: FeePercentile | "mode", soroban: boolean): bigint {
  const value = (soroban ? f.sorobanInclusionFee : f.inclusionFee)[percentile] ?? "0";
  return BigInt(typeof value === "number" ? Math.max(0, Math.trunc(value)) : value);
}

export class Gateway {
  readonly name: NetworkName;
  readonly upstream: string;
  readonly watcher: LedgerWatcher;
  passphrase = "";
  /** The last call that failed for the upstream's fault (unreachable, timeout, bad answer; the watcher's polls aside): when, and why (for /health). */
  lastFailure: { at: number; message: string } | null = null;
  private readonly client: RpcClient;
  private fees: Promise<Static<typeof S.FeeStats>> | null = null;
  private feesLedger = -1;
  private feesAt = 0;

  constructor(private readonly opts: GatewayOptions) {
    this.name = opts.name;
    this.upstream = opts.upstream;
    const transport = opts.transport ?? httpTransport(opts.rpcUrl);
    this.client = new RpcClient(transport, opts.timeoutMs, opts.log.child({ network: opts.name }));
    const { metrics } = opts;
    if (metrics) this.client.onRequest = (method, calls) => metrics.rpcRequest(opts.name, method, calls);
    this.watcher = new LedgerWatcher(this.client, {
      pollMs: opts.pollMs,
      fastPollMs: opts.fastPollMs,
      log: opts.log,
      network: opts.name,
      metrics,
    });
  }

  /** Reads the passphrase (unless configured) and starts the watcher; throws when the passphrase cannot be had. */
  async start(): Promise<void> {
    this.passphrase = this.opts.passphrase ?? (await this.client.call("getNetwork", {}, S.NetworkInfo)).passphrase;
    await this.watcher.start();
  }

  stop(): void {
    this.watcher.stop();
  }

  /** Submits a signed envelope (base64 XDR), in one JSON-RPC batch with the others sent in this turn. */
  async send(envelope: string): Promise<Sent> {
    const sent = await this.call("sendTransaction", { transaction: envelope }, S.SendResult, true);
    if (sent.status === "ERROR") {
      if (!sent.errorResultXdr) throw this.badAnswer("sendTransaction", "ERROR without errorResultXdr");
      this.decodable("sendTransaction", sent.errorResultXdr);
    }
    return sent;
  }

  /** The applied transaction with this hash (or inner hash), or null when the network has none (yet). */
  async find(hash: string): Promise<Found | null> {
    const r = await this.call("getTransaction", { hash }, S.TransactionInfo);
    if (r.status === "NOT_FOUND") return null;
    if (!r.resultXdr || !r.envelopeXdr || !r.ledger)
      throw this.badAnswer("getTransaction", "a found transaction without ledger, envelope or result");
    const s = this.decodable("getTransaction", r.resultXdr);
    let tx: Transaction | FeeBumpTransaction;
    try {
      tx = TransactionBuilder.fromXDR(r.envelopeXdr, this.passphrase);
    } catch {
      throw this.badAnswer("getTransaction", "undecodable envelopeXdr");
    }
    const feeSource = "feeSource" in tx ? tx.feeSource : tx.source;
    const hash0 = Buffer.from(tx.hash()).toString("hex");
    return {
      hash: hash0,
      innerHash: s.innerHash,
      successful: r.status === "SUCCESS",
      ledger: r.ledger,
      resultXdr: r.resultXdr,
      feeCharged: s.feeCharged,
      feeSource,
    };
  }

  /** simulateTransaction (`authMode` enforce checks the authorization entries' signatures). */
  simulate(tx: Transaction, authMode?: "enforce"): Promise<Static<typeof S.Simulation>> {
    const params = { transaction: tx.toEnvelope().toXDR("base64"), ...(authMode ? { authMode } : {}) };
    return this.call("simulateTransaction", params, S.Simulation);
  }

  /** Balances, sequence numbers and reserves of accounts (getLedgerEntries, 200 a call); absent accounts are missing. */
  async accounts(publicKeys: string[]): Promise<Map<string, AccountState>> {
    const out = new Map<string, AccountState>();
    for (let i = 0; i < publicKeys.length; i += LEDGER_ENTRIES_PER_CALL) {
      const keys = publicKeys
        .slice(i, i + LEDGER_ENTRIES_PER_CALL)
        .map((pk) =>
          xdr.LedgerKey.account(
            new xdr.LedgerKeyAccount({ accountId: Keypair.fromPublicKey(pk).xdrAccountId() }),
          ).toXDR("base64"),
        );
      const r = await this.call("getLedgerEntries", { keys }, S.LedgerEntries);
      for (const e of r.entries ?? []) {
        let data: LedgerEntryDataW;
        try {
          data = X.ledgerEntryData.decode(fromB64(e.xdr));
        } catch {
          throw this.badAnswer("getLedgerEntries", "undecodable entry");
        }
        if (data.type !== 0) continue; // not an account entry
        const a = data.account;
        out.set(StrKey.encodeEd25519PublicKey(a.accountId.ed25519), {
          balance: BigInt(a.balance),
          seq: BigInt(a.seqNum),
          reserve: (2n + BigInt(a.numSubEntries)) * BASE_RESERVE,
        });
      }
    }
    return out;
  }

  /**
   * The inclusion fee rate (stroops per operation) at `percentile` of recent fees charged. Fee
   * statistics are read once per ledger: concurrent requests share the one call.
   */
  async feeRate(percentile: FeePercentile | "mode", soroban: boolean): Promise<bigint> {
    return rateOf(await this.feeStats(), percentile, soroban);
  }

  /**
   * The fee strategy's view of one lane: what the last ledgers the watcher read cleared at
   * (classic only), and the fee statistics' median and `percentile`.
   */
  async market(percentile: FeePercentile, soroban: boolean): Promise<Market> {
    const f = await this.feeStats();
    const recent = soroban ? [] : this.watcher.clearing.recent(this.watcher.latestLedger);
    return { recent, median: rateOf(f, "p50", soroban), percentile: rateOf(f, percentile, soroban) };
  }

  /** getFeeStats, read once per ledger. */
  private feeStats(): Promise<Static<typeof S.FeeStats>> {
    // while the watcher's polls fail, the network's fees are read again (once per failed poll), not
    // served from before the failure: an upstream that stopped answering is NETWORK_UNAVAILABLE here too
    const suspect = this.watcher.lastError !== null && this.feesAt < this.watcher.lastPollAt;
    if (!this.fees || this.feesLedger < this.watcher.latestLedger || suspect) {
      this.feesLedger = this.watcher.latestLedger;
      this.feesAt = Date.now();
      const fees = this.call("getFeeStats", {}, S.FeeStats);
      this.fees = fees;
      fees.catch(() => {
        if (this.fees === fees) this.fees = null;
      }); // a failed read is retried by the next request
    }
    return this.fees;
  }

  /** One RPC call; a network that cannot be reached, or answers what cannot be used, is NETWORK_UNAVAILABLE (503). */
  private async call<T extends Parameters<RpcClient["call"]>[2]>(
    method: string,
    params: unknown,
    schema: T,
    batched = false,
  ): Promise<Static<T>> {
    try {
      return await (batched ? this.client.batched(method, params, schema) : this.client.call(method, params, schema));
    } catch (e) {
      throw this.unavailable(method, e);
    }
  }

  private decodable(method: string, resultXdr: string): ReturnType<typeof resultSummary> {
    try {
      return resultSummary(resultXdr);
    } catch {
      throw this.badAnswer(method, "undecodable result XDR");
    }
  }

  private badAnswer(method: string, message: string): RelayError {
    return this.unavailable(method, new RpcFailure(method, "bad_answer", message));
  }

  private unavailable(method: string, e: unknown): RelayError {
    const reason = e instanceof RpcFailure ? e.kind : "unreachable";
    // an error the RPC answered may be about the request (a client's transaction): only the upstream's own faults count for /health
    if (reason !== "rpc_error") this.lastFailure = { at: Date.now(), message: messageOf(e) };
    this.opts.log.warn({ network: this.name, call: method, reason, err: messageOf(e) }, "network call failed");
    return new RelayError(
      "NETWORK_UNAVAILABLE",
      `the ${this.name} network could not be used (${method}: ${reason})`,
      { network: this.name, reason },
      { retryAfter: 2 },
    );
  }
}
