/**
 * Reading a busy ledger's transactions several pages at once. getTransactions pages with a cursor
 * the RPC calls opaque; stellar-rpc's is a TOID, (ledger << 32) | (application order << 12) | low
 * bits, naming the last transaction of a page. The watcher checks every page it reads against
 * that shape and, only while each agrees, computes the cursors of the pages after a full one
 * itself and fetches those a ledger as large as the recent ones would fill, together. A page so
 * fetched is used only if the page before it ended exactly where its cursor points: then it is
 * the page the RPC's own cursor would have given, and what is read is the same as page by page.
 */

/** Transactions per page: stellar-rpc's highest limit. */
export const PAGE = 200;

/** A transaction's place: its ledger and its 1-based application order in it. */
export interface Position {
  ledger: number;
  order: number;
}

/** Recent ledgers whose sizes bound how many pages are fetched ahead. */
const SIZES = 4;

/** The low bits of `cursor` if it names `last` as a TOID does; null if it does not. */
export function toidLow(cursor: string, last: Position): bigint | null {
  let c: bigint;
  try {
    c = BigInt(cursor);
  } catch {
    return null;
  }
  const low = c - ((BigInt(last.ledger) << 32n) | (BigInt(last.order) << 12n));
  return low >= 0n && low < 4096n ? low : null;
}

/** The cursor that names `p`, with the low bits the upstream's cursors carry. */
export const cursorAt = (p: Position, low: bigint): string =>
  ((BigInt(p.ledger) << 32n) | (BigInt(p.order) << 12n) | low).toString();

/** How many transactions the recent ledgers held (the highest application order seen in each). */
export class LedgerSizes {
  private readonly done: number[] = [];
  private current: Position = { ledger: 0, order: 0 };

  see(p: Position): void {
    if (p.ledger !== this.current.ledger) {
      if (this.current.ledger) this.done.push(this.current.order);
      if (this.done.length > SIZES) this.done.shift();
      this.current = { ...p };
    } else if (p.order > this.current.order) this.current.order = p.order;
  }

  /** Positions of the pages to fetch after a full page that ended at `end` (none: unknown). */
  pagesAfter(end: Position): Position[] {
    const expected = Math.max(0, ...this.done);
    const pages: Position[] = [];
    for (let order = end.order; order < expected; order += PAGE) pages.push({ ledger: end.ledger, order });
    return pages;
  }
}
