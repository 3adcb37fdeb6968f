/**
 * The submissions' batch statements (one statement for a batch of a kind), used by
 * submissions.repo.ts: intents with their attempts and reservations, acceptances, outcomes with
 * their releases and charges, and the status events of every status they change (the statuses
 * themselves from the lifecycle machine, status-sql.ts).
 */
import { sql, type SQL } from "drizzle-orm";
import { creditJournal, events, submissionAttempts, submissions } from "./schema.ts";
import { changedBy, statusAfter } from "./status-sql.ts";
import { BatchStatement } from "./batch-sql.ts";
import type { SubmissionIntent } from "./types.ts";

/** The journal's net reserve for a submission (negative while a reservation is outstanding). */
export const outstanding = (submissionId: SQL) =>
  sql`(select coalesce(sum(amount), 0) from ${creditJournal} where submission_id = ${submissionId} and kind in ('reserve', 'release'))`;

export type Intent = { s: SubmissionIntent; hold: bigint; fresh: boolean };
type IntentColumn =
  | "id"
  | "network"
  | "innerHash"
  | "hash"
  | "caller"
  | "projectId"
  | "endUser"
  | "userHold"
  | "maxFee"
  | "envelope"
  | "sentLedger"
  | "feeBid"
  | "channel"
  | "heldTx"
  | "heldAccount"
  | "heldSequence"
  | "hold";
type IntentColumns = Record<IntentColumn, (string | number | bigint | null)[]>;

/** The intents' columns, for a statement of `intentInput`. */
export function intentColumns(items: Intent[]): IntentColumns {
  const of = <T>(f: (i: Intent) => T) => items.map(f);
  return {
    id: of((i) => i.s.id),
    network: of((i) => i.s.network),
    innerHash: of((i) => i.s.innerHash),
    hash: of((i) => i.s.hash),
    caller: of((i) => i.s.caller),
    projectId: of((i) => i.s.projectId),
    endUser: of((i) => i.s.endUser ?? null),
    userHold: of((i) =>
      i.s.userHold ? JSON.stringify({ day: i.s.userHold.day, grant: i.s.userHold.grant.toString() }) : null,
    ),
    maxFee: of((i) => i.s.maxFee),
    envelope: of((i) => i.s.envelope),
    sentLedger: of((i) => i.s.sentLedger),
    feeBid: of((i) => i.s.feeBid),
    channel: of((i) => i.s.channel),
    // a held transaction's parts as they are (its jsonb built by the statement: no copy made here)
    heldTx: of((i) => i.s.held?.transaction ?? null),
    heldAccount: of((i) => i.s.held?.account ?? null),
    heldSequence: of((i) => i.s.held?.sequence ?? null),
    hold: of((i) => i.hold),
  };
}

/** The intents as rows of a `with` clause named `input`. */
const intentInput = (col: (key: IntentColumn, type: string) => SQL): SQL =>
  sql`input (id, network, inner_hash, hash, caller, project_id, end_user, user_hold, max_fee, envelope, sent_ledger,
      fee_bid, channel, held_tx, held_account, held_sequence, hold)
    as (select * from unnest(${col("id", "text")}, ${col("network", "text")}, ${col("innerHash", "text")},
      ${col("hash", "text")}, ${col("caller", "text")}, ${col("projectId", "text")}, ${col("endUser", "text")},
      ${col("userHold", "jsonb")}, ${col("maxFee", "bigint")},
      ${col("envelope", "text")}, ${col("sentLedger", "integer")}, ${col("feeBid", "bigint")},
      ${col("channel", "text")}, ${col("heldTx", "text")}, ${col("heldAccount", "text")},
      ${col("heldSequence", "text")}, ${col("hold", "bigint")})),
  attempt as (insert into ${submissionAttempts} (submission_id, hash, fee_bid, channel)
    select id, hash, fee_bid, channel from input where channel is not null on conflict do nothing)`;

/**
 * The `transaction.status` events of a statement's changed rows, written by the statement that
 * changes them: `cte` answers id, project_id, network, data (the submission as the lookup answers
 * it, `submission_json`) and changed (whether its status changed; a new row makes no event).
 */
export const statusEvents = (cte: SQL) => sql`insert into ${events} (type, project_id, network, submission_id, data)
  select 'transaction.status', project_id, network, id, data from ${cte} where changed`;

