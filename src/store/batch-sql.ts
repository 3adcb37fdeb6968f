/** Statements that write or read a whole batch (group-commit.ts) at once. */
import { sql, type Query, type SQL } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import type { Db } from "./db.ts";

type Value = string | number | bigint | boolean | null;

const dialect = new PgDialect();

/**
 * A statement over a batch whose every parameter is one column of it (an array of the values as
 * text, cast by the statement): its text is the same for 1 row or 500. So drizzle builds it once
 * (the first run), and it runs as a named statement, which the driver prepares once per connection
 * (the server parses and plans it once). `build` gets the column for a name: `col("id", "text")`
 * is the parameter `$n::text[]` that run's `columns.id` fills.
 */
export class BatchStatement<K extends string> {
  private query: Query | null = null;

  constructor(
    private readonly name: string,
    private readonly build: (col: (key: K, type: string) => SQL) => SQL,
  ) {}

  /** Runs it on `db` (or a transaction) with each column's values; answers the driver's result. */
  run(db: Db, columns: Record<K, Value[]>): Promise<unknown> {
    this.query ??= dialect.sqlToQuery(this.build((key, type) => sql`${sql.placeholder(key)}::${sql.raw(type)}[]`));
    const values: Record<string, string> = {};
    for (const key in columns) values[key] = arrayLiteral(columns[key]);
    return db._.session.prepareQuery(this.query, undefined, this.name, false).execute(values);
  }
}

/** The characters that an array literal's quoted element must escape. */
const SPECIALS = /["\\]/g;

/**
 * A column as Postgres's array literal (`{"a",NULL,"b"}`), which both drivers send as it is for an
 * array parameter. Built here in one pass: the drivers' own serializers run two replacements over
 * every value, each value of a batch (its envelopes, its outcomes) a few hundred characters.
 */
export function arrayLiteral(values: Value[]): string {
  let out = "{";
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (i > 0) out += ",";
    if (v === null) out += "NULL";
    else out += `"${String(v).replace(SPECIALS, "\\$&")}"`;
  }
  return `${out}}`;
}

/** Rows of a raw statement, from either driver (postgres-js answers an array, PGlite `{ rows }`). */
export const rowsOf = <T>(r: unknown): T[] => (Array.isArray(r) ? r : (r as { rows: T[] }).rows);
