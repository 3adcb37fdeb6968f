/**
 * The `events` table as the event stream reads it: the events after an id (all projects', or one
 * project's by the (project_id, id) index), where the feed starts, and the prune of old events.
 * The writers are elsewhere (a submission's status change writes its event in the same statement);
 * `append` is for tests and tools.
 */
import { and, asc, eq, gt, lte, sql } from "drizzle-orm";
import { events } from "./schema.ts";
import type { Db } from "./db.ts";
import { rowsOf } from "./batch-sql.ts";

export interface EventRow {
  id: bigint;
  type: string;
  projectId: string | null;
  network: string;
  submissionId: string | null;
  /** The event's payload as streamed (JSON). */
  data: unknown;
  createdAt: Date;
}

export interface NewEvent {
  type: string;
  projectId: string | null;
  network: string;
  submissionId?: string | null;
  data: unknown;
}

export class EventsRepo {
  constructor(private readonly db: Db) {}

  /**
   * Up to `limit` events with id > `afterId` (and <= `upTo` when given), in id order; only
   * `projectId`'s and `network`'s when given.
   */
  async after(
    afterId: bigint,
    limit: number,
    opts: { projectId?: string; network?: string; upTo?: bigint } = {},
  ): Promise<EventRow[]> {
    return await this.db
      .select()
      .from(events)
      .where(
        and(
          gt(events.id, afterId),
          opts.upTo !== undefined ? lte(events.id, opts.upTo) : undefined,
          opts.projectId !== undefined ? eq(events.projectId, opts.projectId) : undefined,
          opts.network !== undefined ? eq(events.network, opts.network) : undefined,
        ),
      )
      .orderBy(asc(events.id))
      .limit(limit);
  }

  /**
   * The highest id of the events written more than `settledMs` ago (0 if none): where a new feed
   * starts reading, so that the events of transactions still open then are not stepped over.
   */
  async settledId(settledMs: number): Promise<bigint> {
    const rows = rowsOf<{ id: string | null }>(
      await this.db.execute(
        sql`select max(id)::text as id from ${events} where created_at < now() - make_interval(secs => ${settledMs / 1000})`,
      ),
    );
    return BigInt(rows[0]?.id ?? 0);
  }

  /** Deletes the events created before `before`; answers how many. */
  async prune(before: Date): Promise<number> {
    const rows = rowsOf<{ n: string | number }>(
      await this.db.execute(
        sql`with gone as (delete from ${events} where created_at < ${before.toISOString()}::timestamptz returning 1)
          select count(*) as n from gone`,
      ),
    );
    return Number(rows[0]?.n ?? 0);
  }

  /** Inserts events (for tests and tools; the relay writes its own with the changes they record). */
  async append(...rows: NewEvent[]): Promise<EventRow[]> {
    if (!rows.length) return [];
    return await this.db
      .insert(events)
      .values(rows.map((r) => ({ ...r, submissionId: r.submissionId ?? null })))
      .returning();
  }
}
