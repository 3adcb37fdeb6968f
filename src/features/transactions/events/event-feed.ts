/**
 * The feed of events (the `events` table) to this instance's stream subscribers. One poller per
 * relay instance, whatever the number of clients: every `pollMs` (or at once when poked by a writer
 * of this process) it reads the events after its cursor, releases them in id order (event-order.ts:
 * never past a gap at once) and hands each to the subscribers of its project. It reads the database,
 * not this process's memory: in a cluster every instance's feed sees every instance's events.
 *
 * A subscription is a project's events on one network (its API key's: a test key never sees mainnet's).
 * A subscriber that resumes (Last-Event-ID) first reads its project's backlog from the database, in
 * pages, up to the feed's cursor when it subscribed; the live events, all after that cursor, follow.
 * Each event goes out once, in id order. A subscriber whose live buffer overflows (a client too slow
 * to read) is ended; it resumes with its last id. A project has at most `maxPerProject` subscriptions
 * on an instance. Look-ups waiting for a transaction (TransactionsService) watch its hashes here:
 * they are told of its transaction.status events, and count as listeners (the feed reads for them).
 */
import type { Logger } from "../../../kernel/log.ts";
import { RelayError } from "../../../kernel/errors.ts";
import type { EventRow, EventsRepo } from "../../../store/events.repo.ts";
import { EventOrder } from "./event-order.ts";
import { DEFAULT_PAGE, Subscription, type Subscriber } from "./event-subscription.ts";

export { Subscription, type EndReason, type Subscriber } from "./event-subscription.ts";

export type FeedEvent = EventRow;

export interface EventFeedOptions {
  /** The longest time between two reads (EVENTS_POLL_MS). */
  pollMs: number;
  /** How long a gap in the ids may stay open before the feed goes past it (default 2 s). */
  graceMs?: number;
  /** Events read at once (default 1000). */
  pageSize?: number;
  /** Live events a subscriber may have waiting before it is ended (default 10,000). */
  bufferLimit?: number;
  /** Subscriptions one project may have open on this instance (EVENTS_STREAMS_PER_PROJECT; default 10). */
  maxPerProject?: number;
}

const DEFAULT_GRACE_MS = 2000;
const DEFAULT_BUFFER = 10_000;
const DEFAULT_PER_PROJECT = 10;
/** Retry-After of a stream refused at the cap: streams are long, but a client may have one end meanwhile. */
const CAP_RETRY_AFTER_S = 5;

export class EventFeed {
  private order: EventOrder<FeedEvent> | null = null;
  private readonly subscribers = new Map<string, Set<Subscription>>();
  /** Waiting look-ups (GET /v1/transactions/{hash}?wait) by hash: told of each transaction.status event of it. */
  private readonly hashWatchers = new Map<string, Set<(e: FeedEvent) => void>>();
  /** The keys revoked (cutOff) while this instance runs: a stream of one, subscribing late, ends at once. */
  private readonly revokedKeys = new Set<string>();
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** A read is due at once (poked): further pokes before it starts add nothing. */
  private due = false;
  private reading: Promise<void> | null = null;
  /** Poked while a read was under way: read again once it ends (it may have missed the poker's write). */
  private again = false;
  /** The last read was a full page: read the next at once. */
  private more = false;
  private stopped = false;
  private failing = false;
  private readonly graceMs: number;
  private readonly pageSize: number;
  private readonly bufferLimit: number;

  constructor(
    private readonly repo: EventsRepo,
    private readonly log: Logger,
    private readonly opts: EventFeedOptions,
  ) {
    this.graceMs = opts.graceMs ?? DEFAULT_GRACE_MS;
    this.pageSize = opts.pageSize ?? DEFAULT_PAGE;
    this.bufferLimit = opts.bufferLimit ?? DEFAULT_BUFFER;
  }

  /**
   * Starts reading after the events written more than the grace ago (those written since, by
   * transactions perhaps still open, are read and ordered like any).
   */
  async start(): Promise<void> {
    if (this.order || this.stopped) return;
    this.order = new EventOrder<FeedEvent>(await this.repo.settledId(this.graceMs), this.graceMs);
    this.arm(0);
  }

  /**
   * Read now: a writer of this process calls it after its write commits. Cheap and coalesced: the
   * pokes of one moment make one read (a poke during a read makes one more, right after it). With
   * no client subscribed it does nothing: the periodic read keeps the cursor, and the writes of a
   * busy relay cost the database no reads.
   */
  poke(): void {
    if (this.stopped || !this.order || !this.listened) return;
    if (this.reading) {
      this.again = true;
      return;
    }
    if (this.due) return;
    this.due = true;
    this.arm(0);
  }

  /** Whether anyone listens: a subscriber, or a look-up waiting for a hash (the feed reads only then). */
  private get listened(): boolean {
    return this.subscribers.size > 0 || this.hashWatchers.size > 0;
  }

  /**
   * Calls `wake` with each transaction.status event whose hash or innerHash is one of `hashes` (any
   * project's, anonymous ones too: the caller reads what it may see); answers the unwatch. While any
   * hash is watched the feed reads, as for a subscriber.
   */
  watchHashes(hashes: string[], wake: (e: FeedEvent) => void): () => void {
    const keys = [...new Set(hashes)];
    for (const h of keys) {
      let set = this.hashWatchers.get(h);
      if (!set) this.hashWatchers.set(h, (set = new Set()));
      set.add(wake);
    }
    if (keys.length) this.poke(); // reads from the cursor now: a feed that was idle catches up at once
    return () => {
      for (const h of keys) {
        const set = this.hashWatchers.get(h);
        if (set?.delete(wake) && !set.size) this.hashWatchers.delete(h);
      }
    };
  }

