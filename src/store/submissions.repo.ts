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
import { and, asc, eq, isNotNull, isNull, gte, lt, sql } from "drizzle-orm";
import { creditJournal, projects, submissions } from "./schema.ts";
import { statusAfter } from "./status-sql.ts";
import { nextStatus } from "../../actors/sponsor/submission.machine.ts";
import { RelayError } from "../kernel/errors.ts";
import type { Db } from "./db.ts";
import { record, rowRecord, type SubmissionRow } from "./submission-rows.ts";
import { GroupCommit } from "./group-commit.ts";
import { rowsOf } from "./batch-sql.ts";
import {
  changedRow,
  intentColumns,
  intentsOnly,
  intentsWithHolds,
  lockSubmissions,
  outstanding,
  statusEvents,
  submissionsByInnerHash,
  writeAccepted,
  writeOutcomes,
  type Intent,
} from "./submissions.sql.ts";
import type { HeldTx, Outcome, SettledCredits, SubmissionIntent, SubmissionRecord, SubmissionStore } from "./types.ts";

/** A network's submissions with no outcome whose reservation was not given back. */
const owed = (network: string) => [
  eq(submissions.network, network),
  isNull(submissions.outcomeKind),
  isNull(submissions.releasedAt),
];

/** Bytes of held transactions one intents' batch writes at most (its copies on the way are transient memory). */
const HELD_BYTES_PER_BATCH = 256 * 1024;

type OutcomeWrite = { id: string; outcome: Outcome; feeCharged: bigint | null; credits: boolean };

export class SubmissionsRepo implements SubmissionStore {
  // writes and reads of the request path, grouped (group-commit.ts): one statement per batch, not per request
  private readonly intents: GroupCommit<Intent, boolean | RelayError>;
  private readonly outcomes: GroupCommit<OutcomeWrite, SettledCredits>;
  private readonly lookups: GroupCommit<{ network: string; innerHash: string }, SubmissionRecord | null>;
  private readonly accepted: GroupCommit<{ id: string; hash: string; answer: string }, true>;

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
    /** Called after a statement that may have changed statuses (and so written events) committed. */
    private readonly wrote: () => void = () => {},
  ) {
    // held transactions (order flow) carry the client's transaction: a batch of them is kept small
    this.intents = new GroupCommit((items) => this.writeIntents(items), {
      key: (i) => i.s.id,
      concurrency,
      size: (i) => i.s.held?.transaction.length ?? 0,
      maxBytes: HELD_BYTES_PER_BATCH,
    });
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
      // bookkeeping after the send: the intents (each of which a send waits for) go first
      { key: (i) => i.id, concurrency, deferWhile: () => this.intents.busy, maxDeferMs: 50 },
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
    expired?: boolean;
  }): Promise<void> {
    // a new submission is pending; the refusal is its first move (the machine's)
    const status = nextStatus("pending", r.expired ? "EXPIRED" : "REJECTED");
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

  async takeUserHold(id: string) {
    const r = await this.db.execute(sql`with old as (
        select id, user_hold from ${submissions} where id = ${id} and user_hold is not null for update)
      update ${submissions} s set user_hold = null from old where s.id = old.id
      returning old.user_hold as hold, s.project_id, s.end_user`);
    const [row] = rowsOf<{ hold: { day: string; grant: string }; project_id: string | null; end_user: string | null }>(
      r,
    );
    if (!row?.project_id || !row.end_user) return null;
    const hold = typeof row.hold === "string" ? JSON.parse(row.hold) : row.hold;
    return { projectId: row.project_id, account: row.end_user, day: hold.day, grant: BigInt(hold.grant) };
  }

  async clearHeld(id: string): Promise<void> {
    await this.db.update(submissions).set({ held: null }).where(eq(submissions.id, id));
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
      .where(and(...owed(network), isNull(submissions.held), lt(submissions.updatedAt, before)))
      .orderBy(asc(submissions.updatedAt))
      .limit(limit);
    return rows.map(record);
  }

  async held(network: string, limit: number): Promise<(SubmissionRecord & { held: HeldTx })[]> {
    const rows = await this.db
      .select()
      .from(submissions)
      .where(and(...owed(network), isNotNull(submissions.held)))
      .orderBy(asc(submissions.createdAt))
      .limit(limit);
    return rows.map((r) => ({ ...record(r), held: r.held! }));
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
