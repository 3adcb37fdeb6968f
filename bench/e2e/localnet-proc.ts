/**
 * The upstream network: a standalone localnet (`src/localnet/main.ts`) in its own process, like a
 * quickstart container. Its stdout is one JSON line per ledger closed, with the instants (epoch ms)
 * its close began and it was published; they are kept in `closes` for confirmation delays.
 */
import { type Child, freePort, spawnChild, stopChild } from "./procs.ts";
import { LedgerCloses } from "./ledger-closes.ts";

interface LocalnetLine {
  msg: string;
  ledger: number;
  closedAtMs: number;
  appliedAtMs: number;
  rpc: string;
  friendbot: string;
}

export const BENCH_PASSPHRASE = "Bench Network ; 2026";

export interface LocalnetProc {
  rpc: string;
  friendbot: string;
  passphrase: string;
  ledgerMs: number;
  closes: LedgerCloses;
  child: Child;
  stop(): Promise<void>;
}

/**
 * `passphrase`: the network's (default BENCH_PASSPHRASE; the cluster benchmark uses the public ones);
 * `maxTxSetSize`: classic operations per ledger (default 100,000: no surge); `sorobanTxs`: Soroban
 * transactions per ledger (default 2,000).
 */
export async function startLocalnet(
  ledgerMs: number,
  passphrase = BENCH_PASSPHRASE,
  maxTxSetSize = 100_000,
  sorobanTxs = 2_000,
): Promise<LocalnetProc> {
  const port = freePort();
  const closes = new LedgerCloses();
  let listening: (v: { rpc: string; friendbot: string }) => void = () => {};
  const ready = new Promise<{ rpc: string; friendbot: string }>((resolve) => {
    listening = resolve;
  });
  const child = spawnChild(
    [process.execPath, "run", "src/localnet/main.ts"],
    {
      LOCALNET_PORT: String(port),
      LEDGER_CLOSE_MS: String(ledgerMs),
      LOCALNET_MAX_TX_SET_SIZE: String(maxTxSetSize),
      LOCALNET_PASSPHRASE: passphrase,
      LOCALNET_SOROBAN_TXS_PER_LEDGER: String(sorobanTxs),
    },
    (line) => {
      if (!line.startsWith("{")) return;
      const j = JSON.parse(line) as LocalnetLine;
      if (j.msg === "ledger closed") closes.add(j.ledger, j.closedAtMs, j.appliedAtMs);
      else if (j.msg === "localnet listening") listening(j);
    },
  );
  const urls = await Promise.race([
    ready,
    child.exited.then((code) => {
      throw new Error(`localnet exited (${code}): ${child.stderrTail.join("\n")}`);
    }),
    Bun.sleep(30_000).then(() => {
      throw new Error("localnet did not start within 30 s");
    }),
  ]);
  return {
    ...urls,
    passphrase,
    ledgerMs,
    closes,
    child,
    stop: async () => void (await stopChild(child)),
  };
}
