/**
 * The database: Postgres when DATABASE_URL is set, embedded PGlite under DATA_DIR otherwise; the
 * same schema and migrations (drizzle/) either way, applied at open. `schema` puts every table (and
 * the migrations journal) in a Postgres schema of its own, which the tests use for isolation.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { drizzle as drizzlePg } from "drizzle-orm/postgres-js";
import { migrate as migratePg } from "drizzle-orm/postgres-js/migrator";
import { drizzle as drizzleLite } from "drizzle-orm/pglite";
import { migrate as migrateLite } from "drizzle-orm/pglite/migrator";
import { PGlite } from "@electric-sql/pglite";
import postgres from "postgres";
import { sql } from "drizzle-orm";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";

export type Db = PgDatabase<PgQueryResultHKT>;

export interface Database {
  db: Db;
  kind: "postgres" | "pglite";
  /** A cheap round trip, for /health. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

const MIGRATIONS = join(import.meta.dir, "../../drizzle");

export async function openDatabase(opts: { url?: string; dataDir: string; schema?: string }): Promise<Database> {
  const migrationsSchema = opts.schema ?? "drizzle";
  if (opts.url) {
    const client = postgres(opts.url, { max: 10, onnotice: () => {}, ...(opts.schema ? { connection: { search_path: opts.schema } } : {}) });
    if (opts.schema) await client.unsafe(`create schema if not exists "${opts.schema.replace(/"/g, "")}"`);
    const db = drizzlePg(client);
    await migratePg(db, { migrationsFolder: MIGRATIONS, migrationsSchema });
    return { db: db as unknown as Db, kind: "postgres", ping: () => ping(db as unknown as Db), close: () => client.end() };
  }
  const dir = join(opts.dataDir, "pglite");
  mkdirSync(dir, { recursive: true });
  const client = new PGlite(dir);
  const db = drizzleLite(client);
  await migrateLite(db, { migrationsFolder: MIGRATIONS, migrationsSchema });
  return { db: db as unknown as Db, kind: "pglite", ping: () => ping(db as unknown as Db), close: () => client.close() };
}

async function ping(db: Db): Promise<boolean> {
  try {
    await db.execute(sql`select 1`);
    return true;
  } catch {
    return false;
  }
}
