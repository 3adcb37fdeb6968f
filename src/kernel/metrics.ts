/**
 * The relay's Prometheus metrics (prom-client), one registry per relay instance (never the global
 * default registry: tests run many relays in one process). Served at GET /metrics by
 * src/server/metrics.ts; docs/operations.md lists every series.
 *
 * Label values are bounded and never secret: routes are Elysia's route patterns (never raw paths),
 * result codes come from fixed tables, networks are `testnet` / `mainnet`. No API key, project id,
 * IP address, account or hash is ever a label value.
 *
 * Services take the narrow observer interfaces below as an optional dependency, so code (and
 * tests) built without metrics runs unchanged. Channel gauges and pending submissions are read
 * from their sources when Prometheus scrapes (`bind`), not kept up to date on every change.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

/** What a sponsorship's outcome is counted by: success, or the error's code and its transaction result. */
export type OutcomeLabel =
  | { kind: "success" }
  | { kind: "failure"; error: { code: string; details?: Record<string, unknown> } };

/** What the sponsor service reports. */
export interface SponsorMetrics {
  /** One sponsor request's outcome (a 200 body or an error outcome). */
  sponsorOutcome(network: string, outcome: OutcomeLabel): void;
  /** A fee the network charged one of the relay's channel accounts for a sponsored transaction. */
  feePaid(network: string, stroops: bigint): void;
}

/** What the ledger watcher reports. */
export interface WatcherMetrics {
  /** A waited-for transaction was found in a closed ledger `seconds` after the ledger's close time. */
  confirmationDelay(network: string, seconds: number): void;
  /** One read of new transactions took `seconds` from its first page that held any to its last. */
  ledgerRead(network: string, seconds: number): void;
}

/** What an RPC client reports. */
export interface RpcMetrics {
  /** One HTTP request to a network's RPC, carrying `calls` JSON-RPC calls of `method` (more than one: a batch). */
  rpcRequest(network: string, method: string, calls: number): void;
}

/** What the database reports. */
export interface DatabaseMetrics {
  /** One statement's duration as the relay saw it (waiting for a connection included). */
  statement(sql: string, seconds: number): void;
}

/** A channel pool as the metrics read it (ChannelPool.list()). */
export interface PoolSource {
  list(): {
    funder: { balance: string };
    target: number;
    max?: number;
    waiting?: number;
    totals: {
      active: number;
      creating: number;
      draining: number;
      balance: string;
      inFlight: { count: number; fees: string };
    };
  };
}

/** What the gauges read at scrape time. */
export interface MetricSources {
  pools?: () => (readonly [string, PoolSource])[];
  /** Submissions this process is sending or waiting on, for a network. */
  pending?: (network: string) => number;
}

const STATEMENTS = new Set(["select", "insert", "update", "delete", "with"]);
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);
const RPC_METHODS = new Set([
  "getFeeStats",
  "getLatestLedger",
  "getLedgerEntries",
  "getNetwork",
  "getTransaction",
  "getTransactions",
  "sendTransaction",
  "simulateTransaction",
]);
/** Result codes are fixed vocabularies (the relay's error codes, stellar-core's result names); anything else is "other". */
const code = (s: unknown): string => (typeof s === "string" && /^[A-Za-z_]{1,48}$/.test(s) ? s : "other");

/** Request durations: sponsor requests may wait up to SUBMISSION_TIMEOUT_MS (30 s by default). */
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Public networks close a ledger every 5 to 6 s; the close time has whole-second resolution. */
const CONFIRMATION_BUCKETS = [0.1, 0.25, 0.5, 1, 1.5, 2, 3, 5, 7.5, 10, 20, 30];
const DB_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

export class RelayMetrics implements SponsorMetrics, WatcherMetrics, DatabaseMetrics, RpcMetrics {
  readonly registry = new Registry();
  private sources: MetricSources = {};

