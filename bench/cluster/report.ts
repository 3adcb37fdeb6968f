/**
 * The cluster benchmark's printed report: per cluster size its start-up and background rates, one
 * row per (cluster size, rate), the errors by status, each instance's part, the other processes'
 * CPU, a comparison against one instance at the same rate, and what the instances logged.
 */
import type { LoggedProblem } from "../e2e/relay-proc.ts";
import { countsText, ms, n, table } from "../e2e/stats.ts";
import type { ClusterPhaseResult, IdleRates } from "./phase.ts";

export interface ClusterRun {
  instances: number;
  startedInMs: number;
  /** How long the pool took to spread to a fair share each, and whether it did. */
  spread: { ms: number; ok: boolean };
  /** Active mainnet channels per instance: when the phases started, and after them. */
  channelsBefore: number[];
  channelsAfter: number[];
  warmup: string;
  idle: IdleRates | null;
  exitCodes: number[];
}

export interface ClusterReport {
  header: { date: string; nproc: number; cpu: string; bun: string; commit: string; settings: string };
  runs: ClusterRun[];
  phases: ClusterPhaseResult[];
  /** Per instance ("<size> inst <id>"): its warn/error log lines, and its /v1/sponsor access log by status. */
  logs: {
    relay: string;
    problems: LoggedProblem[];
    accessStatuses: Record<string, { count: number; example: string }>;
    slowest: { durationMs: number; line: string }[];
  }[];
  errors: string[];
}

const f2 = (v: number) => (Number.isFinite(v) ? v.toFixed(2) : "-");
const f1 = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : "-");
const errorsOf = (c: Record<string, number>) =>
  countsText(Object.fromEntries(Object.entries(c).filter(([k]) => k !== "200")));
const ratio = (a: number, b: number) => (Number.isFinite(a / b) && b !== 0 ? `x${(a / b).toFixed(2)}` : "-");

function runsTable(runs: ClusterRun[]): string {
  return table(
    ["instances", "started in", "pool spread", "channels before", "after", "idle relay cores"].concat([
      "idle PG stmts/s",
      "idle Redis cmds/s",
      "round trips/s",
      "warm-up",
    ]),
    runs.map((r) => [
      n(r.instances),
      `${ms(r.startedInMs)} ms`,
      `${r.spread.ok ? "" : "NOT "}in ${ms(r.spread.ms)} ms`,
      r.channelsBefore.join("/"),
      r.channelsAfter.join("/") || "-",
      r.idle ? f2(r.idle.relayCores) : "-",
      r.idle ? f1(r.idle.statementsPerSecond) : "-",
      r.idle ? f1(r.idle.redisPerSecond) : "-",
      r.idle ? f1(r.idle.roundTripsPerSecond) : "-",
      r.warmup,
    ]),
    "lrlllrrrrl",
  );
}

function mainTable(phases: ClusterPhaseResult[]): string {
  return table(
    ["instances", "req/s", "sent", "answered", "200", "errors", "200/s", "p50 ms", "p99 ms"].concat([
      "relay CPU ms/answer",
      "relay cores",
      "PG stmts/answer",
      "Redis cmds/answer",
      "Redis round trips/answer",
    ]),
    phases.map((p) => [
      n(p.instances),
      n(p.rate),
      n(p.sent),
      n(p.answered),
      n(p.statuses["200"] ?? 0),
      n(p.answered - (p.statuses["200"] ?? 0)),
      n(Math.round(p.okPerSecond)),
      ms(p.latencyMs.p50),
      ms(p.latencyMs.p99),
      f2(p.relayCpuMsPerAnswer),
      f2(p.relayCores),
      f1(p.statementsPerAnswer),
      f1(p.redisPerAnswer),
      f1(p.roundTripsPerAnswer),
    ]),
  );
}

/** What else ran on the machine over each phase. */
function detailTable(phases: ClusterPhaseResult[]): string {
  return table(
    [
      "instances",
      "req/s",
      "not sent",
      "unanswered",
      "max ms",
      "confirm p50",
      "localnets cores",
      "generator cores",
    ].concat(["Redis cores", "rest of machine cores", "machine busy %", "relay cores after", "send lag p99"]),
    phases.map((p) => [
      n(p.instances),
      n(p.rate),
      n(p.notSent),
      n(p.unanswered),
      ms(p.latencyMs.max),
      ms(p.confirmationMs.p50),
      f2(p.localnetCores),
      f2(p.generatorCores),
      p.redisCores === null ? "-" : f2(p.redisCores),
      f2(p.restCores),
      Math.round(p.machineBusyPct).toString(),
      f2(p.relayCoresAfter) + (p.settleMs ? ` (quiet ${Math.round(p.settleMs / 1000)} s later)` : ""),
      ms(p.schedulerLagMs.p99),
    ]),
  );
}

/** Postgres and Redis per answer: as counted, less the idle rate, by statement kind; the private Redis's CPU. */
function servicesTable(phases: ClusterPhaseResult[]): string {
  return table(
    [
      "instances",
      "req/s",
      "PG stmts/answer",
      "less idle",
      "by kind",
      "ms/stmt",
      "Redis cmds/answer",
      "less idle",
    ].concat(["round trips/answer", "less idle", "cmds in scripts", "Redis CPU ms/answer", "counted over"]),
    phases.map((p) => [
      n(p.instances),
      n(p.rate),
      f1(p.statementsPerAnswer),
      f1(p.statementsPerAnswerLessIdle),
      p.statementsByKind.map((k) => `${k.kind} ${f2(k.perAnswer)} (${f1(k.ms)} ms)`).join(", ") || "-",
      f2(p.statementMs),
      f1(p.redisPerAnswer),
      f1(p.redisPerAnswerLessIdle),
      f1(p.roundTripsPerAnswer),
      f1(p.roundTripsPerAnswerLessIdle),
      f1(p.scriptCommandsPerAnswer),
      p.redisCpuMsPerAnswer === null ? "-" : f2(p.redisCpuMsPerAnswer),
      `${ms(p.countedMs)} ms`,
    ]),
    "rrrrlrrrrrrrr",
  );
}

