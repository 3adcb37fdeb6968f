/**
 * Submission intents and outcomes in the database, and the credit journal entries that go with
 * them: a credit reservation is journaled with the intent, in one statement; the outcome releases
 * it and charges what the network charged, in one statement. The request path's intents, outcomes
 * and look-ups are grouped (group-commit.ts): a batch of them is one statement. Each statement that reads a
 * submission's journal to write it runs after a row lock on the submission, in a transaction: a
 * request and recovery settling one submission at once see each other's entries (READ COMMITTED
 * gives the statement after the lock a fresh snapshot), so nothing is released or charged twice.
 * On a database with one session (PGlite) no statement runs beside another, so none needs the lock.
 */
import { and, asc, eq, isNotNull, isNull, gte, lt, sql, type SQL } from "drizzle-orm";
import { creditJournal, events, projects, submissionAttempts, submissions } from "./schema.ts";
import { changedBy, statusAfter } from "./status-sql.ts";
import { nextStatus } from "../../actors/submission.machine.ts";
import { RelayError } from "../errors.ts";
import type { Db } from "./db.ts";
import { readOutcome } from "./outcome-codec.ts";
import { GroupCommit } from "./group-commit.ts";
import { BatchStatement, rowsOf } from "./batch-sql.ts";
import type { Outcome, SettledCredits, SubmissionIntent, SubmissionRecord, SubmissionStore } from "./types.ts";

/** The journal's net reserve for a submission (negative while a reservation is outstanding). */
const outstanding = (submissionId: SQL) =>
  sql`(select coalesce(sum(amount), 0) from ${creditJournal} where submission_id = ${submissionId} and kind in ('reserve', 'release'))`;

type Intent = { s: SubmissionIntent; hold: bigint; fresh: boolean };
type IntentColumn =
  | "id"
  | "network"
  | "innerHash"
  | "hash"
  | "caller"
  | "projectId"
  | "maxFee"
  | "envelope"
  | "sentLedger"
  | "feeBid"
  | "channel"
  | "hold";
type IntentColumns = Record<IntentColumn, (string | number | bigint | null)[]>;

/** The intents' columns, for a statement of `intentInput`. */
function intentColumns(items: Intent[]): IntentColumns {
  const of = <T>(f: (i: Intent) => T) => items.map(f);
  return {
    id: of((i) => i.s.id),
    network: of((i) => i.s.network),
    innerHash: of((i) => i.s.innerHash),
    hash: of((i) => i.s.hash),
    caller: of((i) => i.s.caller),
    projectId: of((i) => i.s.projectId),
    maxFee: of((i) => i.s.maxFee),
    envelope: of((i) => i.s.envelope),
    sentLedger: of((i) => i.s.sentLedger),
    feeBid: of((i) => i.s.feeBid),
    channel: of((i) => i.s.channel),
    hold: of((i) => i.hold),
  };
}

/** The intents as rows of a `with` clause named `input`. */
const intentInput = (col: (key: IntentColumn, type: string) => SQL): SQL =>
  sql`input (id, network, inner_hash, hash, caller, project_id, max_fee, envelope, sent_ledger, fee_bid, channel, hold)
    as (select * from unnest(${col("id", "text")}, ${col("network", "text")}, ${col("innerHash", "text")},
      ${col("hash", "text")}, ${col("caller", "text")}, ${col("projectId", "text")}, ${col("maxFee", "bigint")},
      ${col("envelope", "text")}, ${col("sentLedger", "integer")}, ${col("feeBid", "bigint")},
      ${col("channel", "text")}, ${col("hold", "bigint")})),
  attempt as (insert into ${submissionAttempts} (submission_id, hash, fee_bid, channel)
    select id, hash, fee_bid, channel from input on conflict do nothing)`;

/**
 * The `transaction.status` events of a statement's changed rows, written by the statement that
 * changes them: `cte` answers id, project_id, network, data (the submission as the lookup answers
 * it, `submission_json`) and changed (whether its status changed; a new row makes no event).
 */
