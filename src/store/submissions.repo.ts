/**
 * Submission intents and outcomes in the database, and the credit journal entries that go with
 * them: a credit reservation is journaled with the intent, in one statement; the outcome releases
 * it and charges what the network charged, in one statement. Each statement that reads a
 * submission's journal to write it runs after a row lock on the submission, in a transaction: a
 * request and recovery settling one submission at once see each other's entries (READ COMMITTED
 * gives the statement after the lock a fresh snapshot), so nothing is released or charged twice.
 */
import { and, asc, eq, isNotNull, isNull, gte, lt, sql, type SQL } from "drizzle-orm";
import { creditJournal, submissions } from "./schema.ts";
import type { Db } from "./db.ts";
import { readOutcome } from "./outcome-codec.ts";
import type { Outcome, SettledCredits, SubmissionIntent, SubmissionRecord, SubmissionStore } from "./types.ts";

/** The journal's net reserve for a submission (negative while a reservation is outstanding). */
const outstanding = (submissionId: SQL) =>
  sql`(select coalesce(sum(amount), 0) from ${creditJournal} where submission_id = ${submissionId} and kind in ('reserve', 'release'))`;

/** Rows of a raw statement, from either driver (postgres-js answers an array, PGlite `{ rows }`). */
const rowsOf = <T>(r: unknown): T[] => (Array.isArray(r) ? r : (r as { rows: T[] }).rows);

export class SubmissionsRepo implements SubmissionStore {
  constructor(private readonly db: Db) {}

  /** Runs `statement` in a transaction, after locking the submission's row (if it exists yet). */
  private async locked(id: string, statement: SQL): Promise<unknown> {
    return await this.db.transaction(async (tx) => {
      await tx.execute(sql`select id from ${submissions} where id = ${id} for update`);
      return await tx.execute(statement);
    });
  }

  /**
   * One statement (so atomic, and one round trip): upsert the intent and, with a hold, journal the
   * reservation unless one is still outstanding for this submission (a resumed intent).
   */
  async recordIntent(s: SubmissionIntent, hold = 0n): Promise<boolean> {
    const upsert = sql`insert into ${submissions} (id, network, inner_hash, hash, caller, project_id, max_fee, envelope, sent_ledger)
      values (${s.id}, ${s.network}, ${s.innerHash}, ${s.hash}, ${s.caller}, ${s.projectId}, ${s.maxFee}, ${s.envelope}, ${s.sentLedger})
      on conflict (id) do update set hash = excluded.hash, max_fee = excluded.max_fee, envelope = excluded.envelope,
        sent_ledger = excluded.sent_ledger, released_at = null, updated_at = now(),
        outcome = null, outcome_kind = null, fee_charged = null,
        project_id = case when ${outstanding(sql`excluded.id`)} = 0 then excluded.project_id else ${submissions}.project_id end`;
    if (hold <= 0n || !s.projectId) {
      await this.db.execute(upsert);
      return false;
    }
    const r = await this.locked(
      s.id,
      sql`with up as (${upsert} returning id),
      j as (select ${outstanding(sql`${s.id}`)} as net)
      insert into ${creditJournal} (project_id, kind, amount, submission_id, tx_hash)
      select ${s.projectId}, 'reserve', ${-hold}, up.id, ${s.hash} from up, j where j.net = 0
      returning id`,
    );
    return rowsOf(r).length > 0;
  }

