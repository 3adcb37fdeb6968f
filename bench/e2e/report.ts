/**
 * The benchmark's results (also written as JSON) and their printed form: latency against a direct
 * client, the open-loop phases, confirmation delays after the ledger close, the CPU profile's hot
 * functions, and whatever the relays logged at warn level or above.
 */
import type { PhaseResult } from "./phase.ts";
import type { ProfileSummary } from "./profile.ts";
import type { Sample } from "./protocol.ts";
import type { Db, LoggedProblem } from "./relay-proc.ts";
import { countsText, ms, n, pct, table } from "./stats.ts";

export interface LatencyResult {
  db: Db;
  ledgerMs: number;
  direct: Sample[];
  relay: Sample[];
}

export interface Report {
  header: { date: string; nproc: number; cpu: string; bun: string; commit: string };
  latency: LatencyResult[];
  /** `keyed`: every request had an idempotency key. */
  phases: (PhaseResult & { db: Db; keyed?: boolean })[];
  embedded: (PhaseResult & { db: Db })[];
  /** Each fresh relay's first phase, before what is measured. */
  warmups: (PhaseResult & { relay: string })[];
  profile: { db: Db; phase: PhaseResult; summary: ProfileSummary } | null;
  /** The relay's RSS after each number of requests (sent at one rate, in consecutive phases). */
  memory: { db: Db; rate: number; points: { requests: number; answered: number; rssMb: number }[] }[];
  problems: (LoggedProblem & { relay: string })[];
  /** Per relay run: its info log lines by message, and its slowest /v1/sponsor requests. */
  relays: {
    relay: string;
    infoCounts: Record<string, number>;
    slowest: { durationMs: number; line: string }[];
    accessStatuses: Record<string, { count: number; example: string }>;
  }[];
  errors: string[];
}

const okMs = (s: Sample[]) => s.filter((x) => x.ok).map((x) => x.ms);
const ratio = (a: number, b: number) => (Number.isFinite(a / b) ? `${(a / b).toFixed(2)}x` : "-");
const errorsOf = (c: Record<string, number>) =>
  countsText(Object.fromEntries(Object.entries(c).filter(([k]) => k !== "200")));

function latencySection(rows: LatencyResult[]): string {
  const body = rows.map((r) => {
    const d = okMs(r.direct);
    const x = okMs(r.relay);
    const failed = [...r.direct, ...r.relay].filter((s) => !s.ok).map((s) => s.error);
    return [
      r.db,
      `${r.ledgerMs / 1000} s`,
      `${d.length}+${x.length}`,
      ms(pct(d, 50)),
      ms(pct(d, 99)),
      ms(pct(x, 50)),
      ms(pct(x, 99)),
      ratio(pct(x, 50), pct(d, 50)),
      ratio(pct(x, 99), pct(d, 99)),
      ms(r.relay[0]?.ms ?? Number.NaN),
      failed.length ? `${failed.length}: ${[...new Set(failed)].join("; ")}` : "0",
    ];
  });
  return table(
    ["database", "ledger", "ok samples", "direct p50", "p99", "relay p50", "p99", "relay/direct p50", "p99"].concat([
      "relay 1st",
      "failed",
    ]),
    body,
  );
}

type Row = PhaseResult & { db: Db; keyed?: boolean };

/** A row's database, marked when its requests had idempotency keys. */
const dbOf = (p: Row) => (p.keyed ? `${p.db} +keys` : p.db);
const cores = (v: number | null) => (v === null ? "-" : v.toFixed(2));

/** Outcomes and latency of each phase. */
function phaseTable(rows: Row[]): string {
  return table(
    [
      "database",
      "req/s",
      "sent",
      "answered",
      "200",
      "errors",
      "not sent",
      "unanswered",
      "200/s",
      "p50 ms",
      "p99 ms",
    ].concat(["max ms"]),
    rows.map((p) => [
      dbOf(p),
      n(p.rate),
      n(p.sent),
      n(p.answered),
      n(p.statuses["200"] ?? 0),
      n(p.answered - (p.statuses["200"] ?? 0)),
      n(p.notSent),
      n(p.unanswered),
      n(Math.round(p.okPerSecond)),
      ms(p.latencyMs.p50),
      ms(p.latencyMs.p99),
      ms(p.latencyMs.max),
    ]),
  );
}