const statusEvents = (cte: SQL) => sql`insert into ${events} (type, project_id, network, submission_id, data)
  select 'transaction.status', project_id, network, id, data from ${cte} where changed`;

/** What a statement that changes statuses answers for `statusEvents` (`s`: the submission row as written). */
const changedRow = (s: SQL, changed: SQL) =>
  sql`${s}.id, ${s}.project_id, ${s}.network, submission_json(${s}) as data, ${changed} as changed`;

/**
 * Upserts the rows of `input` (a resumed intent keeps its project while its reservation is
 * outstanding; a rejected or expired one sent again is pending again), and records each as an attempt.
 */
const intentUpsert = sql`insert into ${submissions}
    (id, network, inner_hash, hash, caller, project_id, max_fee, envelope, sent_ledger)
  select id, network, inner_hash, hash, caller, project_id, max_fee, envelope, sent_ledger from input
  on conflict (id) do update set status = ${statusAfter("SEND", sql`${submissions}.status`)}, hash = excluded.hash, max_fee = excluded.max_fee, envelope = excluded.envelope,
    sent_ledger = excluded.sent_ledger, released_at = null, updated_at = now(),
    outcome = null, outcome_kind = null, fee_charged = null,
    project_id = case when ${outstanding(sql`excluded.id`)} = 0 then excluded.project_id else ${submissions}.project_id end`;

/**
 * The intents upserted (`up`) and, for intents whose submission existed (a retry, a resend), the
 * events of the statuses SEND changed: their statuses before (`prev`) are read in the statement's
 * snapshot. Intents nothing else has written (`fresh`) change no status: no read, no event.
 */
const upserted = (fresh: boolean) =>
  fresh
    ? sql`up as (${intentUpsert} returning id)`
    : sql`prev as (select s.id, s.status from ${submissions} s where s.id in (select id from input)),
  up as (${intentUpsert} returning ${changedRow(submissions as never, sql`true`)}, ${submissions}.status),
  moved as (select up.id, up.project_id, up.network, up.data, prev.status <> up.status as changed
    from up join prev on prev.id = up.id),
  ev as (${statusEvents(sql`moved`)})`;

/** Upserts the intents (none with a hold). */
const writeIntentsOnly = (fresh: boolean) =>
  new BatchStatement<IntentColumn>(
    fresh ? "submissions_intents" : "submissions_intents_resumed",
    (col) => sql`with ${intentInput(col)}, ${upserted(fresh)} select id from up`,
  );
const intentsOnly = { fresh: writeIntentsOnly(true), resumed: writeIntentsOnly(false) };

/**
 * Upserts the intents and journals each one's reservation unless one is outstanding; answers those
 * journaled. No join between the statement's parts (`up` runs whether read or not): with the row
 * counts of an `unnest` unknown, the planner joined them by nested loops, a batch's rows squared.
 */
const writeIntentsWithHolds = (fresh: boolean) =>
  new BatchStatement<IntentColumn>(
    fresh ? "submissions_intents_holds" : "submissions_intents_holds_resumed",
    (col) => sql`with ${intentInput(col)}, ${upserted(fresh)}
  insert into ${creditJournal} (project_id, kind, amount, submission_id, tx_hash)
  select input.project_id, 'reserve', -input.hold, input.id, input.hash from input
  where input.hold > 0 and ${outstanding(sql`input.id`)} = 0
  returning submission_id`,
  );
const intentsWithHolds = { fresh: writeIntentsWithHolds(true), resumed: writeIntentsWithHolds(false) };

/**
 * Records the outcomes and, for each submission whose project reserved credits, releases what is
 * outstanding and charges the fee (once). Answers a row per submission (its project) and one per
 * journal entry written (its kind and amount). Each submission's journal is read by an index probe
 * beside its row, and no part of the statement joins another (see `writeIntentsWithHolds`).
 */