  /**
   * One statement: record the outcome and, for a submission whose project reserved credits,
   * release what is outstanding and charge the fee (once). The submission's project is the one
   * whose reservation is outstanding (the last to journal one), and the one charged.
   */
  async recordOutcome(
    id: string,
    outcome: Outcome,
    feeCharged: bigint | null,
    credits: boolean,
  ): Promise<SettledCredits> {
    if (!credits) {
      const [row] = await this.db
        .update(submissions)
        .set({ outcome, outcomeKind: outcome.kind, feeCharged, updatedAt: sql`now()` })
        .where(eq(submissions.id, id))
        .returning({ projectId: submissions.projectId });
      return { projectId: row?.projectId ?? null, released: 0n, charged: 0n };
    }
    const fee = feeCharged ?? 0n;
    const r = await this.locked(
      id,
      sql`with upd as (
        update ${submissions} set outcome = ${JSON.stringify(outcome)}::jsonb, outcome_kind = ${outcome.kind}, fee_charged = ${feeCharged}, updated_at = now()
        where id = ${id} returning project_id, hash),
      j as (select coalesce(sum(amount) filter (where kind in ('reserve', 'release')), 0) as net,
                   count(*) filter (where kind = 'reserve') as reserves, count(*) filter (where kind = 'charge') as charges
            from ${creditJournal} where submission_id = ${id}),
      entries as (
        select upd.project_id, 'release' as kind, -j.net as amount, upd.hash from upd, j where upd.project_id is not null and j.net < 0
        union all
        select upd.project_id, 'charge', ${-fee}::bigint, upd.hash from upd, j
        where upd.project_id is not null and j.reserves > 0 and j.charges = 0 and ${fee}::bigint > 0),
      ins as (insert into ${creditJournal} (project_id, kind, amount, submission_id, tx_hash)
        select project_id, kind, amount, ${id}, hash from entries
        on conflict (submission_id) where kind = 'charge' do nothing returning kind, amount)
      select (select project_id from upd) as project_id,
        (select coalesce(sum(amount) filter (where kind = 'release'), 0) from ins) as released,
        (select coalesce(-sum(amount) filter (where kind = 'charge'), 0) from ins) as charged`,
    );
    const [row] = rowsOf<{ project_id: string | null; released: string | bigint; charged: string | bigint }>(r);
    return {
      projectId: row?.project_id ?? null,
      released: BigInt(row?.released ?? 0),
      charged: BigInt(row?.charged ?? 0),
    };
  }

  async release(id: string, sentLedger?: number | null): Promise<SettledCredits> {
    // only a submission still without an outcome, and (for recovery) not sent again since it was read
    const unchanged = sentLedger === undefined ? sql`true` : sql`sent_ledger is not distinct from ${sentLedger}`;
    const r = await this.locked(
      id,
      sql`with upd as (
        update ${submissions} set released_at = now()
        where id = ${id} and outcome_kind is null and released_at is null and ${unchanged} returning project_id, hash),
      j as (select ${outstanding(sql`${id}`)} as net),
      ins as (insert into ${creditJournal} (project_id, kind, amount, submission_id, tx_hash)
        select upd.project_id, 'release', -j.net, ${id}, upd.hash from upd, j where upd.project_id is not null and j.net < 0
        returning amount)
      select (select project_id from upd) as project_id, (select coalesce(sum(amount), 0) from ins) as released`,
    );
    const [row] = rowsOf<{ project_id: string | null; released: string | bigint }>(r);
    return { projectId: row?.project_id ?? null, released: BigInt(row?.released ?? 0), charged: 0n };
  }

  async byInnerHash(network: string, innerHash: string): Promise<SubmissionRecord | null> {
    const [r] = await this.db
      .select()
      .from(submissions)
      .where(and(eq(submissions.network, network), eq(submissions.innerHash, innerHash)))
      .limit(1);
    return r ? record(r) : null;
  }

  async unsettled(network: string, before: Date, limit: number): Promise<SubmissionRecord[]> {
    const rows = await this.db
      .select()
      .from(submissions)
      .where(
        and(
          eq(submissions.network, network),
          isNull(submissions.outcomeKind),
          isNull(submissions.releasedAt),
          lt(submissions.updatedAt, before),
        ),
      )
      .orderBy(asc(submissions.updatedAt))
      .limit(limit);
    return rows.map(record);
  }

  /** Fees the network charged per project since `since` (for the daily spend limits after a restart). */
  async spentSince(since: Date): Promise<Map<string, bigint>> {
    const rows = await this.db
      .select({ projectId: submissions.projectId, total: sql<string>`coalesce(sum(${submissions.feeCharged}), 0)` })
      .from(submissions)
      .where(and(isNotNull(submissions.projectId), gte(submissions.updatedAt, since)))
      .groupBy(submissions.projectId);
    return new Map(rows.map((r) => [r.projectId!, BigInt(r.total)]));
  }
}

function record(r: typeof submissions.$inferSelect): SubmissionRecord {
  return {
    id: r.id,
    network: r.network,
    innerHash: r.innerHash,
    hash: r.hash,
    caller: r.caller,
    projectId: r.projectId,
    maxFee: r.maxFee,
    envelope: r.envelope,
    sentLedger: r.sentLedger,
    releasedAt: r.releasedAt,
    outcome: readOutcome(r.outcome),
    feeCharged: r.feeCharged,
  };
}
