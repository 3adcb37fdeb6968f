/**
 * One watcher per network confirms every pending submission: when a new ledger closes it reads
 * that ledger's transactions once (getTransactions, paged) and resolves all waiting hashes, instead
 * of a poll loop per request. A waiter is matched by a transaction's hash or, for a fee-bump, by
 * its inner transaction's hash: whichever wrapping of an inner transaction lands resolves it. It
 * also tracks the network's latest ledger for health and fees.
 *
 * Every answer is checked before it is used (RpcClient), so a malformed or hung upstream costs one
 * failed poll (logged, shown in `lastError`) and never moves the cursor: the next good poll scans
 * from where the last good one ended.
 */
import { RpcFailure, messageOf, type RpcClient } from "./rpc-client.ts";
import { LatestLedger, TransactionsPage } from "./rpc-schemas.ts";
import { cursorAt, LedgerSizes, PAGE, type Position, toidLow } from "./tx-pages.ts";
import { ClearingRates } from "./clearing-rates.ts";
import { CloseClock } from "./close-clock.ts";
import { pastBounds, ReadWaiters, type ReadWait, type ValidUntil } from "./read-waiters.ts";
import { HashWaiters, type Confirmed, type ReadTx } from "./hash-waiters.ts";
import type { Static } from "@sinclair/typebox";
import type { Logger } from "../kernel/log.ts";
import type { WatcherMetrics } from "../kernel/metrics.ts";

export type { Confirmed, ValidUntil };

type Page = Static<typeof TransactionsPage>;
type PageTx = NonNullable<Page["transactions"]>[number];
/** A page asked for; `at`: where the page before must end for it to be used (fetched ahead), null: after the cursor. */
interface Fetch {
  at: Position | null;
  page: Promise<Page>;
}

/** Polling cadence, logs, the network's name, and where confirmation delays and reads are counted. */
type WatcherOptions = { pollMs: number; fastPollMs: number; log: Logger; network: string; metrics?: WatcherMetrics };
export class LedgerWatcher {
  /** Who waits for which hash. */
  private readonly pending = new HashWaiters();
  /** Who waits for a ledger, or for bounds, to be passed by what is read. */
  private readonly readWaiters = new ReadWaiters();
  /** When ledgers were first seen, and when the next one is expected. */
  private readonly clock = new CloseClock();
  /** When the last good poll started. */
  private lastPollStartedAt = 0;
  /** The last ledger whose transactions were read (or passed over while nobody waited). */
  private last = 0;
  /** The close time of a ledger read up to `last` (unix seconds; that of `last` when the upstream said it). */
  private lastCloseTime: bigint | null = null;
  /** Times ledgers were passed over unread while hashes waited (the network would not page them). */
  private skips = 0;
  /** Where the last transaction read left getTransactions' pagination; null: none to follow. */
  private cursor: string | null = null;
  /** The low bits of the upstream's TOID cursors; undefined: not known yet, null: not TOIDs. */
  private toidLow: bigint | null | undefined = undefined;
  private readonly sizes = new LedgerSizes();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private polling: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  /** Latest ledger seen and when it was first seen (ms). */
  latestLedger = 0;
  latestSeenAt = 0;
  /** The last poll's failure; null after a good poll. */
  lastError: string | null = null;
  /** When the last poll ended (ms), good or not. */
  lastPollAt = 0;
  /** When the current run of failed polls began (ms); null after a good poll. */
  failingSince: number | null = null;
  /** When a poll last failed (ms); 0 if none has. */
  lastFailureAt = 0;
  private loggedAt = 0;
  /** What the ledgers read cleared at (the fee strategy's view of the market). */
  readonly clearing = new ClearingRates();

  constructor(
    private readonly client: RpcClient,
    private readonly opts: WatcherOptions,
  ) {}

  get pollMs(): number {
    return this.opts.pollMs;
  }

  /** Starts watching from the current ledger; an unreachable network is retried on every poll. */
  async start(): Promise<void> {
    await this.poll();
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.readWaiters.stop();
  }

  /**
   * Watches for `hash` (a transaction's, or a fee-bump's inner hash): the promise resolves when it
   * is in a closed ledger, or with null after `timeoutMs` or `cancel()`. Register before sending,
   * so that no ledger can be missed.
   */
  watch(hash: string, timeoutMs: number): { promise: Promise<Confirmed | null>; cancel: () => void } {
    return this.pending.watch(hash, timeoutMs);
  }

  /**
   * Resolves when a ledger after `ledger` has been read (true), or after `timeoutMs` or `stop()`
   * (false).
   */
  passed(ledger: number, timeoutMs: number): Promise<boolean> {
    return this.readWaiters.wait(() => this.last > ledger, timeoutMs).promise;
  }