const writeOutcomes = new BatchStatement<"id" | "outcome" | "kind" | "feeCharged" | "credits">(
  "submissions_outcomes",
  (col) => sql`with input (id, outcome, kind, fee_charged, fee, credits) as (
      select id, outcome::jsonb, kind, fee_charged, coalesce(fee_charged, 0), credits = 'true'
      from unnest(${col("id", "text")}, ${col("outcome", "text")}, ${col("kind", "text")},
        ${col("feeCharged", "bigint")}, ${col("credits", "text")}) as t (id, outcome, kind, fee_charged, credits)),
    upd as (
      update ${submissions} s set outcome = input.outcome, outcome_kind = input.kind,
        fee_charged = input.fee_charged, updated_at = now(),
        status = case when input.kind = 'success' then ${statusAfter("SUCCEEDED", sql`s.status`)}
          when input.fee_charged is not null then ${statusAfter("FAILED", sql`s.status`)}
          else ${statusAfter("REJECTED", sql`s.status`)} end
      from input cross join lateral (select
          coalesce(sum(c.amount) filter (where c.kind in ('reserve', 'release')), 0) as net,
          count(*) filter (where c.kind = 'reserve') as reserves, count(*) filter (where c.kind = 'charge') as charges
        from ${creditJournal} c where input.credits and c.submission_id = input.id) j
      cross join lateral (select o.status as before from ${submissions} o where o.id = input.id) o
      where s.id = input.id
      returning s.id, s.project_id, s.hash, input.fee, j.net, j.reserves, j.charges,
        case when input.kind = 'failure' and input.fee_charged is null then coalesce(
          input.outcome->'error'->'details'->'result_codes'->>'transaction', input.outcome->'error'->>'code') end
          as rejected, s.network, submission_json(s) as data, o.before <> s.status as changed),
    att as (update ${submissionAttempts} a set answer = upd.rejected, answered_at = now() from upd
      where upd.rejected is not null and a.submission_id = upd.id and a.hash = upd.hash and a.answer is null),
    ev as (${statusEvents(sql`upd`)}),
    entries as (
      select id, project_id, 'release' as kind, -net as amount, hash from upd
      where project_id is not null and net < 0
      union all
      select id, project_id, 'charge', -fee, hash from upd
      where project_id is not null and reserves > 0 and charges = 0 and fee > 0),
    ins as (insert into ${creditJournal} (project_id, kind, amount, submission_id, tx_hash)
      select project_id, kind, amount, id, hash from entries
      on conflict (submission_id) where kind = 'charge' do nothing returning submission_id, kind, amount)
    select id, project_id, null::text as kind, null::text as amount from upd
    union all
    select submission_id, null, kind, amount::text from ins`,
);

/** Locks the submissions' rows (those that exist yet), in one order: two batches cannot deadlock. */
const lockSubmissions = new BatchStatement<"ids">(
  "submissions_lock",
  (col) => sql`select id from ${submissions} where id = any(${col("ids", "text")}) order by id for update`,
);

/**
 * The submissions of these networks' inner hashes (amounts as text: either driver reads them alike).
 * One probe of the (network, inner_hash) index per hash (`lateral ... limit 1` keeps the planner from
 * a hash join over the whole table, which it picks while its statistics think the table is small).
 */
const submissionsByInnerHash = new BatchStatement<"networks" | "hashes">(
  "submissions_by_inner_hash",
  (col) => sql`select s.* from unnest(${col("networks", "text")}, ${col("hashes", "text")}) as t (network, inner_hash)
    join lateral (select s.id, s.network, s.inner_hash, s.hash, s.caller, s.project_id, s.max_fee::text as max_fee,
        s.envelope, s.sent_ledger, (extract(epoch from s.released_at) * 1000)::float8 as released_ms, s.outcome,
        s.fee_charged::text as fee_charged
      from ${submissions} s where s.network = t.network and s.inner_hash = t.inner_hash limit 1) s on true`,
);
/** The network took these fee-bumps: each attempt's answer, and its submission submitted (if it was pending). */
const writeAccepted = new BatchStatement<"id" | "hash" | "answer">(
  "submissions_accepted",
  (col) => sql`with input (id, hash, answer) as (
      select * from unnest(${col("id", "text")}, ${col("hash", "text")}, ${col("answer", "text")})),
    att as (update ${submissionAttempts} a set answer = input.answer, answered_at = now()
      from input where a.submission_id = input.id and a.hash = input.hash),
    upd as (update ${submissions} s set status = ${statusAfter("ACCEPTED", sql`s.status`)}, updated_at = now()
      from input where s.id = input.id and s.status in ${changedBy("ACCEPTED")}
      returning ${changedRow(sql`s`, sql`true`)})
    ${statusEvents(sql`upd`)}`,
);