/** What a statement that changes statuses answers for `statusEvents` (`s`: the submission row as written). */
export const changedRow = (s: SQL, changed: SQL) =>
  sql`${s}.id, ${s}.project_id, ${s}.network, submission_json(${s}) as data, ${changed} as changed`;

/**
 * Upserts the rows of `input` (a resumed intent keeps its project while its reservation is
 * outstanding; a rejected or expired one sent again is pending again), and records each as an attempt
 * (a held one, nothing of it sent, has none). A held transaction's `held` stays when it is sent: the
 * relay owes it an outcome until one is recorded (or its run answers 504, clearHeld).
 */
const intentUpsert = sql`insert into ${submissions}
    (id, network, inner_hash, hash, caller, project_id, end_user, user_hold, max_fee, envelope, sent_ledger, held)
  select id, network, inner_hash, hash, caller, project_id, end_user, user_hold, max_fee, envelope, sent_ledger,
    case when held_tx is null then null
      else jsonb_build_object('transaction', held_tx, 'account', held_account, 'sequence', held_sequence) end
  from input
  on conflict (id) do update set status = ${statusAfter("SEND", sql`${submissions}.status`)}, hash = excluded.hash, max_fee = excluded.max_fee, envelope = excluded.envelope,
    sent_ledger = excluded.sent_ledger, held = coalesce(excluded.held, ${submissions}.held), released_at = null,
    updated_at = now(),
    outcome = null, outcome_kind = null, fee_charged = null,
    user_hold = coalesce(${submissions}.user_hold, excluded.user_hold),
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
export const intentsOnly = { fresh: writeIntentsOnly(true), resumed: writeIntentsOnly(false) };

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
export const intentsWithHolds = { fresh: writeIntentsWithHolds(true), resumed: writeIntentsWithHolds(false) };

/**
 * Records the outcomes and, for each submission whose project reserved credits, releases what is
 * outstanding and charges the fee (once). Answers a row per submission (its project) and one per
 * journal entry written (its kind and amount). Each submission's journal is read by an index probe
 * beside its row, and no part of the statement joins another (see `writeIntentsWithHolds`).
 */
export const writeOutcomes = new BatchStatement<"id" | "outcome" | "kind" | "feeCharged" | "credits">(
  "submissions_outcomes",
  (col) => sql`with input (id, outcome, kind, fee_charged, fee, credits) as (
      select id, outcome::jsonb, kind, fee_charged, coalesce(fee_charged, 0), credits = 'true'
      from unnest(${col("id", "text")}, ${col("outcome", "text")}, ${col("kind", "text")},
        ${col("feeCharged", "bigint")}, ${col("credits", "text")}) as t (id, outcome, kind, fee_charged, credits)),
    upd as (
      update ${submissions} s set outcome = input.outcome, outcome_kind = input.kind,
        fee_charged = input.fee_charged, held = null, updated_at = now(),
        status = case when input.kind = 'success' then ${statusAfter("SUCCEEDED", sql`s.status`)}
          when input.fee_charged is not null then ${statusAfter("FAILED", sql`s.status`)}
          when input.outcome->'error'->'details'->>'status' = 'expired' then ${statusAfter("EXPIRED", sql`s.status`)}
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
export const lockSubmissions = new BatchStatement<"ids">(
  "submissions_lock",
  (col) => sql`select id from ${submissions} where id = any(${col("ids", "text")}) order by id for update`,
);

/**
 * The submissions of these networks' inner hashes (amounts as text: either driver reads them alike).
 * One probe of the (network, inner_hash) index per hash (`lateral ... limit 1` keeps the planner from
 * a hash join over the whole table, which it picks while its statistics think the table is small).
 */
export const submissionsByInnerHash = new BatchStatement<"networks" | "hashes">(
  "submissions_by_inner_hash",
  (col) => sql`select s.* from unnest(${col("networks", "text")}, ${col("hashes", "text")}) as t (network, inner_hash)
    join lateral (select s.id, s.network, s.inner_hash, s.hash, s.caller, s.project_id, s.max_fee::text as max_fee,
        s.envelope, s.sent_ledger, (extract(epoch from s.released_at) * 1000)::float8 as released_ms, s.outcome,
        s.fee_charged::text as fee_charged, s.status, s.user_hold, s.held
      from ${submissions} s where s.network = t.network and s.inner_hash = t.inner_hash limit 1) s on true`,
);
/** The network took these fee-bumps: each attempt's answer, and its submission submitted (if it was pending). */
export const writeAccepted = new BatchStatement<"id" | "hash" | "answer">(
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
