/**
 * A submission's status change in SQL, from the lifecycle machine (actors/sponsor/submission.machine.ts):
 * `statusAfter("ACCEPTED", sql`s.status`)` is `case s.status when 'pending' then 'submitted' else
 * s.status end`. The statements that change a status write it with this, so that the machine's
 * transitions are the only ones the database sees; each statement also writes the events of the
 * statuses it changed (submissions.repo.ts, `statusEvents`).
 */
import { sql, type SQL } from "drizzle-orm";
import { statusTable, type SubmissionEvent } from "../../actors/sponsor/submission.machine.ts";

const cache = new Map<string, string>();

export function statusAfter(event: SubmissionEvent["type"], column: SQL): SQL {
  let whens = cache.get(event);
  if (whens === undefined) {
    // the statuses are the machine's own words (a fixed list), never input
    whens = statusTable(event)
      .map(([from, to]) => `when '${from}' then '${to}'`)
      .join(" ");
    cache.set(event, whens);
  }
  return whens ? sql`(case ${column} ${sql.raw(whens)} else ${column} end)` : column;
}

/** The statuses `event` changes, as an SQL list (`status in (...)`: a statement touches no row it leaves as is). */
export function changedBy(event: SubmissionEvent["type"]): SQL {
  return sql.raw(
    `(${statusTable(event)
      .map(([from]) => `'${from}'`)
      .join(", ")})`,
  );
}