/** What each phase cost: the relay's CPU and memory, and the other processes sharing the machine. */
function resourceTable(rows: Row[]): string {
  return table(
    [
      "database",
      "req/s",
      "relay CPU ms/answer",
      "main thread",
      "database thread",
      "relay cores",
      "idle after",
      "RSS MB",
    ].concat([
      "localnet cores",
      "generator cores",
      "machine busy %",
      "send lag p99 ms",
      "pre-build ms",
      "DB statements/answer",
      "RPC requests/answer",
      "sends/RPC request",
      "ledger read ms",
    ]),
    rows.map((p) => [
      dbOf(p),
      n(p.rate),
      p.relayCpuMsPerAnswer.toFixed(2),
      p.relayMainCpuMsPerAnswer.toFixed(2),
      p.relayDbThreadCpuMsPerAnswer ? p.relayDbThreadCpuMsPerAnswer.toFixed(2) : "-",
      cores(p.relayCores),
      cores(p.relayIdleCores) + (p.settleMs ? ` (quiet ${Math.round(p.settleMs / 1000)} s later)` : ""),
      ms(p.relayRssMb),
      cores(p.localnetCores),
      cores(p.generatorCores),
      Math.round(p.machineBusyPct).toString(),
      ms(p.schedulerLagMs.p99),
      ms(p.prebuildMs),
      p.statementsPerAnswer === null ? "-" : p.statementsPerAnswer.toFixed(2),
      p.rpcRequestsPerAnswer === null ? "-" : p.rpcRequestsPerAnswer.toFixed(2),
      p.sendsPerRequest === null ? "-" : p.sendsPerRequest.toFixed(1),
      p.ledgerReadMs === null ? "-" : p.ledgerReadMs.toFixed(0),
    ]),
  );
}

const statusLines = (rows: Row[]) =>
  rows
    .filter((p) => p.answered > (p.statuses["200"] ?? 0))
    .map((p) => `  ${dbOf(p)} ${n(p.rate)} req/s errors: ${errorsOf(p.statuses)}`);

function confirmationTable(r: Report): string {
  const row = (p: Row, network: string) => [
    dbOf(p),
    network,
    n(p.rate),
    n(p.confirmationMs.samples),
    ms(p.confirmationMs.p50),
    ms(p.confirmationMs.p99),
    ms(p.applyMs.p50),
    ms(p.applyMs.max),
    ms(p.fromCloseStartMs.p50),
    ms(p.fromCloseStartMs.p99),
  ];
  return table(
    ["database", "network", "req/s", "samples", "p50 ms", "p99 ms", "apply p50", "apply max", "start p50", "start p99"],
    [
      ...r.phases.map((p) => row(p, "upstream localnet (1 s)")),
      ...(r.profile ? [row({ ...r.profile.phase, db: r.profile.db }, "upstream, --cpu-prof")] : []),
      ...r.embedded.map((p) => row(p, "embedded mainnet (1 s)")),
    ],
  );
}

function profileSection(p: NonNullable<Report["profile"]>): string {
  const s = p.summary;
  return [
    `CPU profile of the relay (${p.db}, ${n(p.phase.rate)} req/s for ${p.phase.seconds} s, ${n(p.phase.answered)} answered): ` +
      `${n(s.samples)} samples (${ms(s.sampledMs)} ms of CPU) from the phase's first send to its last answer`,
    `   profile: ${s.file}${s.markdown ? `\n   Bun's summary of the whole run: ${s.markdown}` : ""}`,
    table(
      ["self ms", "self %", "total ms", "function", "location", "main caller"],
      s.top.map((f) => [ms(f.selfMs), f.selfPct.toFixed(1), ms(f.totalMs), f.name, f.location, f.caller]),
      "rrrlll",
    ),
    "   the same samples by owner (the package or project file of the innermost frame that has one):",
    table(
      ["ms", "%", "owner"],
      s.owners.map((o) => [ms(o.ms), o.pct.toFixed(1), o.owner]),
      "rrl",
    ),
    `   the relay's CPU time over the phase (/proc): ${ms(p.phase.relayCpuMsPerAnswer * p.phase.answered)} ms, ` +
      `${ms(p.phase.relayMainCpuMsPerAnswer * p.phase.answered)} of them on the main thread (the one sampled); ` +
      "samples also stand for time the relay was runnable but not running (a 2-core machine shared by all processes), " +
      "which lands on the frame that was running, often a socket write that woke another process",
  ].join("\n");
}