  /** The last id released to subscribers. */
  get cursor(): bigint {
    return this.order?.cursor ?? 0n;
  }

  /** Subscribers connected to this instance. */
  get size(): number {
    let n = 0;
    for (const set of this.subscribers.values()) n += set.size;
    return n;
  }

  /**
   * A project's events on `network` from now on, or after `lastEventId` (its backlog from the
   * database first). After stop(), the subscription has ended.
   */
  subscribe(who: Subscriber, lastEventId: bigint | null): Subscription {
    const { projectId } = who;
    const max = this.opts.maxPerProject ?? DEFAULT_PER_PROJECT;
    if ((this.subscribers.get(projectId)?.size ?? 0) >= max)
      throw new RelayError(
        "RATE_LIMIT_EXCEEDED",
        `this project has ${max} event streams open on this instance, the most it may: close one first`,
        { limit: "EVENTS_STREAMS_PER_PROJECT", max },
        { retryAfter: CAP_RETRY_AFTER_S },
      );
    const s = new Subscription(this.repo, who, lastEventId, this.cursor, this.bufferLimit, (sub) => {
      const set = this.subscribers.get(sub.projectId);
      if (set?.delete(sub) && !set.size) this.subscribers.delete(sub.projectId);
    });
    if (this.stopped) {
      s.end("stopped");
      return s;
    }
    // authenticated just before its key's revocation reached this instance: ended at once
    if (who.keyId && this.revokedKeys.has(who.keyId)) {
      s.end("revoked");
      return s;
    }
    let set = this.subscribers.get(projectId);
    if (!set) this.subscribers.set(projectId, (set = new Set()));
    set.add(s);
    return s;
  }

  /**
   * Ends the subscriptions of a revoked key, or of a project suspended or deleted (ProjectsService's
   * cutOff, on every instance): no event goes out after it, even one already waiting.
   */
  cutOff(who: { keyId: string } | { projectId: string; reason: "suspended" | "deleted" }): number {
    const ended: Subscription[] = [];
    if ("keyId" in who) {
      this.revokedKeys.add(who.keyId);
      for (const set of this.subscribers.values()) for (const s of set) if (s.keyId === who.keyId) ended.push(s);
    } else ended.push(...(this.subscribers.get(who.projectId) ?? []));
    for (const s of ended) s.end("keyId" in who ? "revoked" : who.reason);
    return ended.length;
  }

  /** A key's expiry brought forward (a rotation, here or on another instance): its streams end then. */
  expire(keyId: string, at: Date): void {
    for (const set of this.subscribers.values()) for (const s of set) if (s.keyId === keyId) s.expireAt(at);
  }

  /** Deletes the events older than `retentionHours` (EVENTS_RETENTION_HOURS); answers how many. */
  prune(retentionHours: number): Promise<number> {
    return this.repo.prune(new Date(Date.now() - retentionHours * 3600_000));
  }

  /** Stops reading after a last read (what was written before the stop goes out), and ends every subscription. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.reading;
    if (this.order) await this.read();
    for (const set of this.subscribers.values()) for (const s of [...set]) s.end("stopped");
    this.subscribers.clear();
  }

  private arm(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.tick(), ms);
  }

  private tick(): void {
    this.timer = null;
    this.due = false;
    if (this.stopped) return;
    this.reading = this.read().finally(() => {
      this.reading = null;
      if (this.stopped) return;
      const soon = this.again || this.more;
      this.again = false;
      this.arm(soon ? 0 : this.opts.pollMs);
    });
  }

  /**
   * One read: the events after the cursor, released in order to their projects' subscribers. With
   * none subscribed, the cursor only moves to the events settled by now: none is read.
   */
  private async read(): Promise<void> {
    if (!this.listened) return await this.skipAhead();
    const order = this.order!;
    let rows: FeedEvent[];
    try {
      rows = await this.repo.after(order.cursor, this.pageSize);
    } catch (e) {
      if (!this.failing) this.log.warn({ err: e instanceof Error ? e.message : String(e) }, "reading events failed");
      this.failing = true;
      this.more = false;
      return;
    }
    if (this.failing) this.log.info("reading events works again");
    this.failing = false;
    const released = order.offer(rows, Date.now());
    this.more = rows.length === this.pageSize && released.length > 0;
    for (const gap of order.takeSkipped())
      this.log.debug({ from: String(gap.from), to: String(gap.to) }, "event ids never committed: skipped");
    for (const e of released) {
      if (this.hashWatchers.size && e.type === "transaction.status") this.wakeWatchers(e);
      if (e.projectId === null) continue;
      const set = this.subscribers.get(e.projectId);
      if (set) for (const s of set) if (s.network === e.network) s.push(e);
    }
  }

  private wakeWatchers(e: FeedEvent): void {
    const { hash, innerHash } = (e.data ?? {}) as { hash?: unknown; innerHash?: unknown };
    for (const h of [hash, innerHash])
      if (typeof h === "string") for (const wake of this.hashWatchers.get(h) ?? []) wake(e);
  }

  /** Nobody subscribed: the cursor moves to the last event settled (older than the grace), unread. */
  private async skipAhead(): Promise<void> {
    try {
      const settled = await this.repo.settledId(this.graceMs);
      if (settled > this.order!.cursor) this.order = new EventOrder<FeedEvent>(settled, this.graceMs);
      this.failing = false;
    } catch (e) {
      if (!this.failing) this.log.warn({ err: e instanceof Error ? e.message : String(e) }, "reading events failed");
      this.failing = true;
    }
    this.more = false;
  }
}
