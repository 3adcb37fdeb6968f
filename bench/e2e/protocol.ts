/**
 * The messages between the benchmark's orchestrator (`bench/e2e.bench.ts`) and its load generator
 * process (`bench/e2e/generator.ts`): one JSON object per line, commands on the generator's stdin,
 * replies on its stdout, matched by `id`. A failed command replies `{id, error}`.
 */

/** Point the generator at a network: its RPC and friendbot. Forgets the accounts of the previous one. */
export interface InitCmd {
  cmd: "init";
  rpc: string;
  friendbot: string;
}
/** Create `count` more user accounts (friendbot-funded funders, then createAccount, 100 per transaction). */
export interface FundCmd {
  cmd: "fund";
  count: number;
}
/** Re-read the sequence numbers of accounts whose last request did not answer 200. */
export interface RefreshCmd {
  cmd: "refresh";
}
/** Where and as whom the relay is called. */
export interface RelayTarget {
  relayUrl: string;
  apiKey: string;
  /** Several instances of the relay (no load balancer): an open-loop phase sends round-robin over them. */
  relayUrls?: string[];
  /** Each request carries an X-Idempotency-Key of its own. */
  keyed?: boolean;
}
/** `pairs` times: a direct SDK submission and a relay one sent at the same instant, a random pause before each. */
export interface LatencyCmd extends RelayTarget {
  cmd: "latency";
  pairs: number;
  ledgerMs: number;
}
/** Pre-build and pre-sign the bodies of an open-loop phase (nothing is sent). */
export interface PrepareCmd extends RelayTarget {
  cmd: "prepare";
  rate: number;
  seconds: number;
  /** Seconds of requests the phase's account pool covers (default 3, `open-loop.ts`). */
  poolSeconds?: number;
}
/** Run the prepared phase; replies once every request is answered or `capMs` after the last send. */
export interface RunCmd {
  cmd: "run";
  capMs: number;
}
export type Command = InitCmd | FundCmd | RefreshCmd | LatencyCmd | PrepareCmd | RunCmd | { cmd: "exit" };

export interface InitReply {
  passphrase: string;
}
export interface FundReply {
  accounts: number;
  ms: number;
}
export interface RefreshReply {
  refreshed: number;
  clean: number;
}
/** One sample's outcome: the milliseconds it took, or why it failed. */
export interface Sample {
  ms: number;
  ok: boolean;
  error?: string;
}
export interface LatencyReply {
  direct: Sample[];
  relay: Sample[];
}
export interface PrepareReply {
  pool: number;
  perAccount: number;
  bodies: number;
  ms: number;
}
/** An open-loop phase, one entry per answered request in the parallel arrays. */
export interface RunReply {
  scheduled: number;
  sent: number;
  notSent: number;
  unanswered: number;
  /** HTTP status, 0 when fetch itself failed. */
  status: number[];
  /** The error code (`error.code`, or the fetch error's name), "" for a 200. */
  code: string[];
  /** Send to answer, ms. */
  latencyMs: number[];
  /** Date.now() when the answer was read. */
  answeredAt: number[];
  /** The ledger of a 200 answer, else 0. */
  ledger: number[];
  /** With `relayUrls`: which of them (index) each answer came from. */
  via?: number[];
  /** How late the scheduler sent, ms: p99 and max. */
  lagP99Ms: number;
  lagMaxMs: number;
  /** Wall time from the first send to the last answer. */
  elapsedMs: number;
}
