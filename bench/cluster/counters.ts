/**
 * The counters a phase reads before and after: each instance's CPU time (/proc), its database
 * statements by kind and the seconds they took (GET /metrics: relay_db_statement_duration_seconds's
 * `_count` and `_sum`; waiting for a connection or a lock included), the Redis server's commands
 * processed (INFO stats total_commands_processed: every client of that Redis, the instances'
 * background coordination, the commands scripts run and the INFO calls included), and the relay's
 * Redis round trips (`monitor.ts`).
 */
import { Redis } from "ioredis";
import { cpuMs } from "../e2e/procs.ts";
import type { RelayProc } from "../e2e/relay-proc.ts";
import { RoundTrips } from "./monitor.ts";

const STATEMENTS = /^relay_db_statement_duration_seconds_(count|sum)(?:\{statement="([^"]*)"\})? ([0-9.e+-]+)$/gm;

export const sum = (v: number[]) => v.reduce((a, b) => a + b, 0);

/**
 * Statements the instance has run since it started, by kind (select, insert, update, delete, with,
 * other), and the seconds they took.
 */
export async function statements(relay: RelayProc): Promise<Statements> {
  const res = await fetch(`${relay.url}/metrics`);
  if (!res.ok) throw new Error(`GET /metrics answered ${res.status}`);
  const out: Statements = { count: {}, seconds: {} };
  for (const m of (await res.text()).matchAll(STATEMENTS))
    add(m[1] === "sum" ? out.seconds : out.count, m[2] ?? "", Number(m[3]));
  return out;
}

/** Statements by kind: how many, and the seconds they took. */
export interface Statements {
  count: Record<string, number>;
  seconds: Record<string, number>;
}

const add = (to: Record<string, number>, k: string, v: number) => {
  to[k] = (to[k] ?? 0) + v;
};

/** The Redis server's commands processed (INFO, one connection of its own) and the relay's round trips (MONITOR). */
export class RedisCommands {
  private constructor(
    private readonly redis: Redis,
    /** Set its `prefix` to the running cluster's. */
    readonly trips: RoundTrips,
  ) {}

  static async open(url: string): Promise<RedisCommands> {
    const redis = new Redis(url, { maxRetriesPerRequest: 1 });
    redis.on("error", () => {}); // each command reports its own failure
    return new RedisCommands(redis, await RoundTrips.open(url));
  }

  /** INFO's commands processed, and the round trips and script commands counted so far. */
  async total(): Promise<{ commands: number; trips: number; script: number }> {
    const m = /total_commands_processed:(\d+)/.exec(await this.redis.info("stats"));
    if (!m) throw new Error("INFO stats has no total_commands_processed");
    return { commands: Number(m[1]), trips: this.trips.client, script: this.trips.script };
  }

  close(): void {
    this.redis.disconnect();
    this.trips.close();
  }
}

export interface Snapshot {
  at: number;
  /** Per instance. */
  cpuMs: number[];
  statements: number[];
  /** Summed over the instances. */
  byKind: Statements;
  /** INFO's commands processed; the relay's round trips and the commands its scripts ran (MONITOR). */
  redis: number;
  trips: number;
  script: number;
}

/** The counters now: statements and Redis first (network calls), CPU last (just before the clock). */
export async function snapshot(instances: RelayProc[], redis: RedisCommands, clkTck: number): Promise<Snapshot> {
  const [stmts, commands] = await Promise.all([Promise.all(instances.map(statements)), redis.total()]);
  const byKind: Statements = { count: {}, seconds: {} };
  for (const s of stmts) {
    for (const [k, v] of Object.entries(s.count)) add(byKind.count, k, v);
    for (const [k, v] of Object.entries(s.seconds)) add(byKind.seconds, k, v);
  }
  return {
    at: performance.now(),
    cpuMs: instances.map((r) => cpuMs(r.pid, clkTck)),
    statements: stmts.map((s) => sum(Object.values(s.count))),
    byKind,
    redis: commands.commands,
    trips: commands.trips,
    script: commands.script,
  };
}
