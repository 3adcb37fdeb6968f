/**
 * Requests that arrive close together go on together. Left alone, Bun runs each request as far as it
 * can go before it starts the next: the whole request path (routing, auth, the project actor,
 * decoding, the error envelope, logging) runs once per request with other code in between, and on a
 * small machine most of its time goes to fetching that code and its data again. A /v1 request waits
 * here before its key is read; the requests of one wait then resume one after another in arrival
 * order, so each stage runs for all of them back to back, and what they ask of the actors, the
 * database and the network goes as one batch.
 *
 * The wait is the end of the event-loop turn (setImmediate: after the turn's I/O), unless the relay is
 * busy: while requests arrive on average closer than a quarter of `windowMs` apart, the first of a
 * batch waits `windowMs` for those after it (a wait costs a busy relay a few milliseconds and saves it
 * CPU on every stage; docs/performance.md has both). An idle relay, or a windowMs of 0, never waits
 * longer than the turn; nor does a read (GET), whose cost a wait would not lower.
 */

/** The arrivals so far: the last one's time and the running mean of the gaps between them (ms). */
export interface Arrivals {
  last: number;
  meanGapMs: number;
}

/** A busy relay's batch is expected to gather at least this many requests in its window. */
const BATCH = 4;
/** Each arrival moves the mean gap this share of the way to its own gap. */
const WEIGHT = 1 / 8;

/** Before the first arrival, or after a long pause: as idle as a gap is ever counted. */
export const idleArrivals = (windowMs: number): Arrivals => ({
  last: Number.NEGATIVE_INFINITY,
  meanGapMs: idleGap(windowMs),
});

const idleGap = (windowMs: number) => Math.max(1, windowMs) * 10 * BATCH;

/** The arrivals after one more at `now`, and whether the batch it starts should wait `windowMs`. */
export function arrive(a: Arrivals, now: number, windowMs: number): { arrivals: Arrivals; busy: boolean } {
  const gap = Math.min(now - a.last, idleGap(windowMs));
  const meanGapMs = a.meanGapMs + (gap - a.meanGapMs) * WEIGHT;
  return { arrivals: { last: now, meanGapMs }, busy: windowMs > 0 && meanGapMs * BATCH <= windowMs };
}

/** A promise resolved when `schedule` calls back, after `forget` (its holder drops it: the next caller gets a new one). */
function shared(schedule: (go: () => void) => unknown, forget: () => void): Promise<void> {
  return new Promise<void>((resolve) =>
    schedule(() => {
      forget();
      resolve();
    }),
  );
}

export class Gathering {
  private batch: Promise<void> | null = null;
  private turn: Promise<void> | null = null;
  private arrivals: Arrivals;

  constructor(
    private readonly windowMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.arrivals = idleArrivals(windowMs);
  }

  /** Resolves when this request's batch goes on; every caller of one batch shares one promise. */
  wait(): Promise<void> {
    const { arrivals, busy } = arrive(this.arrivals, this.now(), this.windowMs);
    this.arrivals = arrivals;
    // a batch forming is joined; the first request of the next one decides how long it waits
    this.batch ??= shared(busy ? (go) => setTimeout(go, this.windowMs) : setImmediate, () => {
      this.batch = null;
    });
    return this.batch;
  }

  /**
   * Resolves at the end of the turn, busy or not, for a request that costs too little to be worth a
   * wait (a read): it goes on with the other such requests of its turn, and is not counted as an arrival.
   */
  endOfTurn(): Promise<void> {
    this.turn ??= shared(setImmediate, () => {
      this.turn = null;
    });
    return this.turn;
  }
}
