/**
 * Webhooks and their deliveries. `fanOut` turns new events into deliveries (one per live webhook
 * of the event's project subscribed to its type) and advances each webhook's cursor in the same
 * transaction; `claim` leases due deliveries (`for update skip locked`, then next_at moved past
 * the lease), so that several instances never send the same attempt at once and an instance that
 * dies mid-send leaves them to be tried again when the lease ends.
 */
import { and, desc, eq, isNull, sql } from "drizzle-orm";
import { events, webhookDeliveries, webhooks } from "./schema.ts";
import type { Db } from "./db.ts";
import { rowsOf } from "./batch-sql.ts";

export interface WebhookRow {
  id: string;
  projectId: string;
  url: string;
  events: string[];
  description: string | null;
  /** Sealed (or plain, see the service). */
  secret: string;
  createdAt: Date;
}

/** One attempt of a delivery, as kept in its attempt_log. */
export interface DeliveryAttempt {
  /** When the attempt started (ISO 8601). */
  at: string;
  /** The HTTP status answered; null: no answer (refused before sending, unreachable, timed out). */
  status: number | null;
  /** Why it failed, when it did. */
  error: string | null;
  durationMs: number;
}

/** Attempts kept per delivery (a delivery gives up after a day: about 14 attempts). */
export const MAX_ATTEMPT_LOG = 50;

export interface DeliveryRow {
  id: bigint;
  eventId: bigint;
  type: string;
  state: "pending" | "delivered" | "failed";
  attempts: number;
  responseStatus: number | null;
  lastError: string | null;
  attemptLog: DeliveryAttempt[];
  nextAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A leased delivery with what sending it needs. */
export interface ClaimedDelivery {
  id: bigint;
  webhookId: string;
  eventId: bigint;
  type: string;
  attempts: number;
  /** When the delivery was created (ms): retries end a day after. */
  createdAtMs: number;
  /** The event's data as JSON text; null when the event was pruned. */
  data: string | null;
  /** When the event was written (ms). */
  eventAtMs: number;
  url: string;
  secret: string;
}

const columns = {
  id: webhooks.id,
  projectId: webhooks.projectId,
  url: webhooks.url,
  events: webhooks.events,
  description: webhooks.description,
  secret: webhooks.secret,
  createdAt: webhooks.createdAt,
};
const asWebhook = (r: Omit<WebhookRow, "events"> & { events: unknown }): WebhookRow => ({
  ...r,
  events: r.events as string[],
});
const ms = (column: string) => sql.raw(`(extract(epoch from ${column}) * 1000)::float8`);

export class WebhooksRepo {
  constructor(private readonly db: Db) {}

  /** Forgets deliveries that ended (delivered or given up) before `before`; answers how many. */
  async prune(before: Date): Promise<number> {
    const r = await this.db.execute(sql`delete from ${webhookDeliveries}
      where state <> 'pending' and updated_at < ${before.toISOString()}::timestamptz returning 1`);
    return rowsOf(r).length;
  }

  /** A new webhook whose cursor is the newest event: it gets the events from now on. */
  async create(w: Omit<WebhookRow, "createdAt">): Promise<WebhookRow> {
    const [r] = await this.db
      .insert(webhooks)
      .values({ ...w, cursor: sql`(select coalesce(max(${events.id}), 0) from ${events})` })
      .returning(columns);
    return asWebhook(r!);
  }

  /** A project's live webhooks, oldest first. */
  async list(projectId: string): Promise<WebhookRow[]> {
    const rows = await this.db
      .select(columns)
      .from(webhooks)
      .where(and(eq(webhooks.projectId, projectId), isNull(webhooks.deletedAt)))
      .orderBy(webhooks.createdAt, webhooks.id);
    return rows.map(asWebhook);
  }

  async get(projectId: string, id: string): Promise<WebhookRow | null> {
    const [r] = await this.db
      .select(columns)
      .from(webhooks)
      .where(and(eq(webhooks.projectId, projectId), eq(webhooks.id, id), isNull(webhooks.deletedAt)));
    return r ? asWebhook(r) : null;
  }