type OutcomeWrite = { id: string; outcome: Outcome; feeCharged: bigint | null; credits: boolean };

export class SubmissionsRepo implements SubmissionStore {
  // writes and reads of the request path, grouped (group-commit.ts): one statement per batch, not per request
  private readonly intents: GroupCommit<Intent, boolean | RelayError>;
  private readonly outcomes: GroupCommit<OutcomeWrite, SettledCredits>;
  private readonly lookups: GroupCommit<{ network: string; innerHash: string }, SubmissionRecord | null>;
  private readonly accepted: GroupCommit<{ id: string; hash: string; answer: string }, true>;
  /** Called after a statement that may have changed statuses (and so written events) committed. */
  wrote: () => void = () => {};

  /**
   * `concurrency`: batches of one kind written at once (1 for a single connection). `checkBalance`:
   * several instances reserve credits of one project (each project actor sees only its own
   * instance's reservations), so a reservation is journaled only if the journal's balance covers it.
   * `oneSession`: the database runs one statement at a time, each on its own (PGlite: a transaction
   * holds it whole), so the journal statements run without the row locks and their transaction.
   */
  constructor(
    private readonly db: Db,
    concurrency = 1,
    private readonly checkBalance = false,
    private readonly oneSession = false,
  ) {
    this.intents = new GroupCommit((items) => this.writeIntents(items), { key: (i) => i.s.id, concurrency });
    this.outcomes = new GroupCommit((items) => this.writeOutcomes(items), { key: (o) => o.id, concurrency });
    this.lookups = new GroupCommit((items) => this.readByInnerHashes(items), { concurrency });
    this.accepted = new GroupCommit(
      async (items) => {
        await writeAccepted.run(this.db, {
          id: items.map((i) => i.id),
          hash: items.map((i) => i.hash),
          answer: items.map((i) => i.answer),
        });
        return items.map(() => true as const);
      },
      { key: (i) => i.id, concurrency },
    );
  }

  /** Runs `statement` in a transaction, after locking the submissions' rows (those that exist yet). */
  private async locked(ids: string[], statement: (tx: Db) => Promise<unknown>): Promise<unknown> {
    if (this.oneSession) return await statement(this.db);
    return await this.db.transaction(async (tx) => {
      await lockSubmissions.run(tx, { ids });
      return await statement(tx);
    });
  }

  /**
   * Upserts the intent and, with a hold, journals the reservation unless one is still outstanding
   * for this submission (a resumed intent): one statement for a batch of intents.
   */
  async recordIntent(s: SubmissionIntent, hold = 0n, fresh = false): Promise<boolean> {
    const r = await this.intents.run({ s, hold: s.projectId ? hold : 0n, fresh });
    this.wrote();
    if (r instanceof RelayError) throw r; // not written: nothing of it is sent
    return r;
  }

  private async writeIntents(items: Intent[]): Promise<(boolean | RelayError)[]> {
    const fresh = items.every((i) => i.fresh);
    if (items.every((i) => i.hold <= 0n)) {
      const columns = intentColumns(items);
      // a resumed intent reads its status before: after the row lock, as committed
      if (fresh) await intentsOnly.fresh.run(this.db, columns);
      else
        await this.locked(
          items.map((i) => i.s.id),
          (tx) => intentsOnly.resumed.run(tx, columns),
        );
      return items.map(() => false);
    }
    if (this.checkBalance) return await this.writeCoveredIntents(items);
    // ids nothing else has written yet: no row to lock, no journal entry to read (one statement, no transaction)
    const columns = intentColumns(items);
    const r = fresh
      ? await intentsWithHolds.fresh.run(this.db, columns)
      : await this.locked(
          items.map((i) => i.s.id),
          (tx) => intentsWithHolds.resumed.run(tx, columns),
        );
    const journaled = new Set(rowsOf<{ submission_id: string }>(r).map((x) => x.submission_id));
    return items.map((i) => journaled.has(i.s.id));
  }

