/**
 * One measured open-loop phase against a running relay: the generator prepares the bodies, the
 * relay's CPU time is read just before the clock starts and again once every request is answered
 * (or the cap passed), its RSS after; confirmation delays are answer instants minus the close
 * instant of the ledger each 200 answer names. The localnet's and the generator's CPU and the
 * machine's busy share are read over the same span, since they all share the machine. Then two
 * ledgers pass before anything else runs, over which the relay's idle CPU is read; if the relay
 * is still busy (a backlog the cap gave up on), the phase also waits for it to quiet down, so
 * that the next phase starts from an idle relay.
 */
import type { Generator } from "./generator-client.ts";
import type { LedgerCloses } from "./ledger-closes.ts";
import { cpuByThread, cpuMs, machineTicks, rssMb, threadsCpuMs } from "./procs.ts";
import type { RelayProc } from "./relay-proc.ts";
import { counts, pct } from "./stats.ts";

/** What an open-loop phase sent and got back (this bench's phases and the cluster bench's). */
export interface LoadCounts {
  rate: number;
  seconds: number;
  /** Accounts in the phase's pool. */
  pool: number;
  scheduled: number;
  sent: number;
  notSent: number;
  answered: number;
  unanswered: number;
  /** "200", or "<status> <code>" for errors. */
  statuses: Record<string, number>;
  /** 200 answers per second of the phase (first send to last answer). */
  okPerSecond: number;
  latencyMs: { p50: number; p99: number; max: number };
}

export interface PhaseResult extends LoadCounts {
  /** The bodies built for the phase's pool (ms to build). */
  prebuildMs: number;
  /** Answer instant minus the publication of the ledger it names (its transactions applied). */
  confirmationMs: { p50: number; p99: number; samples: number };
  /** The same from the instant the ledger's close began, and how long the network took to apply it. */
  fromCloseStartMs: { p50: number; p99: number };
  applyMs: { p50: number; max: number };
  relayCpuMsPerAnswer: number;
  /** The part of it on the relay's main (JavaScript) thread; the rest: JIT and GC helpers, the database thread. */
  relayMainCpuMsPerAnswer: number;
  /** The relay's worker threads (PGlite's: the embedded database runs in one), per answer. */
  relayDbThreadCpuMsPerAnswer: number;
  /** Database statements the relay ran over the phase (from its /metrics), per answer; null: not read. */
  statementsPerAnswer: number | null;
  /** HTTP requests the relay made to the RPC over the phase, per answer; null: not read. */
  rpcRequestsPerAnswer: number | null;
  /** sendTransaction calls per HTTP request that carried them (a batch's size, on average); null: not read. */
  sendsPerRequest: number | null;
  /** The ledger watcher's reads of new transactions, first page to last, on average (ms); null: none or not read. */
  ledgerReadMs: number | null;
  /** The relay's CPU per answer by thread name (ms), with "(kernel)" the system time of them all. */
  relayThreadsMsPerAnswer: Record<string, number>;
  /** CPU over the phase's wall time, in cores: the relay, the standalone localnet (null: embedded), the generator. */
  relayCores: number;
  localnetCores: number | null;
  generatorCores: number;
  /** The whole machine's busy share over the phase (all cores), %. */
  machineBusyPct: number;
  /** The relay's CPU, in cores, over the two ledgers after the phase. */
  relayIdleCores: number;
  /** How long after those two ledgers the relay took to quiet down (under QUIET_CORES), ms. */
  settleMs: number;
  relayRssMb: number;
  schedulerLagMs: { p99: number; max: number };
  elapsedMs: number;
  /** Epoch ms: when the clock started, when the last answer came (or the cap passed). */
  startedAt: number;
  endedAt: number;
}

/** A relay using less CPU than this (cores) is idle. */
const QUIET_CORES = 0.15;
const MAX_SETTLE_MS = 60_000;

/** Waits until the relay uses under QUIET_CORES over a second (at most MAX_SETTLE_MS); how long it took. */
async function settle(pid: number, clkTck: number): Promise<number> {
  const t0 = performance.now();
  while (performance.now() - t0 < MAX_SETTLE_MS) {
    const c0 = cpuMs(pid, clkTck);
    await Bun.sleep(1000);
    if (cpuMs(pid, clkTck) - c0 < QUIET_CORES * 1000) break;
  }
  return performance.now() - t0;
}

/** What the relay has done so far, from its /metrics; null if unreadable. */
interface Work {
  /** Database statements (relay_db_statement_duration_seconds counts). */
  statements: number;
  /** HTTP requests to the RPC, and those that carried sendTransaction calls, and those calls. */
  rpcRequests: number;
  sendRequests: number;
  sends: number;
  /** The ledger watcher's reads of new transactions, and the seconds they took in all. */
  reads: number;
  readSeconds: number;
}

async function work(url: string): Promise<Work | null> {
  try {
    const text = await (await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(5000) })).text();
    const sum = (name: string, labels = "") => {
      let total = 0;
      for (const m of text.matchAll(new RegExp(`^${name}\\{([^}]*)\\} ([0-9.e+-]+)$`, "gm")))
        if (m[1]!.includes(labels)) total += Number(m[2]);
      return total;
    };
    return {
      statements: sum("relay_db_statement_duration_seconds_count"),
      rpcRequests: sum("relay_rpc_requests_total"),
      sendRequests: sum("relay_rpc_requests_total", 'method="sendTransaction"'),
      sends: sum("relay_rpc_calls_total", 'method="sendTransaction"'),
      reads: sum("relay_ledger_read_seconds_count"),
      readSeconds: sum("relay_ledger_read_seconds_sum"),
    };
  } catch {
    return null;
  }
}