  /** Deletes a live webhook (kept, marked deleted) and gives up its pending deliveries; the row, or null. */
  async remove(projectId: string, id: string): Promise<WebhookRow | null> {
    return await this.db.transaction(async (tx) => {
      const [r] = await tx
        .update(webhooks)
        .set({ deletedAt: sql`now()` })
        .where(and(eq(webhooks.projectId, projectId), eq(webhooks.id, id), isNull(webhooks.deletedAt)))
        .returning(columns);
      if (!r) return null;
      await tx
        .update(webhookDeliveries)
        .set({ state: "failed", lastError: "the webhook was deleted", nextAt: null, updatedAt: sql`now()` })
        .where(and(eq(webhookDeliveries.webhookId, id), eq(webhookDeliveries.state, "pending")));
      return asWebhook(r);
    });
  }

  /** A webhook's deliveries, newest first. */
  async deliveries(webhookId: string, limit: number): Promise<DeliveryRow[]> {
    const rows = await this.db
      .select({
        id: webhookDeliveries.id,
        eventId: webhookDeliveries.eventId,
        type: webhookDeliveries.type,
        state: webhookDeliveries.state,
        attempts: webhookDeliveries.attempts,
        responseStatus: webhookDeliveries.responseStatus,
        lastError: webhookDeliveries.lastError,
        attemptLog: sql<DeliveryAttempt[] | string>`${webhookDeliveries.attemptLog}`,
        nextAt: webhookDeliveries.nextAt,
        createdAt: webhookDeliveries.createdAt,
        updatedAt: webhookDeliveries.updatedAt,
      })
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.webhookId, webhookId))
      .orderBy(desc(webhookDeliveries.id))
      .limit(limit);
    // jsonb as either driver answers it (an array, or its text)
    return rows.map((r) => ({
      ...r,
      attemptLog: (typeof r.attemptLog === "string" ? JSON.parse(r.attemptLog) : r.attemptLog) ?? [],
    }));
  }

  /**
   * Fans the events after each live webhook's cursor out into pending deliveries, due now: up to
   * `batch` per webhook of the types it takes that have none yet. Then moves each cursor to the
   * newest event written more than `settleMs` ago (and not past a full batch's last): ids are taken
   * when a row is inserted, not when its transaction commits, so an event may become visible after
   * a higher id; until then the cursor stays behind it, and the unique (webhook_id, event_id) index
   * keeps one delivery per event whatever passes (of any instance) meet it. Answers the deliveries made.
   */
  async fanOut(batch: number, settleMs: number): Promise<number> {
    const rows = rowsOf<{ n: string | number }>(
      await this.db.execute(sql`
        with candidates as (
          select w.id as webhook_id, e.id as event_id, e.type
          from ${webhooks} w cross join lateral (
            select e.id, e.type from ${events} e
            where e.project_id = w.project_id and e.id > w.cursor and w.events ? e.type
              and not exists (select 1 from ${webhookDeliveries} d where d.webhook_id = w.id and d.event_id = e.id)
            order by e.id limit ${batch}
          ) e
          where w.deleted_at is null
        ), full_batches as (
          select webhook_id, max(event_id) as bound from candidates group by webhook_id having count(*) >= ${batch}
        ), inserted as (
          insert into ${webhookDeliveries} (webhook_id, event_id, type, state, next_at)
          select webhook_id, event_id, type, 'pending', now() from candidates
          on conflict (webhook_id, event_id) do nothing
          returning 1
        ), settled as (
          select w.id as webhook_id, s.id
          from ${webhooks} w left join full_batches f on f.webhook_id = w.id
          cross join lateral (
            select max(e.id) as id from ${events} e
            where e.project_id = w.project_id and e.id > w.cursor and (f.bound is null or e.id <= f.bound)
              and e.created_at < now() - make_interval(secs => ${settleMs / 1000})
          ) s
          where w.deleted_at is null and s.id is not null
        ), moved as (
          update ${webhooks} w set cursor = s.id from settled s where w.id = s.webhook_id and s.id > w.cursor
        )
        select count(*) as n from inserted`),
    );
    return Number(rows[0]?.n ?? 0);
  }

  /** Live webhooks (not in `skip`) with deliveries due now. */
  async dueWebhooks(skip: string[]): Promise<string[]> {
    const rows = rowsOf<{ id: string }>(
      await this.db.execute(sql`
        select w.id from ${webhooks} w
        where w.deleted_at is null and not (w.id = any(${`{${skip.join(",")}}`}::text[]))
          and exists (select 1 from ${webhookDeliveries} d
            where d.webhook_id = w.id and d.state = 'pending' and d.next_at <= now())`),
    );
    return rows.map((r) => r.id);
  }

  /** Leases up to `limit` due deliveries of a webhook for `leaseMs` (their next_at moves past it), oldest due first. */
  async claim(webhookId: string, limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
    const rows = rowsOf<Record<string, unknown>>(
      await this.db.execute(sql`
        with due as (
          select id from ${webhookDeliveries}
          where webhook_id = ${webhookId} and state = 'pending' and next_at <= now()
          order by next_at, id limit ${limit}
          for update skip locked
        ), leased as (
          update ${webhookDeliveries} d set next_at = now() + make_interval(secs => ${leaseMs / 1000})
          from due where d.id = due.id
          returning d.id, d.webhook_id, d.event_id, d.type, d.attempts, d.created_at
        )
        select l.id::text as id, l.webhook_id, l.event_id::text as event_id, l.type, l.attempts,
          ${ms("l.created_at")} as created_ms, e.data::text as data, ${ms("e.created_at")} as event_ms,
          w.url, w.secret
        from leased l join ${webhooks} w on w.id = l.webhook_id left join ${events} e on e.id = l.event_id
        order by l.id`),
    );
    return rows.map((r) => ({
      id: BigInt(r.id as string),
      webhookId: r.webhook_id as string,
      eventId: BigInt(r.event_id as string),
      type: r.type as string,
      attempts: Number(r.attempts),
      createdAtMs: Number(r.created_ms),
      data: (r.data as string | null) ?? null,
      eventAtMs: Number(r.event_ms ?? r.created_ms),
      url: r.url as string,
      secret: r.secret as string,
    }));
  }

  /** Gives a leased delivery back, due now (an attempt called off by the relay's stop). */
  async release(id: bigint): Promise<void> {
    await this.db
      .update(webhookDeliveries)
      .set({ nextAt: sql`now()` })
      .where(and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.state, "pending")));
  }

  /**
   * Records an attempt: delivered, pending again at `nextAt`, or failed (`nextAt` null and not
   * delivered), and appends it to the attempt log (the last MAX_ATTEMPT_LOG kept). Only a pending
   * delivery changes (a deleted webhook's stay failed).
   */
  async attempted(
    id: bigint,
    a: {
      delivered: boolean;
      responseStatus: number | null;
      error: string | null;
      nextAt: Date | null;
      startedAt: Date;
      durationMs: number;
    },
  ): Promise<void> {
    const state = a.delivered ? "delivered" : a.nextAt ? "pending" : "failed";
    const entry: DeliveryAttempt = {
      at: a.startedAt.toISOString(),
      status: a.responseStatus,
      error: a.error,
      durationMs: Math.max(0, Math.round(a.durationMs)),
    };
    const log = webhookDeliveries.attemptLog;
    await this.db
      .update(webhookDeliveries)
      .set({
        state,
        attempts: sql`${webhookDeliveries.attempts} + 1`,
        responseStatus: a.responseStatus,
        lastError: a.error,
        attemptLog: sql`(case when jsonb_array_length(${log}) >= ${MAX_ATTEMPT_LOG} then ${log} - 0 else ${log} end)
          || jsonb_build_array(${JSON.stringify(entry)}::jsonb)`,
        nextAt: a.nextAt,
        updatedAt: sql`now()`,
      })
      .where(and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.state, "pending")));
  }
}
