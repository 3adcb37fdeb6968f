/**
 * The order the event feed releases events in: by id, each once, never past a gap at once.
 *
 * Event ids come from a sequence (bigserial), taken when a row is inserted, but a row is visible
 * only once its transaction commits: on Postgres, two transactions that insert at once can commit
 * in the other order, so id 11 may be visible before id 10. A reader that moved past 11 would never
 * see 10. So an id after a gap is held back until the gap fills, or until the gap has been open for
 * `graceMs` (measured from the moment the first id after it was seen): an insert rolled back leaves
 * a gap that never fills, and the feed must go on.
 *
 * Pure (no I/O, the time is given): the feed reads `id > cursor` in id order and offers what it read.
 */
export class EventOrder<T extends { id: bigint }> {
  /** The last id released (or skipped): the next read starts after it. */
  cursor: bigint;
  /** When each id held back (after a gap) was first seen. */
  private seenAt = new Map<bigint, number>();
  /** Gaps given up on since the last call of `takeSkipped` (for the logs). */
  private skipped: { from: bigint; to: bigint }[] = [];

  constructor(
    cursor: bigint,
    private readonly graceMs: number,
  ) {
    this.cursor = cursor;
  }

  /**
   * Offers rows read with id > cursor, in id order, at time `now` (ms). Answers those released, in
   * id order, and moves the cursor past them; the rest are held back, to be offered again.
   */
  offer(rows: readonly T[], now: number): T[] {
    const released: T[] = [];
    const held = new Map<bigint, number>();
    for (const row of rows) {
      if (row.id <= this.cursor || held.has(row.id)) continue;
      const firstSeen = this.seenAt.get(row.id) ?? now;
      const next = this.cursor + 1n;
      if (!held.size && (row.id === next || now - firstSeen >= this.graceMs)) {
        if (row.id !== next) this.skipped.push({ from: next, to: row.id - 1n });
        released.push(row);
        this.cursor = row.id;
      } else held.set(row.id, firstSeen);
    }
    this.seenAt = held;
    return released;
  }

  /** How many rows are held back after a gap. */
  get holding(): number {
    return this.seenAt.size;
  }

  /** The gaps skipped since the last call (each once). */
  takeSkipped(): { from: bigint; to: bigint }[] {
    return this.skipped.splice(0);
  }
}