  /**
   * Resolves true once the ledgers read (every transaction in them seen) reach past `bounds`: no
   * later ledger can include a transaction with them. A transaction sent after the watcher's
   * `readMark()` is known to be in none of those ledgers only if none was skipped since: then it
   * never resolves true. False after `timeoutMs`, `cancel()` or `stop()`.
   */
  beyond(bounds: ValidUntil, mark: number, timeoutMs: number): ReadWait {
    const none = bounds.maxTime === 0n && bounds.maxLedger === 0;
    return this.readWaiters.wait(() => this.skips === mark && this.past(bounds), none ? 0 : timeoutMs);
  }

  /** A mark for `beyond`: ledgers skipped after it are not counted as read. */
  readMark(): number {
    return this.skips;
  }

  /**
   * Whether the ledgers read reach past `bounds` (close times only grow: a bound passed stays
   * passed). Behind the network by up to a poll, never ahead of it.
   */
  past(b: ValidUntil): boolean {
    return pastBounds(b, this.last, this.lastCloseTime);
  }

  /** Polls now (e.g. when an embedded network says a ledger closed). */
  poke(): void {
    if (this.stopped) return;
    if (this.polling) {
      this.again = true;
      return;
    }
    this.polling = this.poll().finally(() => {
      this.polling = null;
      if (this.again) {
        this.again = false;
        this.poke();
      }
    });
  }

