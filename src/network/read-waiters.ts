/**
 * Waiters on what the ledger watcher has read: each waits for a condition on the ledgers read so
 * far (a ledger passed, a transaction's bounds passed), checked after each good poll, with one timer
 * of its own. A waiter resolves true when its condition holds, false on its timeout, its cancel or
 * the watcher's stop.
 */
/**
 * The last moment a transaction may be included (its preconditions): no ledger closing after
 * `maxTime` (unix seconds; 0: none), none from `maxLedger` on (0: none).
 */
export interface ValidUntil {
  maxTime: bigint;
  maxLedger: number;
}

/**
 * Whether ledgers read up to `last`, the last of which closed at `closeTime` (unix seconds; null:
 * unknown), reach past `b`: stellar-core refuses a transaction in a ledger that closes after its
 * maxTime, or whose sequence is maxLedger or more.
 */
export function pastBounds(b: ValidUntil, last: number, closeTime: bigint | null): boolean {
  const time = b.maxTime > 0n && closeTime !== null && closeTime > b.maxTime;
  return time || (b.maxLedger > 0 && last + 1 >= b.maxLedger);
}

export interface ReadWait {
  promise: Promise<boolean>;
  cancel(): void;
}

const settled = (ok: boolean): ReadWait => ({ promise: Promise.resolve(ok), cancel: () => {} });

export class ReadWaiters {
  private readonly waiting = new Set<{ holds: () => boolean; done: (ok: boolean) => void }>();
  private stopped = false;

  wait(holds: () => boolean, timeoutMs: number): ReadWait {
    if (holds()) return settled(true);
    if (timeoutMs <= 0 || this.stopped) return settled(false);
    let done!: (ok: boolean) => void;
    const promise = new Promise<boolean>((resolve) => {
      const w = {
        holds,
        done: (ok: boolean) => {
          clearTimeout(t);
          this.waiting.delete(w);
          resolve(ok);
        },
      };
      const t = setTimeout(() => w.done(false), timeoutMs);
      this.waiting.add(w);
      done = w.done;
    });
    return { promise, cancel: () => done(false) };
  }

  /** After a good poll: those whose condition now holds resolve. */
  check(): void {
    for (const w of this.waiting) if (w.holds()) w.done(true);
  }

  stop(): void {
    this.stopped = true;
    for (const w of this.waiting) w.done(false);
  }
}