  /**
   * Intents whose reservations the project's balance covers (the projects' rows locked, so that
   * instances reserve one after the other): each is upserted and journaled; the others are not
   * written and their requests answered INSUFFICIENT_CREDITS.
   */
  private async writeCoveredIntents(items: Intent[]): Promise<(boolean | RelayError)[]> {
    const ids = items.map((i) => i.s.id).sort();
    const projectIds = [...new Set(items.filter((i) => i.hold > 0n).map((i) => i.s.projectId!))].sort();
    return await this.db.transaction(async (tx) => {
      // submissions before projects: the order of every journaling statement (the trigger locks the project)
      await lockSubmissions.run(tx, { ids });
      const left = new Map(
        rowsOf<{ id: string; balance: string }>(
          await tx.execute(sql`select id, credit_balance::text as balance from ${projects}
            where id in ${projectIds} order by id for update`),
        ).map((r) => [r.id, BigInt(r.balance)]),
      );
      const reserved = new Set(
        rowsOf<{ id: string }>(
          await tx.execute(sql`select submission_id as id from ${creditJournal} where submission_id in ${ids}
            and kind in ('reserve', 'release') group by submission_id having sum(amount) <> 0`),
        ).map((r) => r.id),
      );
      const refused = new Set<string>();
      for (const { s, hold } of items) {
        if (hold <= 0n || reserved.has(s.id)) continue;
        const balance = left.get(s.projectId!) ?? 0n;
        if (balance < hold) refused.add(s.id);
        else left.set(s.projectId!, balance - hold);
      }
      const covered = items.filter((i) => !refused.has(i.s.id));
      const r = covered.length ? await intentsWithHolds.resumed.run(tx, intentColumns(covered)) : [];
      const journaled = new Set(rowsOf<{ submission_id: string }>(r).map((x) => x.submission_id));
      return items.map((i) =>
        refused.has(i.s.id)
          ? new RelayError("INSUFFICIENT_CREDITS", "the project's credit balance does not cover this fee", {
              required: i.hold.toString(),
            })
          : journaled.has(i.s.id),
      );
    });
  }

  /**
   * Records the outcome and, for a submission whose project reserved credits, releases what is
   * outstanding and charges the fee (once): one statement for a batch. The submission's project is
   * the one whose reservation is outstanding (the last to journal one), and the one charged.
   */
  async recordOutcome(
    id: string,
    outcome: Outcome,
    feeCharged: bigint | null,
    credits: boolean,
  ): Promise<SettledCredits> {
    const s = await this.outcomes.run({ id, outcome, feeCharged, credits });
    this.wrote();
    return s;
  }

  private async writeOutcomes(items: OutcomeWrite[]): Promise<SettledCredits[]> {
    const columns = {
      id: items.map((o) => o.id),
      outcome: items.map((o) => JSON.stringify(o.outcome)),
      kind: items.map((o) => o.outcome.kind),
      feeCharged: items.map((o) => o.feeCharged),
      credits: items.map((o) => o.credits),
    };
    // every row locked first (one session needs none): the statement after the lock reads each
    // submission's journal and status as committed, so that two settlements of one submission at once
    // neither journal nor announce its status change twice
    const r = await this.locked(
      items.map((o) => o.id),
      (tx) => writeOutcomes.run(tx, columns),
    );
    type Row = { id: string; project_id: string | null; kind: string | null; amount: string | null };
    const settled = new Map<string, SettledCredits>();
    for (const row of rowsOf<Row>(r)) {
      const s = settled.get(row.id) ?? { projectId: null, released: 0n, charged: 0n };
      if (row.kind === null) s.projectId = row.project_id;
      else if (row.kind === "release") s.released += BigInt(row.amount!);
      else s.charged -= BigInt(row.amount!);
      settled.set(row.id, s);
    }
    return items.map((o) => settled.get(o.id) ?? { projectId: null, released: 0n, charged: 0n });
  }

