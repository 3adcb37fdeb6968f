/**
 * The benchmark's steps, each filling its part of the report; a step that fails is recorded in
 * `report.errors` and the others still run.
 * - `fastNetwork`: a standalone localnet closing a ledger every second; per database a relay
 *   against it: latency pairs, then the open-loop phases; then the profiled relay.
 * - `slowNetwork`: the same with 5 s ledgers, latency pairs only.
 * - `embeddedNetwork`: per database a relay with its own embedded mainnet (1 s ledgers) and a
 *   moderate open-loop phase, for the confirmation delay without a network hop.
 * - `memoryGrowth`: per database a relay against the 1 s standalone localnet, sent requests at one
 *   rate in consecutive phases; its RSS is read after each (e.g. after 10,000 and 100,000 in all).
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { Keypair } from "@stellar/stellar-sdk";
import type { Generator } from "./generator-client.ts";
import { type LocalnetProc, startLocalnet } from "./localnet-proc.ts";
import { type PhaseResult, runPhase } from "./phase.ts";
import { summarizeProfile } from "./profile.ts";
import { type Db, projectKey, type RelayOpts, type RelayProc, startRelay } from "./relay-proc.ts";
import type { Report } from "./report.ts";
import type { Settings } from "./settings.ts";
import { n } from "./stats.ts";

export interface Ctx {
  s: Settings;
  gen: Generator;
  report: Report;
  clkTck: number;
  resultsDir: string;
}

/** Progress on stderr (stdout is the report). */
export const say = (msg: string) => console.error(`[${new Date().toISOString().slice(11, 19)}] ${msg}`);

async function step(ctx: Ctx, what: string, fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (e) {
    const msg = `${what}: ${e instanceof Error ? e.message : String(e)}`;
    say(`FAILED ${msg}`);
    ctx.report.errors.push(msg);
  }
}

/** Starts a relay, runs `fn` with it and its project's key, stops it and keeps what it logged. */
async function withRelay(
  ctx: Ctx,
  label: string,
  opts: RelayOpts,
  fn: (relay: RelayProc, key: string) => Promise<void>,
): Promise<void> {
  say(`${label}: starting the relay`);
  let relay: RelayProc;
  try {
    relay = await startRelay(opts);
  } catch (e) {
    // src/ may be mid-edit in a working tree: one more try a minute later
    say(`${label}: the relay did not start (${e instanceof Error ? e.message : e}); retrying in 60 s`);
    await Bun.sleep(60_000);
    relay = await startRelay(opts);
  }
  try {
    await fn(relay, await projectKey(relay));
  } finally {
    say(`${label}: stopping the relay`);
    const code = await relay.stop();
    if (code !== 0) ctx.report.errors.push(`${label}: the relay exited with code ${code}`);
    for (const p of relay.problems.values()) ctx.report.problems.push({ relay: label, ...p });
    ctx.report.relays.push({
      relay: label,
      infoCounts: Object.fromEntries(relay.infoCounts),
      slowest: relay.slowest,
      accessStatuses: Object.fromEntries(relay.accessStatuses),
    });
  }
}

async function upstreamOpts(net: LocalnetProc, db: Db, cpuProfDir?: string): Promise<RelayOpts> {
  const funder = Keypair.random();
  const res = await fetch(`${net.friendbot}?addr=${funder.publicKey()}`);
  if (!res.ok) throw new Error(`friendbot answered ${res.status} for the relay's funder`);
  return { db, upstream: { rpc: net.rpc, passphrase: net.passphrase, funderSecret: funder.secret() }, cpuProfDir };
}

async function latency(ctx: Ctx, relay: RelayProc, key: string, db: Db, ledgerMs: number, pairs: number) {
  if (pairs === 0) return;
  say(`${db}: ${pairs} latency pairs at ${ledgerMs / 1000} s ledgers`);
  await ctx.gen.refresh();
  const r = await ctx.gen.latency({ relayUrl: relay.url, apiKey: key, pairs, ledgerMs });
  ctx.report.latency.push({ db, ledgerMs, ...r });
}

/** One open-loop phase; `net` null: the relay's embedded network; `keyed`: with idempotency keys. */
async function phase(
  ctx: Ctx,
  relay: RelayProc,
  key: string,
  net: LocalnetProc | null,
  rate: number,
  seconds: number,
  keyed = false,
) {
  say(`  ${rate} req/s for ${Math.round(seconds * 10) / 10} s${keyed ? ", each with an idempotency key" : ""}`);
  const target = {
    gen: ctx.gen,
    relay,
    apiKey: key,
    closes: net ? net.closes : relay.closes,
    localnetPid: net ? net.child.pid : null,
    clkTck: ctx.clkTck,
    keyed,
  };
  const p = await runPhase(target, rate, seconds, ctx.s.capMs);
  say(`  -> ${p.answered}/${p.sent} answered, ${p.statuses["200"] ?? 0} ok, p50 ${Math.round(p.latencyMs.p50)} ms`);
  return p;
}