function instanceTable(phases: ClusterPhaseResult[]): string {
  const rows = phases
    .filter((p) => p.instances > 1)
    .flatMap((p) =>
      p.perInstance.map((x) => [
        n(p.instances),
        n(p.rate),
        x.id,
        n(x.answered),
        n(x.ok),
        ms(x.p50),
        ms(x.p99),
        f2(x.cpuMsPerAnswer),
        f2(x.cores),
        f1(x.statementsPerAnswer),
        errorsOf(x.errors),
      ]),
    );
  return table(
    ["instances", "req/s", "instance", "answered", "200", "p50 ms", "p99 ms", "CPU ms/answer", "cores"].concat([
      "PG stmts/answer",
      "errors",
    ]),
    rows,
    "rrlrrrrrrrl",
  );
}

/** Each larger cluster against one instance at the same rate. */
function comparison(phases: ClusterPhaseResult[]): string[] {
  const out: string[] = [];
  for (const p of phases) {
    const base = phases.find((b) => b.instances === 1 && b.rate === p.rate);
    if (!base || p.instances === 1) continue;
    out.push(
      `  ${p.instances} vs 1 at ${n(p.rate)} req/s: 200/s ${ratio(p.okPerSecond, base.okPerSecond)}, ` +
        `p50 ${ratio(p.latencyMs.p50, base.latencyMs.p50)}, p99 ${ratio(p.latencyMs.p99, base.latencyMs.p99)}, ` +
        `relay CPU/answer ${ratio(p.relayCpuMsPerAnswer, base.relayCpuMsPerAnswer)}, ` +
        `PG/answer ${ratio(p.statementsPerAnswer, base.statementsPerAnswer)}, ` +
        `Redis/answer ${ratio(p.redisPerAnswer, base.redisPerAnswer)}, ` +
        `round trips/answer ${ratio(p.roundTripsPerAnswer, base.roundTripsPerAnswer)}`,
    );
  }
  return out;
}

export function formatClusterReport(r: ClusterReport): string {
  const h = r.header;
  const out = [
    `bench:cluster ${h.date}  nproc ${h.nproc}  cpu ${h.cpu}  bun ${h.bun}  commit ${h.commit}`,
    `settings: ${h.settings}`,
    "",
  ];
  if (r.runs.length)
    out.push(
      "Clusters (channels: active mainnet channels per instance; idle: 5 s with no load)",
      runsTable(r.runs),
      "",
    );
  if (r.phases.length) {
    out.push(
      "Open-loop load, round-robin over the instances, 1 s ledgers upstream (latency: send to answer;",
      "relay CPU summed over the instances; PG: statements every instance ran; Redis cmds: the server's commands",
      "(INFO), commands scripts ran inside Redis and background coordination included; round trips: commands the",
      "instances sent, MONITOR)",
      mainTable(r.phases),
    );
    for (const p of r.phases)
      if (p.answered > (p.statuses["200"] ?? 0))
        out.push(`  ${p.instances} inst ${n(p.rate)} req/s errors: ${errorsOf(p.statuses)}`);
    out.push(
      "",
      "Postgres and Redis per answer, from the first send to two ledgers after the last answer (PG by kind:",
      "statements per answer and their mean duration as the instances saw it, waits for a connection or lock included)",
    );
    out.push(servicesTable(r.phases), "", "The rest of the machine over each phase", detailTable(r.phases), "");
    if (r.phases.some((p) => p.instances > 1)) out.push("Per instance", instanceTable(r.phases), "");
    const cmp = comparison(r.phases);
    if (cmp.length) out.push("Against one instance at the same rate:", ...cmp, "");
  }
  const problems = r.logs.flatMap((l) => l.problems.map((p) => ({ relay: l.relay, ...p })));
  if (problems.length) {
    out.push("Relay log lines at warn and above (count, message; first example):");
    for (const p of problems) out.push(`  [${p.relay}] ${p.level} x${n(p.count)} ${p.msg}`, `      ${p.example}`);
    out.push("");
  } else if (r.logs.length) out.push("Relay log lines at warn and above: none", "");
  if (r.logs.length) {
    out.push("Relay access logs, /v1/sponsor by status (an example of each error status; the slowest request):");
    for (const l of r.logs) {
      const statuses = Object.entries(l.accessStatuses);
      out.push(`  [${l.relay}] ${statuses.map(([st, v]) => `${st} ${n(v.count)}`).join(", ") || "-"}`);
      for (const [, v] of statuses) if (v.example) out.push(`      ${v.example.slice(0, 400)}`);
      const slow = l.slowest[0];
      if (slow) out.push(`    slowest: ${ms(slow.durationMs)} ms ${slow.line.slice(0, 300)}`);
    }
    out.push("");
  }
  if (r.errors.length) out.push("Benchmark steps that failed:", ...r.errors.map((e) => `  ${e}`), "");
  return out.join("\n");
}