function memoryTable(r: Report): string {
  const rows = r.memory.map((m) => {
    const first = m.points[0];
    const last = m.points[m.points.length - 1];
    const growth = first && last ? `${(last.rssMb / first.rssMb).toFixed(2)}x` : "-";
    return [
      m.db,
      n(m.rate),
      ...m.points.map((p) => `${n(p.requests)} (${n(p.answered)} ok): ${n(Math.round(p.rssMb))} MB`),
      growth,
    ];
  });
  const width = Math.max(0, ...r.memory.map((m) => m.points.length));
  const heads = Array.from({ length: width }, (_, i) => (i === 0 ? "RSS after" : "then after"));
  return table(["database", "req/s", ...heads, "last / first"], rows);
}

/** Each fresh relay's first phase: what a relay just started gives while its code is cold. */
function warmupSection(rows: Report["warmups"]): string {
  return [
    "Warm-up: each relay's first phase, right after it started (cold code), before the measured ones",
    table(
      ["relay", "req/s", "sent", "200", "p50 ms", "p99 ms", "confirm p50", "confirm p99", "CPU ms/answer"],
      rows.map((p) => [
        p.relay,
        n(p.rate),
        n(p.sent),
        n(p.statuses["200"] ?? 0),
        ms(p.latencyMs.p50),
        ms(p.latencyMs.p99),
        ms(p.confirmationMs.p50),
        ms(p.confirmationMs.p99),
        p.relayCpuMsPerAnswer.toFixed(2),
      ]),
    ),
  ].join("\n");
}

export function formatReport(r: Report): string {
  const h = r.header;
  const out = [`bench:e2e ${h.date}  nproc ${h.nproc}  cpu ${h.cpu}  bun ${h.bun}  commit ${h.commit}`, ""];
  if (r.latency.length)
    out.push(
      "1. Latency, sequential pairs sent at the same instant (ms, send to answer)",
      latencySection(r.latency),
      "",
    );
  if (r.phases.length || r.profile) {
    const rows = [...r.phases, ...(r.profile ? [{ ...r.profile.phase, db: r.profile.db }] : [])];
    out.push("2. Open-loop load, 1 s ledgers, upstream localnet (latency: send to answer)", phaseTable(rows));
    out.push(...statusLines(rows), "", resourceTable(rows), "");
  }
  out.push(
    "3. Confirmation delay: answer received minus the close of the ledger it names (its publication, " +
      "transactions applied); the network's time to apply those ledgers; the delay from the start of the close",
    confirmationTable(r),
    "",
  );
  if (r.embedded.length)
    out.push(
      "   embedded runs:",
      phaseTable(r.embedded),
      ...statusLines(r.embedded),
      "",
      resourceTable(r.embedded),
      "",
    );
  if (r.profile) out.push(`4. ${profileSection(r.profile)}`, "");
  if (r.warmups.length) out.push(warmupSection(r.warmups), "");
  if (r.memory.length)
    out.push("5. The relay's RSS as requests add up (1 s ledgers, upstream localnet)", memoryTable(r), "");
  if (r.problems.length) {
    out.push("Relay log lines at warn and above (count, message; first example):");
    for (const p of r.problems) out.push(`  [${p.relay}] ${p.level} x${n(p.count)} ${p.msg}`, `      ${p.example}`);
    out.push("");
  }
  if (r.relays.length) {
    out.push(
      "Relay logs: info lines by message, /v1/sponsor access-log lines by status (an example of each error status),",
    );
    out.push("and the slowest /v1/sponsor requests:");
    for (const x of r.relays) {
      out.push(`  [${x.relay}] ${countsText(x.infoCounts)}`);
      const statuses = Object.entries(x.accessStatuses);
      out.push(`    access log: ${statuses.map(([st, v]) => `${st} ${n(v.count)}`).join(", ") || "-"}`);
      for (const [, v] of statuses) if (v.example) out.push(`      ${v.example.slice(0, 400)}`);
      for (const s of x.slowest.slice(0, 2)) out.push(`    slowest: ${ms(s.durationMs)} ms ${s.line.slice(0, 400)}`);
    }
    out.push("");
  }
  if (r.errors.length) out.push("Benchmark steps that failed:", ...r.errors.map((e) => `  ${e}`), "");
  return out.join("\n");
}
