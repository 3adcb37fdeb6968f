/**
 * One measured open-loop phase against a cluster: the generator sends round-robin over the
 * instances' URLs (`relayUrls`). Read over the phase (first send to last answer, or the cap): each
 * instance's CPU time, that of the localnets, the generator and a private Redis, and the machine's
 * busy share. Postgres statements (every instance's /metrics), Redis commands (the server's INFO
 * stats) and the relay's Redis round trips (MONITOR) are read from just before the first send to two
 * mainnet ledgers after the last answer, so that the work the answers leave behind (journal,
 * checkpoints) is counted; "less idle" subtracts the background rate measured with no load
 * (`measureIdle`) over that span. "Rest of the machine" is its busy CPU less every process measured
 * (this orchestrator included): Postgres, and whatever else runs there. Then, like the e2e phases,
 * the next phase waits for the instances to quiet down.
 */
import { availableParallelism } from "node:os";
import type { Generator } from "../e2e/generator-client.ts";
import type { LoadCounts } from "../e2e/phase.ts";
import { cpuMs, machineTicks } from "../e2e/procs.ts";
import type { RelayProc } from "../e2e/relay-proc.ts";
import { counts, pct } from "../e2e/stats.ts";
import type { ClusterProc, Nets } from "./cluster-proc.ts";
import { type RedisCommands, snapshot, sum } from "./counters.ts";

/** Background rates of a cluster with no load. */
export interface IdleRates {
  seconds: number;
  /** All instances' CPU, in cores. */
  relayCores: number;
  statementsPerSecond: number;
  redisPerSecond: number;
  roundTripsPerSecond: number;
}

export async function measureIdle(
  instances: RelayProc[],
  redis: RedisCommands,
  clkTck: number,
  seconds: number,
): Promise<IdleRates> {
  const a = await snapshot(instances, redis, clkTck);
  await Bun.sleep(seconds * 1000);
  const b = await snapshot(instances, redis, clkTck);
  const s = (b.at - a.at) / 1000;
  return {
    seconds: s,
    relayCores: (sum(b.cpuMs) - sum(a.cpuMs)) / 1000 / s,
    statementsPerSecond: (sum(b.statements) - sum(a.statements)) / s,
    redisPerSecond: (b.redis - a.redis) / s,
    roundTripsPerSecond: (b.trips - a.trips) / s,
  };
}

/** One instance's part of a phase. */
export interface InstanceShare {
  id: string;
  answered: number;
  ok: number;
  /** Error answers by "<status> <code>". */
  errors: Record<string, number>;
  p50: number;
  p99: number;
  cpuMsPerAnswer: number;
  cores: number;
  statementsPerAnswer: number;
}

export interface ClusterPhaseResult extends LoadCounts {
  instances: number;
  /** Answer received minus the close of the ledger a 200 names (mainnet localnet). */
  confirmationMs: { p50: number; p99: number };
  /** Summed over the instances. */
  relayCpuMsPerAnswer: number;
  relayCores: number;
  statementsPerAnswer: number;
  /** By statement kind: per answer, and the mean ms the instances saw (a connection or lock waited for included). */
  statementsByKind: { kind: string; perAnswer: number; ms: number }[];
  /** A statement's mean duration, ms. */
  statementMs: number;
  redisPerAnswer: number;
  /** The relay's Redis round trips (commands it sent; MONITOR), and the commands its scripts ran in Redis. */
  roundTripsPerAnswer: number;
  scriptCommandsPerAnswer: number;
  statementsPerAnswerLessIdle: number;
  redisPerAnswerLessIdle: number;
  roundTripsPerAnswerLessIdle: number;
  /** The span Postgres and Redis were counted over, ms. */
  countedMs: number;
  /** Both localnets, the generator, the private Redis (null: the shared one), in cores; the machine's busy share, %. */
  localnetCores: number;
  generatorCores: number;
  redisCores: number | null;
  redisCpuMsPerAnswer: number | null;
  machineBusyPct: number;
  /** The machine's busy CPU less every process above and this orchestrator, in cores. */
  restCores: number;
  /** All instances' CPU over the two ledgers after the phase, in cores; how much longer they took to quiet down. */
  relayCoresAfter: number;
  settleMs: number;
  schedulerLagMs: { p99: number; max: number };
  elapsedMs: number;
  perInstance: InstanceShare[];
}

export interface ClusterTarget {
  gen: Generator;
  cluster: ClusterProc;
  apiKey: string;
  nets: Nets;
  redis: RedisCommands;
  /** The private Redis server's process; null: the shared one. */
  redisPid: number | null;
  clkTck: number;
  idle: IdleRates;
  /** PrepareCmd.poolSeconds. */
  poolSeconds: number;
}

/** Over this many cores above the idle rate, the instances are still busy. */
const QUIET_CORES = 0.15;
const MAX_SETTLE_MS = 60_000;

