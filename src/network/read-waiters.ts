/**
 * Waiters on what the ledger watcher has read: each waits for a condition on the ledgers read so
 * far (a ledger passed, a transaction's bounds passed), checked after each good poll, with one timer
 * of its own. A waiter resolves true when its condition holds, false on its timeout, its cancel or
 * the watcher's stop.
 */
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