/** A fresh relay's first phase (cold code), reported apart from the measured ones. */
async function warmup(ctx: Ctx, label: string, relay: RelayProc, key: string, net: LocalnetProc | null) {
  const w = ctx.s.warmup;
  if (!w) return;
  say(`${label}: warm-up`);
  ctx.report.warmups.push({ relay: label, ...(await phase(ctx, relay, key, net, w.rate, w.seconds)) });
}

export async function fastNetwork(ctx: Ctx): Promise<void> {
  const { s, gen, report } = ctx;
  say("1 s ledgers: starting the standalone localnet");
  const net = await startLocalnet(1000);
  try {
    await gen.init(net.rpc, net.friendbot);
    say(`funding ${s.accounts} users`);
    const f = await gen.fund(s.accounts);
    say(`funded ${f.accounts} users in ${Math.round(f.ms)} ms`);
    for (const db of s.dbs)
      await step(ctx, `${db}, 1 s ledgers`, async () =>
        withRelay(ctx, `${db} upstream 1 s`, await upstreamOpts(net, db), async (relay, key) => {
          await warmup(ctx, `${db} upstream 1 s`, relay, key, net);
          await latency(ctx, relay, key, db, 1000, s.pairsFast);
          say(`${db}: open-loop phases`);
          for (const rate of s.rates)
            report.phases.push({ db, ...(await phase(ctx, relay, key, net, rate, s.seconds)) });
          if (s.keyedRate)
            report.phases.push({
              db,
              keyed: true,
              ...(await phase(ctx, relay, key, net, s.keyedRate, s.seconds, true)),
            });
        }),
      );
    const rate = s.profileRate;
    if (rate !== null)
      await step(ctx, `profile (${s.profileDb})`, async () => {
        const dir = join(ctx.resultsDir, "cpu-profile");
        mkdirSync(dir, { recursive: true });
        const done: { phase?: PhaseResult } = {};
        await withRelay(
          ctx,
          `${s.profileDb} --cpu-prof`,
          await upstreamOpts(net, s.profileDb, dir),
          async (relay, key) => {
            await warmup(ctx, `${s.profileDb} --cpu-prof`, relay, key, net);
            done.phase = await phase(ctx, relay, key, net, rate, s.seconds);
          },
        );
        // the profile is written when the relay exits (withRelay waited for that)
        if (done.phase)
          report.profile = {
            db: s.profileDb,
            phase: done.phase,
            summary: summarizeProfile(dir, done.phase.startedAt, done.phase.endedAt),
          };
      });
  } finally {
    await net.stop();
  }
}

export async function slowNetwork(ctx: Ctx): Promise<void> {
  const { s, gen } = ctx;
  say("5 s ledgers: starting the standalone localnet");
  const net = await startLocalnet(5000);
  try {
    await gen.init(net.rpc, net.friendbot);
    await gen.fund(100);
    for (const db of s.dbs)
      await step(ctx, `${db}, 5 s ledgers`, async () =>
        withRelay(ctx, `${db} upstream 5 s`, await upstreamOpts(net, db), (relay, key) =>
          latency(ctx, relay, key, db, 5000, s.pairsSlow),
        ),
      );
  } finally {
    await net.stop();
  }
}

export async function embeddedNetwork(ctx: Ctx): Promise<void> {
  const { s, gen, report } = ctx;
  for (const db of s.dbs)
    await step(ctx, `${db}, embedded mainnet`, () =>
      withRelay(ctx, `${db} embedded`, { db, embeddedLedgerMs: 1000 }, async (relay, key) => {
        const base = `${relay.url}/localnet/mainnet`;
        await gen.init(`${base}/rpc`, `${base}/friendbot`);
        const rate = Math.max(s.embeddedRate, s.warmup?.rate ?? 0);
        await gen.fund(Math.max(100, Math.ceil((rate * 3) / 100) * 100));
        await warmup(ctx, `${db} embedded`, relay, key, null);
        say(`${db}: open-loop phase on the embedded mainnet`);
        report.embedded.push({
          db,
          ...(await phase(ctx, relay, key, null, s.embeddedRate, s.embeddedSeconds)),
        });
      }),
    );
}

export async function memoryGrowth(ctx: Ctx): Promise<void> {
  const { s, gen, report } = ctx;
  say("memory: starting the standalone localnet (1 s ledgers)");
  const net = await startLocalnet(1000);
  try {
    await gen.init(net.rpc, net.friendbot);
    await gen.fund(Math.ceil((s.memoryRate * 3) / 100) * 100);
    for (const db of s.dbs)
      await step(ctx, `${db}, memory`, async () =>
        withRelay(ctx, `${db} memory`, await upstreamOpts(net, db), async (relay, key) => {
          let sent = 0;
          const points: { requests: number; answered: number; rssMb: number }[] = [];
          let answered = 0;
          for (const after of s.memoryAfter) {
            say(`${db}: memory, requests ${n(sent + 1)} to ${n(after)} at ${n(s.memoryRate)} req/s`);
            const p = await phase(ctx, relay, key, net, s.memoryRate, (after - sent) / s.memoryRate);
            sent = after;
            answered += p.statuses["200"] ?? 0;
            points.push({ requests: after, answered, rssMb: p.relayRssMb });
          }
          report.memory.push({ db, rate: s.memoryRate, points });
        }),
      );
  } finally {
    await net.stop();
  }
}
