/**
 * `bun run bench:path`: what one request costs the relay, and the least it could cost here.
 * 1. HTTP: a closed loop (BENCH_CONCURRENCY requests in flight, BENCH_SECONDS each) against servers
 *    in processes of their own that answer 400: a bare Bun.serve, an Elysia app, and the relay's
 *    whole HTTP path (a keyed request with a malformed envelope). It prints each server's
 *    main-thread CPU per request (from /proc) and its requests per second.
 * 2. The sponsoring stages alone, each in a tight loop in this process (its code and data in the
 *    caches): decoding, the project and pool actors' events, the fee-bump and its signature; and what
 *    each allocates on the JavaScript heap per request (in a process of its own, from the GC's log).
 * The database, the RPC and the ledger watcher's share are in bench:e2e (statements and RPC
 * requests per answer) and bench:store.
 */
import { cleanup, cpuMs, stopChild } from "./e2e/procs.ts";
import { n, table } from "./e2e/stats.ts";
import { bareServer, elysiaServer, relayServer, type Server } from "./path/servers.ts";
import { stageCosts, stageList } from "./path/stages.ts";
import { allocatedKb } from "./path/allocation.ts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const clkTck = Number(Bun.spawnSync(["getconf", "CLK_TCK"]).stdout.toString().trim()) || 100;
const body = JSON.stringify({ transaction: "AAAA", network: "mainnet" });

/** Closed-loop load for `seconds`: how many requests were answered, and their statuses. */
async function load(s: Server, seconds: number): Promise<{ answered: number; statuses: Set<number> }> {
  const end = Date.now() + seconds * 1000;
  const statuses = new Set<number>();
  let answered = 0;
  const headers = { "content-type": "application/json", ...s.headers };
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (Date.now() < end) {
        const r = await fetch(`${s.url}/v1/sponsor`, { method: "POST", headers, body });
        await r.arrayBuffer();
        statuses.add(r.status);
        answered++;
      }
    }),
  );
  return { answered, statuses };
}

async function measure(s: Server): Promise<string[]> {
  await load(s, Math.min(3, SECONDS)); // warm-up: the JIT compiles the hot path first
  const [main0, all0] = [cpuMs(s.child.pid, clkTck, true), cpuMs(s.child.pid, clkTck)];
  const { answered, statuses } = await load(s, SECONDS);
  const [main, all] = [cpuMs(s.child.pid, clkTck, true) - main0, cpuMs(s.child.pid, clkTck) - all0];
  if (statuses.size !== 1 || !statuses.has(400)) throw new Error(`${s.name} answered ${[...statuses]}, not 400`);
  const us = (ms: number) => String(Math.round((ms * 1000) / answered));
  return [s.name, n(Math.round(answered / SECONDS)), us(main), us(all)];
}

try {
  console.log(`bench:path ${new Date().toISOString()}  ${CONCURRENCY} in flight, ${SECONDS} s each\n`);
  const rows: string[][] = [];
  for (const start of [bareServer, elysiaServer, relayServer]) {
    const s = await start();
    try {
      rows.push(await measure(s));
    } finally {
      await stopChild(s.child);
    }
  }
  console.log("1. HTTP: POST /v1/sponsor answered 400, closed loop, the server in its own process");
  console.log(table(["server", "requests/s", "main thread us/request", "process us/request"], rows));
  const stages = await stageCosts();
  const kb = (await stageList()).map((s, i) => allocatedKb(i, s.per));
  console.log("\n2. The sponsoring stages alone, each in a tight loop (best of 5 rounds), and what each allocates");
  console.log(
    table(
      ["stage", "us", "KB allocated"],
      stages.map((s, i) => [s.stage, s.us.toFixed(1), kb[i]!.toFixed(1)]),
    ),
  );
  const sum = stages.reduce((a, s) => a + s.us, 0);
  console.log(`   sum ${sum.toFixed(1)} us, ${kb.reduce((a, k) => a + k, 0).toFixed(1)} KB`);
} finally {
  await cleanup();
}
