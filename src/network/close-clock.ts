/**
 * When the next ledger closes, as a watcher polling for it sees it: recent ledgers' sightings (when
 * each was first seen, and when the poll before it started, when it had not closed) and the median
 * interval between ledgers. The watcher sleeps until shortly before the expected close, then polls
 * fast until the ledger is seen.
 */
/** How long before a ledger's expected close the watcher starts polling fast. */
const EARLY_MS = 150;
/** Recent ledger intervals kept for the estimate. */
const INTERVAL_SAMPLES = 9;
/** Recent ledgers whose sightings bound the next close (few: real intervals vary). */
const SIGHTINGS = 4;

/** A ledger first seen at `at` (ms) by a poll; the poll before started at `after` (0: unknown), when it had not closed. */
export interface Sighting {
  sequence: number;
  at: number;
  after: number;
}

/**
 * When ledger `next` is expected to close (ms), from recent sightings and the interval between
 * ledgers: each sighting bounds it from both sides; the latest lower bound, capped by the earliest
 * upper one (the bounds disagree when intervals vary).
 */
export function expectedClose(sightings: Sighting[], next: number, interval: number): number {
  let earliest = -Infinity;
  let latest = Infinity;
  for (const s of sightings) {
    earliest = Math.max(earliest, s.after + (next - s.sequence) * interval);
    latest = Math.min(latest, s.at + (next - s.sequence) * interval);
  }
  return Math.min(earliest, latest);
}

/** The median (the lower of the two middle samples: late sightings make intervals too long more than too short). */
const median = (xs: number[]): number | null =>
  xs.length ? [...xs].sort((a, b) => a - b)[(xs.length - 1) >> 1]! : null;

/** Interval samples needed before only those between two tight sightings are kept. */
const BOOTSTRAP_SAMPLES = 3;

/**
 * How long to sleep before the next poll (ms): `fastPollMs` from EARLY_MS before the expected close
 * until the ledger is seen; before that, at most `pollMs`, and while hashes wait at most a quarter
 * of the interval (a close expected too late then costs a quarter of a ledger, not a whole one).
 * Without an interval yet, `pollMs`.
 */
export function pollDelay(o: {
  now: number;
  sightings: Sighting[];
  next: number;
  interval: number | null;
  pollMs: number;
  fastPollMs: number;
  waiting: boolean;
}): number {
  const fast = Math.min(o.fastPollMs, o.pollMs);
  if (o.interval === null || !o.sightings.length) return o.pollMs;
  const longest = o.waiting ? Math.max(fast, Math.min(o.pollMs, o.interval / 4)) : o.pollMs;
  const wakeAt = expectedClose(o.sightings, o.next, o.interval) - EARLY_MS;
  return Math.min(longest, Math.max(fast, wakeAt - o.now));
}

export class CloseClock {
  /** Recent times between ledgers (ms), as first seen. */
  private readonly intervals: number[] = [];
  /** Recent ledgers' sightings: each bounds when the next ledger closes, from both sides. */
  private readonly sightings: Sighting[] = [];

  /**
   * A new latest ledger, seen at `now` by a poll; the poll before started at `after` (0: unknown).
   * The time since the previous one is an interval sample when exactly one closed in between and,
   * once a few samples are in, when both were seen tightly (within EARLY_MS of the poll before):
   * the time between two late sightings says little about the time between two closes.
   */
  seen(sequence: number, now: number, after: number): void {
    const prev = this.sightings[this.sightings.length - 1];
    const tight = (s: Sighting) => s.after > 0 && s.at - s.after <= EARLY_MS;
    const sighting = { sequence, at: now, after };
    if (prev && sequence === prev.sequence + 1) {
      if (this.intervals.length < BOOTSTRAP_SAMPLES || (tight(prev) && tight(sighting))) {
        this.intervals.push(now - prev.at);
        if (this.intervals.length > INTERVAL_SAMPLES) this.intervals.shift();
      }
    }
    this.sightings.push(sighting);
    if (this.sightings.length > SIGHTINGS) this.sightings.shift();
  }

  /** How long to sleep before the next poll (ms): see `pollDelay`. */
  nextDelay(o: { now: number; next: number; pollMs: number; fastPollMs: number; waiting: boolean }): number {
    return pollDelay({ ...o, sightings: this.sightings, interval: median(this.intervals) });
  }
}