export interface PhaseTarget {
  gen: Generator;
  relay: RelayProc;
  apiKey: string;
  /** Where the ledger closes are logged: the standalone localnet or the relay's embedded one. */
  closes: LedgerCloses;
  localnetPid: number | null;
  clkTck: number;
  /** Requests carry idempotency keys. */
  keyed?: boolean;
}

export async function runPhase(t: PhaseTarget, rate: number, seconds: number, capMs: number): Promise<PhaseResult> {
  const { gen, relay, closes, clkTck } = t;
  await gen.refresh();
  const prep = await gen.prepare({ relayUrl: relay.url, apiKey: t.apiKey, rate, seconds, keyed: t.keyed });
  const pids = [relay.pid, t.localnetPid, gen.pid];
  const cpuOf = () => pids.map((pid) => (pid === null ? 0 : cpuMs(pid, clkTck)));
  const work0 = await work(relay.url);
  const cpu0 = cpuOf();
  const main0 = cpuMs(relay.pid, clkTck, true);
  const db0 = threadsCpuMs(relay.pid, clkTck, "Worker");
  const threads0 = cpuByThread(relay.pid, clkTck);
  const m0 = machineTicks();
  const startedAt = Date.now();
  const r = await gen.run(capMs);
  const endedAt = Date.now();
  const m1 = machineTicks();
  const [cpu, localnetCpu, genCpu] = cpuOf().map((v, i) => v - cpu0[i]!) as [number, number, number];
  const mainCpu = cpuMs(relay.pid, clkTck, true) - main0;
  const dbCpu = threadsCpuMs(relay.pid, clkTck, "Worker") - db0;
  const threads = [...cpuByThread(relay.pid, clkTck)].map(([k, v]) => [k, v - (threads0.get(k) ?? 0)] as const);
  const rss = rssMb(relay.pid);
  const answered = r.status.length;
  const ok = r.status.filter((s) => s === 200).length;
  const delays = closes.delays(r.answeredAt, r.ledger);
  const fromStart = closes.delays(r.answeredAt, r.ledger, "closeStart");
  const applyMs = closes.applyMs(r.ledger.filter((l) => l > 0));
  const idle0 = { cpu: cpuMs(relay.pid, clkTck), at: performance.now() };
  await closes.waitFor(2);
  const idleCores = (cpuMs(relay.pid, clkTck) - idle0.cpu) / (performance.now() - idle0.at);
  const settleMs = idleCores > QUIET_CORES ? await settle(relay.pid, clkTck) : 0;
  const work1 = await work(relay.url); // after the outcomes' writes
  const did = work0 && work1 ? (k: keyof Work) => work1[k] - work0[k] : null;
  return {
    rate,
    seconds,
    pool: prep.pool,
    prebuildMs: prep.ms,
    scheduled: r.scheduled,
    sent: r.sent,
    notSent: r.notSent,
    answered,
    unanswered: r.unanswered,
    statuses: counts(r.status.map((s, i) => (s === 200 ? "200" : `${s} ${r.code[i]}`))),
    okPerSecond: (ok * 1000) / r.elapsedMs,
    latencyMs: { p50: pct(r.latencyMs, 50), p99: pct(r.latencyMs, 99), max: pct(r.latencyMs, 100) },
    confirmationMs: { p50: pct(delays, 50), p99: pct(delays, 99), samples: delays.length },
    fromCloseStartMs: { p50: pct(fromStart, 50), p99: pct(fromStart, 99) },
    applyMs: { p50: pct(applyMs, 50), max: pct(applyMs, 100) },
    relayCpuMsPerAnswer: cpu / Math.max(1, answered),
    relayMainCpuMsPerAnswer: mainCpu / Math.max(1, answered),
    relayDbThreadCpuMsPerAnswer: dbCpu / Math.max(1, answered),
    relayThreadsMsPerAnswer: Object.fromEntries(
      threads.filter(([, v]) => v > 0).map(([k, v]) => [k, v / Math.max(1, answered)]),
    ),
    statementsPerAnswer: did && did("statements") / Math.max(1, answered),
    rpcRequestsPerAnswer: did && did("rpcRequests") / Math.max(1, answered),
    sendsPerRequest: did && did("sends") / Math.max(1, did("sendRequests")),
    ledgerReadMs: did?.("reads") ? (1000 * did("readSeconds")) / did("reads") : null,
    relayCores: cpu / r.elapsedMs,
    localnetCores: t.localnetPid === null ? null : localnetCpu / r.elapsedMs,
    generatorCores: genCpu / r.elapsedMs,
    machineBusyPct: (100 * (m1.busy - m0.busy)) / Math.max(1, m1.total - m0.total),
    relayIdleCores: idleCores,
    settleMs,
    relayRssMb: rss,
    schedulerLagMs: { p99: r.lagP99Ms, max: r.lagMaxMs },
    elapsedMs: r.elapsedMs,
    startedAt,
    endedAt,
  };
}
