/**
 * Ledger closes as a network logs them (ledger number → epoch ms), from the standalone localnet's
 * stdout or the relay's own log for its embedded network: when the close began (its close time)
 * and when the ledger was published (its transactions applied, readable through the RPC; a ledger
 * is not closed before its results are). `waitFor` resolves once more ledgers have closed.
 */
export class LedgerCloses {
  readonly at = new Map<number, { closedAt: number; appliedAt: number }>();
  latest = 0;
  private waiters: { ledger: number; resolve: () => void }[] = [];

  add(ledger: number, closedAtMs: number, appliedAtMs: number): void {
    this.at.set(ledger, { closedAt: closedAtMs, appliedAt: appliedAtMs });
    if (ledger > this.latest) this.latest = ledger;
    this.waiters = this.waiters.filter((w) => {
      if (ledger < w.ledger) return true;
      w.resolve();
      return false;
    });
  }

  /** Resolves once `n` more ledgers have closed (rejects after `timeoutMs`). */
  waitFor(n: number, timeoutMs = 60_000): Promise<void> {
    const ledger = this.latest + n;
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`ledger ${ledger} did not close within ${timeoutMs} ms`)),
        timeoutMs,
      );
      this.waiters.push({
        ledger,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }

  /**
   * Answer instant minus the ledger's publication (or, `from` "closeStart", the start of its
   * close), ms, for each (answeredAt, ledger) pair whose ledger is known.
   */
  delays(answeredAt: number[], ledgers: number[], from: "published" | "closeStart" = "published"): number[] {
    const out: number[] = [];
    for (let i = 0; i < ledgers.length; i++) {
      const l = ledgers[i] ? this.at.get(ledgers[i]!) : undefined;
      if (l) out.push(answeredAt[i]! - (from === "published" ? l.appliedAt : l.closedAt));
    }
    return out;
  }

  /** How long the network took to apply each of these ledgers (ms), once per ledger. */
  applyMs(ledgers: number[]): number[] {
    return [...new Set(ledgers)].flatMap((seq) => {
      const l = this.at.get(seq);
      return l ? [l.appliedAt - l.closedAt] : [];
    });
  }
}