  /**
   * Polls at most `pollMs` apart, and every `fastPollMs` from shortly before the next ledger is
   * expected until it is seen: a close is noticed within about `fastPollMs` while the upstream
   * gets a few calls per ledger. A ledger closed after the poll before the one that saw it started
   * and before it was seen: with the median interval, each recent ledger bounds the next close from
   * both sides; the latest lower bound (capped by the earliest upper one) is expected. A ledger seen
   * late (a slow answer, a poll long after the close) thus makes the next window wider, not later.
   */
  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.poke();
      this.schedule();
    }, this.nextDelay(Date.now()));
  }

  private nextDelay(now: number): number {
    return this.clock.nextDelay({
      now,
      next: this.latestLedger + 1,
      pollMs: this.opts.pollMs,
      fastPollMs: this.opts.fastPollMs,
      waiting: this.pending.size > 0,
    });
  }

  /** A new latest ledger, seen at `now` by a poll; the poll before started at `after` (0: unknown). */
  private seen(sequence: number, now: number, after: number): void {
    this.clock.seen(sequence, now, after);
    this.latestLedger = sequence;
    this.latestSeenAt = now;
  }

  private async poll(): Promise<void> {
    const startedAt = Date.now();
    try {
      if (this.pending.size && this.cursor !== null) await this.read({}, startedAt);
      else await this.probe(startedAt);
      this.lastError = null;
      this.failingSince = null;
      this.readWaiters.check();
    } catch (e) {
      const message = messageOf(e);
      // an outage is logged when it starts, when its cause changes, and every 10 s: not at every poll
      if (this.failingSince === null || message !== this.lastError || Date.now() - this.loggedAt > 10_000) {
        this.loggedAt = Date.now();
        this.opts.log.warn(
          {
            network: this.opts.network,
            err: message,
            failingForMs: this.failingSince ? Date.now() - this.failingSince : 0,
          },
          "ledger watcher poll failed",
        );
      }
      this.lastError = message;
      this.lastFailureAt = Date.now();
      this.failingSince ??= this.lastFailureAt;
    } finally {
      this.lastPollAt = Date.now();
    }
  }

  /**
   * Reads the latest ledger; with hashes waiting, the transactions of the ledgers closed since the
   * last one read (which leaves a cursor to follow). Nobody waiting: the ledgers are passed over
   * unread, and the cursor with them.
   */
  private async probe(startedAt: number): Promise<void> {
    const { sequence } = await this.client.call("getLatestLedger", {}, LatestLedger);
    this.sighted(sequence, startedAt);
    if (this.last === 0) this.last = sequence; // the first answer: watch from here on
    if (sequence <= this.last) return;
    if (!this.pending.size) {
      this.last = sequence;
      this.cursor = null;
      return;
    }
    await this.read({ startLedger: this.last + 1 }, startedAt);
  }

  /**
   * Reads transactions page by page (from `start`, or after the cursor) until a page is short, and
   * resolves the waiting ones: then every ledger up to the latest the network reported is read.
   * After a full page, the pages a ledger as large as the recent ones would still fill are fetched
   * together when the upstream's cursors are TOIDs (`tx-pages.ts`); each is used in order, only if
   * the page before ended where it starts. Ledgers the network no longer keeps (or refuses to page)
   * are skipped: their waiters time out and their submissions are looked up by hash.
   */
  private async read(start: { startLedger?: number }, startedAt: number): Promise<void> {
    const first =
      start.startLedger === undefined
        ? { pagination: { cursor: this.cursor, limit: PAGE } }
        : { ...start, pagination: { limit: PAGE } };
    let queue: Fetch[] = [{ at: null, page: this.page(first) }];
    let end: Position | null = null;
    let firstAt = 0; // when the first page that held transactions was read
    for (;;) {
      const f = queue.shift()!;
      if (f.at && !(end && end.ledger === f.at.ledger && end.order === f.at.order)) {
        queue = [this.next()]; // fetched ahead, but the page before did not end where it starts
        continue;
      }
      let page;
      try {
        page = await f.page;
      } catch (e) {
        if (f.at) {
          queue = [this.next()];
          continue;
        }
        if (!(e instanceof RpcFailure && e.kind === "rpc_error")) throw e;
        this.opts.log.warn(
          { network: this.opts.network, from: this.last + 1, err: e.message },
          "ledgers skipped: the network would not page them",
        );
        this.cursor = null;
        if (start.startLedger !== undefined && this.latestLedger > this.last) {
          this.last = this.latestLedger;
          this.skips++; // what a waiter learns from the ledgers read no longer covers these
        }
        return;
      }
      this.sighted(page.latestLedger, startedAt);
      const txs = page.transactions ?? [];
      for (const t of txs) {
        this.clearing.see(t.ledger, t.resultXdr);
        this.resolve(t);
      }
      // the cursor is opaque: kept from a page that held transactions (an empty one may not place it)
      if (txs.length) this.cursor = page.cursor;
      end = txs.length ? this.placed(txs, page.cursor) : null;
      if (txs.length && !firstAt) firstAt = performance.now();
      if (txs.length < PAGE) {
        if (page.latestLedger >= this.last && page.latestLedgerCloseTimestamp !== undefined)
          this.lastCloseTime = BigInt(page.latestLedgerCloseTimestamp);
        this.last = Math.max(this.last, page.latestLedger);
        if (firstAt) this.opts.metrics?.ledgerRead(this.opts.network, (performance.now() - firstAt) / 1000);
        return;
      }
      if (!queue.length) queue = this.ahead(end);
    }
  }

  /**
   * Where a page ended, if the upstream's cursors are TOIDs (learnt from every page: one that is
   * not turns fetching ahead off for good); null otherwise.
   */
  private placed(txs: PageTx[], cursor: string): Position | null {
    for (const t of txs) if (t.applicationOrder) this.sizes.see({ ledger: t.ledger, order: t.applicationOrder });
    const last = txs[txs.length - 1]!;
    const end = last.applicationOrder ? { ledger: last.ledger, order: last.applicationOrder } : null;
    const low = end && toidLow(cursor, end);
    if (low === null || (this.toidLow !== undefined && low !== this.toidLow)) this.toidLow = null;
    else if (this.toidLow === undefined) this.toidLow = low;
    return this.toidLow === null ? null : end;
  }

  /** The page after the cursor. */
  private next(): Fetch {
    return { at: null, page: this.page({ pagination: { cursor: this.cursor, limit: PAGE } }) };
  }

  /** The page after a full one that ended at `end`, and those after it that a recent ledger's size would fill. */
  private ahead(end: Position | null): Fetch[] {
    const low = this.toidLow;
    if (!end || low === null || low === undefined) return [this.next()];
    const more = this.sizes.pagesAfter(end).slice(1);
    const page = (at: Position) => this.page({ pagination: { cursor: cursorAt(at, low), limit: PAGE } });
    return [this.next(), ...more.map((at) => ({ at, page: page(at) }))];
  }

  /** One getTransactions call; a page fetched ahead and then not wanted fails unheard. */
  private page(params: Record<string, unknown>): Promise<Page> {
    const p = this.client.call("getTransactions", params, TransactionsPage);
    p.catch(() => {});
    return p;
  }

  /** A latest ledger reported by a poll that started at `startedAt`. */
  private sighted(sequence: number, startedAt: number): void {
    if (sequence > this.latestLedger) this.seen(sequence, Date.now(), this.lastPollStartedAt);
    this.lastPollStartedAt = startedAt;
  }

  private resolve(t: ReadTx & { createdAt?: unknown }): void {
    try {
      // the ledger's close time (unix seconds, as the network reports it) to now: when the waiting requests learn their outcome
      if (this.pending.found(t) && this.opts.metrics && Number(t.createdAt) > 0)
        this.opts.metrics.confirmationDelay(this.opts.network, Date.now() / 1000 - Number(t.createdAt));
    } catch {
      this.opts.log.warn(
        { network: this.opts.network, hash: t.txHash },
        "a transaction with an undecodable result was skipped",
      );
    }
  }
}
