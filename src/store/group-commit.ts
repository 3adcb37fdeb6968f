/**
 * Group commit: calls that arrive while a batch is being written wait and are written together, in
 * one statement (or one transaction), by the next batch. Each caller still gets its own answer once
 * its batch is durable, so "written before it is sent" holds per request; a busy relay pays one
 * round trip per batch instead of one per request, an idle one pays nothing extra (a lone call is
 * written at the end of its event-loop turn, with the calls the same turn made). A batch that fails is written again one call at a time, so one bad call fails
 * alone.
 */
export class GroupCommit<I, O> {
  private queue: { item: I; at: number; resolve: (o: O) => void; reject: (e: unknown) => void }[] = [];
  private running = 0;
  private scheduled = false;
  private deferred: ReturnType<typeof setTimeout> | null = null;

  /**
   * `write` writes a batch and answers one result per item, in order. `key`: calls with the same
   * key never share a batch (a statement may not touch one row twice).
   */
  constructor(
    private readonly write: (items: I[]) => Promise<O[]>,
    private readonly opts: {
      key?: (item: I) => string;
      maxBatch?: number;
      /** An item's size (bytes it writes); a batch holds at most `maxBytes` of them (one item at least). */
      size?: (item: I) => number;
      maxBytes?: number;
      concurrency?: number;
      /**
       * Lower priority: while this answers true (another writer is busy), calls wait, up to
       * `maxDeferMs` after the oldest arrived, and then go together.
       */
      deferWhile?: () => boolean;
      maxDeferMs?: number;
    } = {},
  ) {}

  /** Calls queued or being written. */
  get busy(): boolean {
    return this.queue.length > 0 || this.running > 0;
  }

  run(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, at: Date.now(), resolve, reject });
      // the first call of an event-loop turn waits for the turn's other calls (requests read from the same poll)
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          this.pump();
        });
      }
    });
  }

  private pump(): void {
    if (this.defer()) return;
    while (this.queue.length && this.running < (this.opts.concurrency ?? 1)) {
      const batch = this.take();
      this.running++;
      void this.flush(batch).finally(() => {
        this.running--;
        this.pump();
      });
    }
  }

  /** Whether to wait (another writer is busy and the oldest call may wait longer): pumps again later. */
  private defer(): boolean {
    const { deferWhile, maxDeferMs = 0 } = this.opts;
    const oldest = this.queue[0];
    if (!deferWhile || !oldest || Date.now() - oldest.at >= maxDeferMs || !deferWhile()) return false;
    this.deferred ??= setTimeout(() => {
      this.deferred = null;
      this.pump();
    }, 2);
    return true;
  }

  /**
   * The next batch: queued calls in order, at most maxBatch (and maxBytes), no key twice (the rest stay
   * queued).
   */
  private take(): typeof this.queue {
    const max = this.opts.maxBatch ?? 500;
    const { key, size, maxBytes = Number.POSITIVE_INFINITY } = this.opts;
    if (!key && !size) return this.queue.splice(0, max);
    const keys = new Set<string>();
    const batch: typeof this.queue = [];
    const rest: typeof this.queue = [];
    let bytes = 0;
    for (const call of this.queue) {
      const k = key?.(call.item);
      const b = size?.(call.item) ?? 0;
      const fits = batch.length === 0 || bytes + b <= maxBytes;
      if (batch.length < max && fits && (k === undefined || !keys.has(k))) {
        if (k !== undefined) keys.add(k);
        bytes += b;
        batch.push(call);
      } else rest.push(call);
    }
    this.queue = rest;
    return batch;
  }

  private async flush(batch: typeof this.queue): Promise<void> {
    try {
      const out = await this.write(batch.map((c) => c.item));
      for (const [i, c] of batch.entries()) c.resolve(out[i]!);
    } catch (e) {
      if (batch.length === 1) return batch[0]!.reject(e);
      for (const c of batch) await this.write([c.item]).then(([o]) => c.resolve(o!), c.reject);
    }
  }
}
