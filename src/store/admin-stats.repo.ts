/**
 * Figures for the operator console's overview (GET /v1/admin/stats): submissions per minute of the
 * last hour by network and status, and the credits the network's fees took today (UTC): the
 * journal's charges.
 */
import { sql } from "drizzle-orm";
import { rowsOf } from "./batch-sql.ts";
import type { Db } from "./db.ts";
import { creditJournal, submissions } from "./schema.ts";

export interface MinuteCount {
  /** The minute's start, ISO 8601 (UTC). */
  minute: string;
  network: string;
  status: string;
  count: number;
}

export class AdminStatsRepo {
  constructor(private readonly db: Db) {}

  /** Submissions created in the last `minutes` minutes, per minute, network and current status. */
  async perMinute(minutes: number): Promise<MinuteCount[]> {
    const r = await this.db.execute(sql`select
        to_char(date_trunc('minute', created_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:00"Z"') as minute,
        network, status, count(*)::int as count
      from ${submissions}
      where created_at > now() - make_interval(mins => ${minutes})
      group by 1, 2, 3 order by 1, 2, 3`);
    return rowsOf<MinuteCount>(r).map((x) => ({ ...x, count: Number(x.count) }));
  }

  /** Stroops charged to projects since midnight UTC. */
  async spentToday(): Promise<bigint> {
    const r = await this.db.execute(sql`select coalesce(-sum(amount), 0)::text as spent from ${creditJournal}
      where kind = 'charge' and created_at >= date_trunc('day', now() at time zone 'UTC') at time zone 'UTC'`);
    return BigInt(rowsOf<{ spent: string }>(r)[0]?.spent ?? "0");
  }
}
