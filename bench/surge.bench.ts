/**
 * `bun run bench:surge`: the relay under surge pricing. A standalone localnet with a small ledger
 * (BENCH_CAPACITY operations, BENCH_LEDGER_MS) in its own process, the relay in another (pointed at
 * it as its mainnet upstream), competing traffic from ordinary accounts at BENCH_LOAD times the
 * ledger's capacity with a realistic spread of bids, the relay's sponsored traffic at a steady
 * rate, and a direct client at the SDK's default fee beside it. Per strategy, a steady phase and a
 * spike (competing load from zero to 3x at one ledger's close). Options: bench/surge/settings.ts.
 */
import { Keypair } from "@stellar/stellar-sdk";
import { startLocalnet } from "./e2e/localnet-proc.ts";
import { cleanup } from "./e2e/procs.ts";
import { projectKey, startRelay } from "./e2e/relay-proc.ts";
import { fundUsers } from "./surge/accounts.ts";
import { LedgerBook } from "./surge/ledgers.ts";
import { RelayTraffic } from "./surge/relay-traffic.ts";
import { type PhaseData, printReport } from "./surge/report.ts";
import { surgeSettings } from "./surge/settings.ts";
import { CompetingLoad, type DirectResult, directSend } from "./surge/traffic.ts";

const s = surgeSettings();
const perSecond = (s.capacity * 1000) / s.ledgerMs; // a ledger's capacity in transactions per second
console.log(
  `bench:surge: ledger ${s.capacity} ops every ${s.ledgerMs} ms, competing load ${s.load}x (${perSecond * s.load} tx/s), ` +
    `relay ${s.relayRate} tx/s, strategies ${s.strategies.join(", ")}, steady ${s.seconds} s, spike ${s.spikeSeconds} s`,
);

try {
  const net = await startLocalnet(s.ledgerMs, undefined, s.capacity);
  const book = new LedgerBook(net.rpc, net.passphrase);
  await book.start();
  const relayUsers = Math.max(40, Math.ceil(s.relayRate * 15));
  const directUsers = Math.max(20, Math.ceil(s.relayRate * 8));
  const t0 = Date.now();
  const all = await fundUsers(
    net.rpc,
    net.friendbot,
    net.passphrase,
    s.accounts + relayUsers + directUsers + 1,
    Math.max(1, Math.min(99, s.capacity - 1)),
  );
  const sink = all.pop()!.key.publicKey;
  const competing = all.slice(0, s.accounts);
  const mine = all.slice(s.accounts, s.accounts + relayUsers);
  const direct = all.slice(s.accounts + relayUsers);
  const funder = Keypair.random();
  await fetch(`${net.friendbot}?addr=${funder.publicKey()}`);
  console.log(`${all.length + 1} accounts funded in ${((Date.now() - t0) / 1000).toFixed(0)} s`);

  const relay = await startRelay({
    db: "pglite",
    upstream: { rpc: net.rpc, passphrase: net.passphrase, funderSecret: funder.secret() },
  });
  const apiKey = await projectKey(relay);
  const projects = await relay.admin<{ projects: { id: string; name: string }[] }>("GET", "/projects");
  const projectId = projects.projects.find((p) => p.name === "bench-e2e")!.id;
  const load = new CompetingLoad(net.rpc, book, competing, sink, net.passphrase);
  load.start();

  const phases: PhaseData[] = [];
  const ledgers = (n: number) => book.waitFor(book.latest + n);
  /** Runs one phase: relay and direct traffic at the steady rate, the competing load set by `shape`. */
  const phase = async (name: string, strategy: string, seconds: number, shape: () => Promise<number>) => {
    const latest = () => Math.max(net.closes.latest, book.latest);
    const traffic = new RelayTraffic(relay.url, apiKey, net.rpc, book, mine, sink, net.passphrase, latest);
    const directResults: Promise<DirectResult | null>[] = [];
    const directTimer = setInterval(
      () => directResults.push(directSend(net.rpc, book, direct, sink, net.passphrase, latest)),
      1000 / Math.max(0.1, s.relayRate),
    );
    traffic.rate = s.relayRate;
    traffic.start();
    const from = await shape();
    const sent0 = load.sent;
    const acc0 = load.accepted;
    const started = Date.now();
    await Bun.sleep(seconds * 1000);
    const competingNow = {
      sent: load.sent - sent0,
      accepted: load.accepted - acc0,
      seconds: (Date.now() - started) / 1000,
    };
    clearInterval(directTimer);
    load.rate = 0;
    const to = book.latest;
    await traffic.stop();
    const directDone = (await Promise.all(directResults)).filter((d): d is DirectResult => d !== null);
    await ledgers(2);
    // only what was sent from the phase's first ledger on
    const relayResults = traffic.results.filter((r) => r.sentLedger >= from);
    phases.push({
      name,
      strategy,
      from,
      to,
      relay: relayResults,
      direct: directDone.filter((d) => d.sentLedger >= from),
      competing: competingNow,
    });
    console.log(`${name} / ${strategy}: ${relayResults.length} sponsored, ledgers ${from + 1}..${to}`);
  };

  for (const strategy of s.strategies) {
    if (strategy !== "none")
      await relay.admin("PATCH", `/projects/${projectId}`, { policy: { feeStrategy: strategy } });
    await phase("steady", strategy, s.seconds, async () => {
      load.rate = s.load * perSecond;
      await ledgers(3); // the queue fills first
      return book.latest;
    });
    await ledgers(4); // drained
    await phase("spike", strategy, s.spikeSeconds, async () => {
      await ledgers(3); // relay traffic alone on empty ledgers
      await ledgers(1);
      load.rate = 3 * perSecond; // from zero to 3x at this ledger's close
      return book.latest;
    });
    await ledgers(4);
  }
  load.stop();
  book.stop();
  console.log("");
  printReport(book, phases, s.capacity, net.closes);
  const problems = [...relay.problems.values()].filter((p) => p.level !== "warn" || !p.msg.includes("LOCAL"));
  if (problems.length)
    console.log(
      `\nrelay log problems: ${problems.map((p) => `${p.level} "${p.msg}" x${p.count}, e.g. ${p.example.slice(0, 300)}`).join("; ")}`,
    );
  await relay.stop();
  await net.stop();
} finally {
  await cleanup();
}
process.exit(0);
