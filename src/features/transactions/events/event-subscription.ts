/**
 * One stream's subscription to the event feed (event-feed.ts): a project's events on one network,
 * its backlog read from the database first, then the live events the feed hands it.
 */
import type { EventRow, EventsRepo } from "../../../store/events.repo.ts";

type FeedEvent = EventRow;

/** Events read at once (a backlog's page, the feed's read). */
export const DEFAULT_PAGE = 1000;

/** Why a subscription ended: its client went, read too slowly, the feed stopped, or its access ended. */
export type EndReason = "closed" | "overflow" | "stopped" | "revoked" | "expired" | "suspended" | "deleted";

/** The longest a timer may wait (setTimeout's limit): a later expiry is looked at again then. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Who subscribes: a project, on its key's network, with that key (its revocation ends the subscription). */
export interface Subscriber {
  projectId: string;
  network: string;
  keyId?: string | null;
  /** When its key expires (null: never): the subscription ends then ("expired"). */
  expiresAt?: Date | null;
}

/**
 * One subscriber's events, in id order, each once: the backlog (ids after its Last-Event-ID up to
 * the feed's cursor when it subscribed, read from the database in pages) then the live events.
 * `next()` is called by one reader at a time (the stream's pull).
 */
export class Subscription {
  /** The last id handed out (or the starting point). */
  private last: bigint;
  private backlog: boolean;
  private queue: FeedEvent[] = [];
  private wake: (() => void) | null = null;
  private ended: EndReason | null = null;
  private resolveEnded!: (reason: EndReason) => void;
  private expiry: ReturnType<typeof setTimeout> | undefined;
  /** Resolves when it ends, with why (an overflow ends it while its reader may not be reading). */
  readonly whenEnded = new Promise<EndReason>((resolve) => {
    this.resolveEnded = resolve;
  });

  readonly projectId: string;
  readonly network: string;
  readonly keyId: string | null;

  constructor(
    private readonly repo: EventsRepo,
    who: Subscriber,
    lastEventId: bigint | null,
    /** The feed's cursor when it subscribed: the live events come after it. */
    private readonly upTo: bigint,
    private readonly bufferLimit: number,
    private readonly onEnd: (s: Subscription) => void,
  ) {
    this.projectId = who.projectId;
    this.network = who.network;
    this.keyId = who.keyId ?? null;
    this.last = lastEventId ?? upTo;
    this.backlog = lastEventId !== null && lastEventId < upTo;
    this.expireAt(who.expiresAt ?? null);
  }

  /** Its key's expiry (a rotation brings it forward): it ends then, at once if it passed. */
  expireAt(at: Date | null): void {
    clearTimeout(this.expiry);
    if (at === null || this.ended) return;
    const ms = at.getTime() - Date.now();
    if (ms <= 0) this.end("expired");
    else this.expiry = setTimeout(() => this.expireAt(at), Math.min(ms, MAX_TIMER_MS));
  }

  /** Why it ended; null while it lasts. */
  get endedBy(): EndReason | null {
    return this.ended;
  }

  /** A live event of its project (from the feed, in id order). */
  push(e: FeedEvent): void {
    if (this.ended) return;
    this.queue.push(e);
    if (this.queue.length > this.bufferLimit) this.end("overflow");
    this.wake?.();
  }

  /**
   * The next events (one page of backlog, or the live events waiting; waits for one); null once it
   * has ended (after the events already waiting when the feed stopped).
   */
  async next(): Promise<FeedEvent[] | null> {
    for (;;) {
      if (this.ended && this.ended !== "stopped") return null;
      if (this.backlog) {
        const page = await this.repo.after(this.last, DEFAULT_PAGE, {
          projectId: this.projectId,
          network: this.network,
          upTo: this.upTo,
        });
        if (this.ended && this.ended !== "stopped") return null; // its key was revoked meanwhile
        if (page.length < DEFAULT_PAGE) this.backlog = false;
        if (page.length) {
          this.last = page.at(-1)!.id;
          return page;
        }
        continue;
      }
      const fresh = this.queue.filter((e) => e.id > this.last);
      this.queue = [];
      if (fresh.length) {
        this.last = fresh.at(-1)!.id;
        return fresh;
      }
      if (this.ended) return null;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
      this.wake = null;
    }
  }

  /** The client is gone. */
  close(): void {
    this.end("closed");
  }

  /** Ends it: `next()` answers null (after the waiting events when the feed stopped). */
  end(reason: EndReason): void {
    if (this.ended) return;
    this.ended = reason;
    clearTimeout(this.expiry);
    if (reason !== "stopped" && reason !== "closed") this.queue = [];
    this.onEnd(this);
    this.resolveEnded(reason);
    this.wake?.();
  }
}