export async function runClusterPhase(
  t: ClusterTarget,
  rate: number,
  seconds: number,
  capMs: number,
): Promise<ClusterPhaseResult> {
  const { gen, cluster, nets, redis, clkTck } = t;
  const relays = cluster.instances;
  const relayCpu = () => sum(relays.map((r) => cpuMs(r.pid, clkTck)));
  await gen.refresh();
  const prep = await gen.prepare({
    relayUrl: relays[0]!.url,
    relayUrls: relays.map((r) => r.url),
    apiKey: t.apiKey,
    rate,
    seconds,
    poolSeconds: t.poolSeconds,
  });
  const others = [nets.testnet.child.pid, nets.mainnet.child.pid, gen.pid, t.redisPid];
  const selfMs = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  const othersCpu = () => [...others.map((pid) => (pid === null ? 0 : cpuMs(pid, clkTck))), selfMs()];
  const s0 = await snapshot(relays, redis, clkTck);
  const o0 = othersCpu();
  const m0 = machineTicks();
  const r = await gen.run(capMs);
  const cpu1 = relays.map((x) => cpuMs(x.pid, clkTck));
  const o1 = othersCpu();
  const m1 = machineTicks();
  const after0 = { cpu: sum(cpu1), at: performance.now() };
  await nets.mainnet.closes.waitFor(2);
  const s1 = await snapshot(relays, redis, clkTck);
  const relayCoresAfter = (sum(s1.cpuMs) - after0.cpu) / (s1.at - after0.at);
  let settleMs = 0;
  if (relayCoresAfter > t.idle.relayCores + QUIET_CORES) {
    const t0 = performance.now();
    while (performance.now() - t0 < MAX_SETTLE_MS) {
      const c0 = relayCpu();
      await Bun.sleep(1000);
      if (relayCpu() - c0 < (t.idle.relayCores + QUIET_CORES) * 1000) break;
    }
    settleMs = performance.now() - t0;
  }

  const answered = r.status.length;
  const ok = r.status.filter((s) => s === 200).length;
  const per = Math.max(1, answered);
  const cpu = sum(cpu1) - sum(s0.cpuMs);
  const countedS = (s1.at - s0.at) / 1000;
  const stmts = sum(s1.statements) - sum(s0.statements);
  const delta = (x: Record<string, number>, y: Record<string, number>, k: string) => (x[k] ?? 0) - (y[k] ?? 0);
  const byKind = Object.keys(s1.byKind.count)
    .map((kind) => {
      const c = delta(s1.byKind.count, s0.byKind.count, kind);
      return { kind, perAnswer: c / per, ms: (1000 * delta(s1.byKind.seconds, s0.byKind.seconds, kind)) / c };
    })
    .filter((k) => k.perAnswer > 0)
    .sort((a, b) => b.perAnswer - a.perAnswer);
  const stmtSeconds = sum(Object.values(s1.byKind.seconds)) - sum(Object.values(s0.byKind.seconds));
  const [testnetMs, mainnetMs, genMs, redisMs, selfCpuMs] = o1.map((v, i) => v - o0[i]!) as number[];
  const busyCores = (availableParallelism() * (m1.busy - m0.busy)) / Math.max(1, m1.total - m0.total);
  const commands = s1.redis - s0.redis;
  const delays = nets.mainnet.closes.delays(r.answeredAt, r.ledger);
  const via = r.via ?? r.status.map(() => 0);
  const perInstance = cluster.ids.map((id, k): InstanceShare => {
    const mine = via.flatMap((v, i) => (v === k ? [i] : []));
    const instanceCpu = cpu1[k]! - s0.cpuMs[k]!;
    return {
      id,
      answered: mine.length,
      ok: mine.filter((i) => r.status[i] === 200).length,
      errors: counts(mine.filter((i) => r.status[i] !== 200).map((i) => `${r.status[i]} ${r.code[i]}`)),
      p50: pct(
        mine.map((i) => r.latencyMs[i]!),
        50,
      ),
      p99: pct(
        mine.map((i) => r.latencyMs[i]!),
        99,
      ),
      cpuMsPerAnswer: instanceCpu / Math.max(1, mine.length),
      cores: instanceCpu / r.elapsedMs,
      statementsPerAnswer: (s1.statements[k]! - s0.statements[k]!) / Math.max(1, mine.length),
    };
  });
  return {
    instances: relays.length,
    rate,
    seconds,
    pool: prep.pool,
    scheduled: r.scheduled,
    sent: r.sent,
    notSent: r.notSent,
    answered,
    unanswered: r.unanswered,
    statuses: counts(r.status.map((s, i) => (s === 200 ? "200" : `${s} ${r.code[i]}`))),
    okPerSecond: (ok * 1000) / r.elapsedMs,
    latencyMs: { p50: pct(r.latencyMs, 50), p99: pct(r.latencyMs, 99), max: pct(r.latencyMs, 100) },
    confirmationMs: { p50: pct(delays, 50), p99: pct(delays, 99) },
    relayCpuMsPerAnswer: cpu / per,
    relayCores: cpu / r.elapsedMs,
    statementsPerAnswer: stmts / per,
    statementsByKind: byKind,
    statementMs: (1000 * stmtSeconds) / Math.max(1, stmts),
    redisPerAnswer: commands / per,
    roundTripsPerAnswer: (s1.trips - s0.trips) / per,
    scriptCommandsPerAnswer: (s1.script - s0.script) / per,
    roundTripsPerAnswerLessIdle: (s1.trips - s0.trips - t.idle.roundTripsPerSecond * countedS) / per,
    statementsPerAnswerLessIdle: (stmts - t.idle.statementsPerSecond * countedS) / per,
    redisPerAnswerLessIdle: (commands - t.idle.redisPerSecond * countedS) / per,
    countedMs: s1.at - s0.at,
    localnetCores: (testnetMs! + mainnetMs!) / r.elapsedMs,
    generatorCores: genMs! / r.elapsedMs,
    redisCores: t.redisPid === null ? null : redisMs! / r.elapsedMs,
    redisCpuMsPerAnswer: t.redisPid === null ? null : redisMs! / per,
    machineBusyPct: (100 * (m1.busy - m0.busy)) / Math.max(1, m1.total - m0.total),
    restCores: busyCores - (cpu + testnetMs! + mainnetMs! + genMs! + redisMs! + selfCpuMs!) / r.elapsedMs,
    relayCoresAfter,
    settleMs,
    schedulerLagMs: { p99: r.lagP99Ms, max: r.lagMaxMs },
    elapsedMs: r.elapsedMs,
    perInstance,
  };
}
