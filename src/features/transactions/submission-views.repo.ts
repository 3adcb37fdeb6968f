/**
 * Submissions as their callers and operators see them: one looked up by either hash, with its
 * attempts, and the newest first for the admin API. The view itself is the database's
 * `submission_json` (migration 0007), the same object the status events carry.
 */
import type { Static } from "@sinclair/typebox";
import { sql, type SQL } from "drizzle-orm";
import type { TransactionSummary } from "./transaction.model.ts";
import { rowsOf } from "../../store/batch-sql.ts";
import type { Db } from "../../store/db.ts";
import { submissionAttempts, submissions } from "../../store/schema.ts";
import { sqlState } from "../../store/write-errors.ts";
import { validationError } from "../../kernel/errors.ts";

/** A submission as answered: hash, innerHash, status, network, ledger?, feeCharged?, resultXdr?, error?, dates. */
export type SubmissionView = Static<typeof TransactionSummary>;

export interface Attempt {
  hash: string;
  feeBid: string;
  channel: string;
  answer: string | null;
  sentAt: string;
  answeredAt: string | null;
}

export interface FoundSubmission {
  id: string;
  projectId: string | null;
  view: SubmissionView;
  /** Held for its predecessor, nothing of it sent yet (order flow): its account and sequence number. */
  held: { account: string; sequence: string } | null;
}

export interface ListFilter {
  projectId?: string;
  status?: string;
  network?: string;
  limit: number;
  /** Older than this (created_at, id), from the previous page. */
  before?: { createdAt: string; id: string };
}

/** A cursor's time as the list writes it (to_char below): microseconds, UTC. */
const CURSOR_TIME = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z$/;
const badCursor = () =>
  validationError("cursor is not one this API answered", { field: "cursor", reason: "bad_cursor" });

const iso = (column: SQL) => sql`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

export class SubmissionViews {
  constructor(
    private readonly db: Db,
    private readonly networks: readonly string[],
  ) {}

  /**
   * The submission whose inner hash, or a fee-bump hash it was sent with (its last, or an earlier attempt's:
   * an answer or an event named it), is `hash` (one probe of each index).
   */
  async byHash(hash: string): Promise<FoundSubmission | null> {
    const r = await this.db.execute(sql`select s.id, s.project_id, submission_json(s) as view,
        case when s.envelope is null then s.held->>'account' end as account, s.held->>'sequence' as sequence
      from ${submissions} s
      where s.id in (select id from ${submissions} where network in ${this.networks} and inner_hash = ${hash}
        union all select id from ${submissions} where hash = ${hash}
        union all select submission_id from ${submissionAttempts} where hash = ${hash})
      order by s.created_at desc limit 1`);
    type Row = {
      id: string;
      project_id: string | null;
      view: SubmissionView;
      account: string | null;
      sequence: string;
    };
    const [row] = rowsOf<Row>(r);
    if (!row) return null;
    const held = row.account === null ? null : { account: row.account, sequence: row.sequence };
    return { id: row.id, projectId: row.project_id, view: parse(row.view), held };
  }

  async attempts(submissionId: string): Promise<Attempt[]> {
    const r = await this.db.execute(sql`select hash, fee_bid::text as "feeBid", channel, answer,
        ${iso(sql`sent_at`)} as "sentAt", ${iso(sql`answered_at`)} as "answeredAt"
      from ${submissionAttempts} where submission_id = ${submissionId} order by sent_at, hash`);
    return rowsOf<Attempt>(r);
  }

  /** Newest first; answers one more than `limit` when there is a next page. */
  async list(
    f: ListFilter,
  ): Promise<{ view: SubmissionView; projectId: string | null; createdAt: string; id: string }[]> {
    if (!Number.isSafeInteger(f.limit) || f.limit < 1)
      throw validationError("limit must be a whole number, 1 or more", { field: "limit", reason: "not_an_integer" });
    const where: SQL[] = [sql`true`];
    if (f.projectId !== undefined) where.push(sql`s.project_id = ${f.projectId}`);
    if (f.status !== undefined) where.push(sql`s.status = ${f.status}`);
    if (f.network !== undefined) where.push(sql`s.network = ${f.network}`);
    if (f.before) {
      if (!CURSOR_TIME.test(f.before.createdAt)) throw badCursor();
      where.push(sql`(s.created_at, s.id) < (${f.before.createdAt}::timestamptz, ${f.before.id})`);
    }
    const r = await this.db
      .execute(sql`select s.id, s.project_id, submission_json(s) as view,
        to_char(s.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as created
      from ${submissions} s where ${sql.join(where, sql` and `)}
      order by s.created_at desc, s.id desc limit ${f.limit + 1}`)
      .catch((e) => {
        // a cursor's time of the right shape that is no date (February 31st): Postgres's data exception
        throw f.before && sqlState(e)?.startsWith("22") ? badCursor() : e;
      });
    return rowsOf<{ id: string; project_id: string | null; view: SubmissionView; created: string }>(r).map((x) => ({
      view: parse(x.view),
      projectId: x.project_id,
      createdAt: x.created,
      id: x.id,
    }));
  }
}

/** jsonb as either driver answers it (an object, or its text). */
const parse = (v: unknown): SubmissionView => (typeof v === "string" ? JSON.parse(v) : v) as SubmissionView;
