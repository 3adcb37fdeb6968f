/** SQL pieces for statements that write or read a whole batch (group-commit.ts) at once. */
import { sql, type SQL } from "drizzle-orm";

/**
 * One column of a batch as a single array parameter (its values as text, cast by the statement): a
 * batch's statement has the same text and parameter count whatever its size, so the driver and the
 * server prepare it once, and building it costs the same for 1 row or 500.
 */
export const column = (values: (string | number | bigint | boolean | null)[], type: string): SQL =>
  sql`${sql.param(values.map((v) => (v === null ? null : String(v))))}::${sql.raw(type)}[]`;

/** Rows of a raw statement, from either driver (postgres-js answers an array, PGlite `{ rows }`). */
export const rowsOf = <T>(r: unknown): T[] => (Array.isArray(r) ? r : (r as { rows: T[] }).rows);
