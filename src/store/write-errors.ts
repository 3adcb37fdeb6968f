/** What a failed write means, read from the database's error (Postgres and PGlite alike). */

/** Whether a write failed on the one-submission-per-inner-hash rule (Postgres and PGlite: SQLSTATE 23505). */
export function innerHashTaken(e: unknown): boolean {
  for (
    let cur = e;
    cur instanceof Error || (cur && typeof cur === "object");
    cur = (cur as { cause?: unknown }).cause
  ) {
    const { code, constraint_name, constraint } = cur as {
      code?: string;
      constraint_name?: string;
      constraint?: string;
    };
    if (
      code === "23505" &&
      (constraint_name ?? constraint ?? "submissions_network_inner_hash") === "submissions_network_inner_hash"
    )
      return true;
    if (!(cur as { cause?: unknown }).cause) break;
  }
  return false;
}
