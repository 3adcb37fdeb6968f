/**
 * Ledger close instants as a network logs them (ledger number → epoch ms), from the standalone
 * localnet's stdout or the relay's own log for its embedded network; `waitFor` resolves once a
 * given number of further ledgers has closed.
 */
export class LedgerCloses {
  readonly at = new Map<number, number>();
  latest = 0;
  private waiters: { ledger: number; resolve: () => void }[] = [];

  add(ledger: number, closedAtMs: number): void {
    this.at.set(ledger, closedAtMs);
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

  /** Answer instant minus close instant, ms, for each (answeredAt, ledger) pair whose ledger is known. */
  delays(answeredAt: number[], ledgers: number[]): number[] {
    const out: number[] = [];
    for (let i = 0; i < ledgers.length; i++) {
      const closed = this.at.get(ledgers[i]!);
      if (ledgers[i] && closed !== undefined) out.push(answeredAt[i]! - closed);
    }
    return out;
  }
}