  async recordRefusal(r: {
    network: string;
    innerHash: string;
    caller: string;
    projectId: string | null;
    outcome: Outcome;
  }): Promise<void> {
    // a new submission is pending; the refusal is its first move (the machine's)
    const status = nextStatus("pending", "REJECTED");
    await this.db.execute(sql`insert into ${submissions}
        (id, network, inner_hash, hash, caller, project_id, max_fee, status, outcome_kind, outcome)
      values (${crypto.randomUUID()}, ${r.network}, ${r.innerHash}, ${r.innerHash}, ${r.caller}, ${r.projectId}, 0,
        ${status}, 'failure', ${JSON.stringify(r.outcome)}::jsonb)
      on conflict (network, inner_hash) do nothing`);
  }

  async release(id: string, sentLedger?: number | null): Promise<SettledCredits> {
    // only a submission still without an outcome, and (for recovery) not sent again since it was read
    const unchanged = sentLedger === undefined ? sql`true` : sql`sent_ledger is not distinct from ${sentLedger}`;
    const r = await this.locked([id], (tx) =>
      tx.execute(sql`with upd as (
        update ${submissions} set released_at = now(), status = ${statusAfter("EXPIRED", sql`status`)}
        where id = ${id} and outcome_kind is null and released_at is null and ${unchanged}
        returning ${changedRow(submissions as never, sql`true`)}, hash),
      ev as (${statusEvents(sql`upd`)}),
      j as (select ${outstanding(sql`${id}`)} as net),
      ins as (insert into ${creditJournal} (project_id, kind, amount, submission_id, tx_hash)
        select upd.project_id, 'release', -j.net, ${id}, upd.hash from upd, j where upd.project_id is not null and j.net < 0
        returning amount)
      select (select project_id from upd) as project_id, (select coalesce(sum(amount), 0) from ins) as released`),
    );
    this.wrote();
    const [row] = rowsOf<{ project_id: string | null; released: string | bigint }>(r);
    return { projectId: row?.project_id ?? null, released: BigInt(row?.released ?? 0), charged: 0n };
  }

  async recordAccepted(id: string, hash: string, answer: string): Promise<void> {
    await this.accepted.run({ id, hash, answer });
    this.wrote();
  }

  byInnerHash(network: string, innerHash: string): Promise<SubmissionRecord | null> {
    return this.lookups.run({ network, innerHash });
  }

  private async readByInnerHashes(
    items: { network: string; innerHash: string }[],
  ): Promise<(SubmissionRecord | null)[]> {
    const r = await submissionsByInnerHash.run(this.db, {
      networks: items.map((i) => i.network),
      hashes: items.map((i) => i.innerHash),
    });
    const found = new Map(rowsOf<SubmissionRow>(r).map((x) => [`${x.network}:${x.inner_hash}`, rowRecord(x)]));
    return items.map((i) => found.get(`${i.network}:${i.innerHash}`) ?? null);
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

/** A submission's row as `submissionsByInnerHash` reads it. */
interface SubmissionRow {
  id: string;
  network: string;
  inner_hash: string;
  hash: string;
  caller: string;
  project_id: string | null;
  max_fee: string;
  envelope: string | null;
  sent_ledger: number | null;
  released_ms: number | null;
  outcome: unknown;
  fee_charged: string | null;
}

function rowRecord(r: SubmissionRow): SubmissionRecord {
  return {
    id: r.id,
    network: r.network,
    innerHash: r.inner_hash,
    hash: r.hash,
    caller: r.caller,
    projectId: r.project_id,
    maxFee: BigInt(r.max_fee),
    envelope: r.envelope,
    sentLedger: r.sent_ledger,
    releasedAt: r.released_ms === null ? null : new Date(r.released_ms),
    outcome: readOutcome(r.outcome),
    feeCharged: r.fee_charged === null ? null : BigInt(r.fee_charged),
  };
}