  private readonly approvals = new Histogram({
    name: "relay_approval_duration_seconds",
    help:
      "Calls to projects' approval servers (a policy's approval), by outcome: approved, denied, or " +
      "unavailable (a timeout, an error or another answer: the policy's onFailure decided).",
    labelNames: ["outcome"] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5],
    registers: [this.registry],
  });

  private readonly channelWaits = new Histogram({
    name: "relay_channel_wait_seconds",
    help:
      "Requests that had to wait for a channel account, by network and outcome (served, or refused: 503), " +
      "and how long they waited.",
    labelNames: ["network", "outcome"] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
    registers: [this.registry],
  });

  /** A request waited `seconds` for a channel and was served or refused. */
  channelWait(network: string, outcome: "served" | "refused", seconds: number): void {
    this.channelWaits.observe({ network, outcome }, seconds);
  }

  /** One approval call: its outcome and how long it took. */
  approval(outcome: "approved" | "denied" | "unavailable", seconds: number): void {
    this.approvals.observe({ outcome }, seconds);
  }

  private readonly httpRequests = new Counter({
    name: "relay_http_requests_total",
    help: 'HTTP requests answered, by method, route pattern ("unmatched": no route) and status.',
    labelNames: ["method", "route", "status"] as const,
    registers: [this.registry],
  });
  private readonly httpDuration = new Histogram({
    name: "relay_http_request_duration_seconds",
    help: "Time from a request's arrival to its answer being handed to the server, by method, route pattern and status.",
    labelNames: ["method", "route", "status"] as const,
    buckets: HTTP_BUCKETS,
    registers: [this.registry],
  });
  private readonly rateLimitedTotal = new Counter({
    name: "relay_rate_limited_total",
    help:
      "Requests refused with 429 RATE_LIMIT_EXCEEDED, by whose bucket was empty: a project's " +
      "(scope=project) or a client IP's (scope=anonymous: the anonymous relay, and unknown API keys).",
    labelNames: ["scope"] as const,
    registers: [this.registry],
  });
  private readonly sponsorOutcomes = new Counter({
    name: "relay_sponsor_outcomes_total",
    help:
      "Sponsor requests the sponsor service answered (after authentication and the rate limit; idempotent " +
      'replays not counted), by network, outcome ("success" or the error code) and tx_result (the client ' +
      'transaction\'s result code when the network judged it, else "none").',
    labelNames: ["network", "outcome", "tx_result"] as const,
    registers: [this.registry],
  });
  private readonly feesPaid = new Counter({
    name: "relay_fees_paid_stroops_total",
    help:
      "Fees the network charged the relay's channel accounts for sponsored transactions (successful or " +
      "failed), in stroops, by network. Channel creation and top-ups are not counted.",
    labelNames: ["network"] as const,
    registers: [this.registry],
  });
  private readonly ledgerReads = new Histogram({
    name: "relay_ledger_read_seconds",
    help:
      "Time the ledger watcher took to read new transactions, from the first page that held any to the " +
      "last page of that read (a busy ledger has several), by network.",
    labelNames: ["network"] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });
  private readonly confirmations = new Histogram({
    name: "relay_confirmation_delay_seconds",
    help:
      "Time from a ledger's close time, as the network reports it (createdAt, whole seconds, so up to 1 s " +
      "more than the true delay), to the ledger watcher finding a waited-for transaction in that ledger, " +
      "by network.",
    labelNames: ["network"] as const,
    buckets: CONFIRMATION_BUCKETS,
    registers: [this.registry],
  });
  private readonly rpcRequests = new Counter({
    name: "relay_rpc_requests_total",
    help:
      "HTTP requests to a network's RPC, by network, JSON-RPC method and batch (true: a JSON-RPC batch " +
      "of calls of that method, sent together).",
    labelNames: ["network", "method", "batch"] as const,
    registers: [this.registry],
  });
  private readonly rpcCalls = new Counter({
    name: "relay_rpc_calls_total",
    help: "JSON-RPC calls to a network's RPC (one per request, or each call of a batch), by network and method.",
    labelNames: ["network", "method"] as const,
    registers: [this.registry],
  });
  private readonly dbDuration = new Histogram({
    name: "relay_db_statement_duration_seconds",
    help:
      "Duration of database statements as the relay sees them (waiting for a connection or PGlite's lock " +
      "included), by statement kind (select, insert, update, delete, with, other).",
    labelNames: ["statement"] as const,
    buckets: DB_BUCKETS,
    registers: [this.registry],
  });

  /** A `network` label: one of the networks' names, anything else "other". */
  private readonly network = (s: string): string => (this.networks.includes(s) ? s : "other");

  constructor(private readonly networks: readonly string[]) {
    for (const scope of ["project", "anonymous"]) this.rateLimitedTotal.inc({ scope }, 0); // both series exist from the start
    const self = this;
    const pools = () => (this.sources.pools?.() ?? []).map(([n, p]) => [n, p.list()] as const);
    new Gauge({
      name: "relay_channels",
      help: "Channel accounts in the pool, by network and state (active, creating, draining).",
      labelNames: ["network", "state"] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [n, v] of pools())
          for (const state of ["active", "creating", "draining"] as const)
            this.set({ network: n, state }, v.totals[state]);
      },
    });
    const perPool = (name: string, help: string, read: (v: ReturnType<PoolSource["list"]>) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ["network"] as const,
        registers: [this.registry],
        collect() {
          this.reset();
          for (const [n, v] of pools()) this.set({ network: n }, read(v));
        },
      });
    perPool(
      "relay_channels_target",
      "Channel accounts the pool is sized to now (the operator's count, and more while requests wait), by network.",
      (v) => v.target,
    );
    perPool(
      "relay_channels_max",
      "The most channel accounts demand may grow the pool to, by network.",
      (v) => v.max ?? v.target,
    );
    perPool(
      "relay_channel_waiting",
      "Requests waiting for a channel account now (this instance), by network.",
      (v) => v.waiting ?? 0,
    );
    perPool(
      "relay_channels_balance_stroops",
      "Sum of the channel accounts' balances in stroops, by network (GET /v1/admin/channels totals.balance).",
      (v) => Number(v.totals.balance),
    );
    perPool(
      "relay_channels_in_flight",
      "Leases the channel accounts hold for submissions in flight, by network (totals.inFlight.count).",
      (v) => v.totals.inFlight.count,
    );
    perPool(
      "relay_channels_in_flight_fees_stroops",
      "Fees reserved on the channel accounts for submissions in flight, in stroops, by network (totals.inFlight.fees).",
      (v) => Number(v.totals.inFlight.fees),
    );
    perPool(
      "relay_funder_balance_stroops",
      "Balance of the account that funds and tops up the channel accounts, in stroops, by network.",
      (v) => Number(v.funder.balance),
    );
    new Gauge({
      name: "relay_submissions_pending",
      help: "Submissions this relay process is sending or waiting on a ledger for (one per inner transaction, however many requests wait on it), by network.",
      labelNames: ["network"] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        const pending = self.sources.pending;
        if (pending) for (const [n] of self.sources.pools?.() ?? []) this.set({ network: n }, pending(n));
      },
    });
  }

  /**
   * The process's own series beside the relay's (prom-client's defaults: CPU, memory, handles, event loop lag),
   * but V8's heap spaces: Bun walks the whole heap for them (70 ms for 2 million objects, at every scrape).
   */
  collectProcessMetrics(): void {
    collectDefaultMetrics({ register: this.registry });
    for (const k of ["total", "used", "available"])
      this.registry.removeSingleMetric(`nodejs_heap_space_size_${k}_bytes`);
  }

  /** Where the scrape-time gauges read from (the pools fill in as the networks start). */
  bind(sources: MetricSources): void {
    this.sources = { ...this.sources, ...sources };
  }

  /** The exposition text and its content type. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  request(method: string, route: string, status: number, seconds: number | undefined): void {
    const labels = { method: METHODS.has(method) ? method : "other", route, status: String(status) };
    this.httpRequests.inc(labels);
    if (seconds !== undefined) this.httpDuration.observe(labels, seconds);
  }

  rateLimited(scope: "project" | "anonymous"): void {
    this.rateLimitedTotal.inc({ scope });
  }

  sponsorOutcome(net: string, outcome: OutcomeLabel): void {
    const error = outcome.kind === "failure" ? outcome.error : null;
    const codes = error?.details?.result_codes as { transaction?: unknown } | undefined;
    const txResult = error ? codes?.transaction : "tx_success";
    this.sponsorOutcomes.inc({
      network: this.network(net),
      outcome: error ? code(error.code) : "success",
      tx_result: txResult === undefined ? "none" : code(txResult),
    });
  }

  feePaid(net: string, stroops: bigint): void {
    if (stroops > 0n) this.feesPaid.inc({ network: this.network(net) }, Number(stroops));
  }

  confirmationDelay(net: string, seconds: number): void {
    if (Number.isFinite(seconds)) this.confirmations.observe({ network: this.network(net) }, Math.max(0, seconds));
  }

  ledgerRead(net: string, seconds: number): void {
    this.ledgerReads.observe({ network: this.network(net) }, seconds);
  }

  rpcRequest(net: string, method: string, calls: number): void {
    const m = RPC_METHODS.has(method) ? method : "other";
    this.rpcRequests.inc({ network: this.network(net), method: m, batch: String(calls > 1) });
    this.rpcCalls.inc({ network: this.network(net), method: m }, calls);
  }

  statement(sql: string, seconds: number): void {
    const kind = /^\s*([a-z]+)/i.exec(sql)?.[1]?.toLowerCase() ?? "";
    this.dbDuration.observe({ statement: STATEMENTS.has(kind) ? kind : "other" }, seconds);
  }
}
