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

/** The SQLSTATE of a database error (Postgres and PGlite; drizzle wraps it in `cause`), if any. */
export function sqlState(e: unknown): string | undefined {
  for (let cur = e, depth = 0; cur && typeof cur === "object" && depth < 5; depth++) {
    const { code, cause } = cur as { code?: unknown; cause?: unknown };
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) return code;
    cur = cause;
  }
  return undefined;
}

/** numeric_value_out_of_range: a sum past what its column holds (int8 for balances). */
export const OUT_OF_RANGE = "22003";
