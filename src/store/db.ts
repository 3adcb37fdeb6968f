/**
 * The database: Postgres when DATABASE_URL is set, embedded PGlite under DATA_DIR otherwise (in a
 * thread of its own: pglite-thread.ts); the same schema and migrations (drizzle/) either way,
 * applied at open. `schema` puts every table (and the migrations journal) in a Postgres schema of
 * its own, which the tests use for isolation.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { drizzle as drizzlePg } from "drizzle-orm/postgres-js";
import { migrate as migratePg } from "drizzle-orm/postgres-js/migrator";
import { drizzle as drizzleLite } from "drizzle-orm/pglite";
import { migrate as migrateLite } from "drizzle-orm/pglite/migrator";
import type { PGlite } from "@electric-sql/pglite";
import postgres from "postgres";
import { sql } from "drizzle-orm";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import type { DatabaseMetrics } from "../kernel/metrics.ts";
import { SCALING_HINT } from "./instance-lock.ts";
import { PGliteThread } from "./pglite-thread.ts";

export type Db = PgDatabase<PgQueryResultHKT>;

export interface Database {
  db: Db;
  kind: "postgres" | "pglite";
  /** A cheap round trip, for /health. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

const MIGRATIONS = join(import.meta.dir, "../../drizzle");

export async function openDatabase(opts: {
  url?: string;
  dataDir: string;
  schema?: string;
  metrics?: DatabaseMetrics;
  /**
   * A relay instance's hold on a Postgres database: `alone` (it embeds something, the list says
   * what) holds it exclusively and is refused while any other instance holds it; `shared` (an
   * instance of a cluster) is refused while one that runs alone holds it. Unset: no hold (tools, tests).
   */
  instanceLock?: { alone: string[] } | "shared";
}): Promise<Database> {
  const migrationsSchema = opts.schema ?? "drizzle";
  if (opts.url) {
    const client = postgres(opts.url, {
      max: 10,
      onnotice: () => {},
      ...(opts.schema ? { connection: { search_path: opts.schema } } : {}),
    });
    const release = opts.instanceLock ? await holdInstanceLock(client, migrationsSchema, opts.instanceLock) : null;
    if (opts.schema) await client.unsafe(`create schema if not exists "${opts.schema.replace(/"/g, "")}"`);
    const db = drizzlePg(opts.metrics ? timedPostgres(client, opts.metrics) : client);
    await migratePg(db, { migrationsFolder: MIGRATIONS, migrationsSchema });
    return {
      db: db as unknown as Db,
      kind: "postgres",
      ping: () => ping(db as unknown as Db),
      close: async () => {
        release?.();
        await client.end();
      },
    };
  }
  const dir = join(opts.dataDir, "pglite");
  mkdirSync(dir, { recursive: true });
  // PGlite's interface as drizzle uses it, served from a thread of its own
  const thread = await PGliteThread.open(dir);
  const client = thread as unknown as PGlite;
  const db = drizzleLite(opts.metrics ? timedPglite(client, opts.metrics) : client);
  // a database that cannot be migrated is closed: its thread would keep the process alive
  await migrateLite(db, { migrationsFolder: MIGRATIONS, migrationsSchema }).catch(async (e) => {
    await thread.close();
    throw e;
  });
  return {
    db: db as unknown as Db,
    kind: "pglite",
    ping: () => ping(db as unknown as Db),
    close: () => thread.close(),
  };
}

/**
 * How long a start waits for the advisory lock before it refuses: the session of an instance that
 * died a moment ago (kill -9 and an immediate restart) ends once its backend reads the closed
 * connection, and that of an instance whose host vanished once the keepalives below give up.
 */
const EXCLUSIVE_WAIT_MS = 12_000;
const EXCLUSIVE_RETRY_MS = 200;

/**
 * A session-level advisory lock on the relay's schema, on a connection kept for it: exclusive for an
 * instance that runs alone, shared for the instances of a cluster, so that neither kind starts on a
 * database the other kind uses. Answers the release. The session asks the server for TCP keepalives
 * (5 s idle, then 3 probes 2 s apart), so that the lock of a relay whose host went away is released
 * in about 11 s rather than at the OS's default of two hours.
 */
async function holdInstanceLock(
  client: postgres.Sql,
  schema: string,
  mode: { alone: string[] } | "shared",
): Promise<() => void> {
  const conn = await client.reserve();
  const key = `stellar-sponsor-relay:${schema}`;
  for (const [name, seconds] of [
    ["idle", 5],
    ["interval", 2],
    ["count", 3],
  ] as const)
    await conn.unsafe(`set tcp_keepalives_${name} = ${seconds}`);
  for (const deadline = Date.now() + EXCLUSIVE_WAIT_MS; ; ) {
    const [row] =
      mode === "shared"
        ? await conn`select pg_try_advisory_lock_shared(hashtext(${key})) as locked`
        : await conn`select pg_try_advisory_lock(hashtext(${key})) as locked`;
    if (row?.locked) return () => conn.release(); // closing the pool closes this session, which releases the lock
    if (Date.now() >= deadline) break;
    await Bun.sleep(EXCLUSIVE_RETRY_MS);
  }
  conn.release();
  await client.end();
  throw new Error(
    mode === "shared"
      ? `a relay instance that runs alone (it embeds something) is using this database (schema ${schema}): ${SCALING_HINT}`
      : `another relay instance is using this database (schema ${schema}), and this one cannot share it ` +
          `because it uses ${mode.alone.join(", ")}: ${SCALING_HINT}`,
  );
}

async function ping(db: Db): Promise<boolean> {
  try {
    await db.execute(sql`select 1`);
    return true;
  } catch {
    return false;
  }
}

/** Reports a statement's duration when its promise settles (without consuming its result or error). */
function timed<T extends PromiseLike<unknown>>(metrics: DatabaseMetrics, query: string, p: T): T {
  const t0 = performance.now();
  const done = () => metrics.statement(query, (performance.now() - t0) / 1000);
  // Promise.prototype.then, not p.then: a postgres-js query is lazy and starts when its own then() is called
  Promise.prototype.then.call(p, done, done);
  return p;
}

/** Times every statement drizzle sends through postgres-js (`unsafe`), in transactions and savepoints too. */
function timedPostgres(sql: postgres.Sql, metrics: DatabaseMetrics): postgres.Sql {
  const unsafe = sql.unsafe;
  sql.unsafe = ((query: string, ...rest: never[]) =>
    timed(metrics, query, unsafe(query, ...rest))) as typeof sql.unsafe;
  const wrapScope = (name: "begin" | "savepoint") => {
    const open = (sql as unknown as Record<string, ((...a: unknown[]) => unknown) | undefined>)[name];
    if (!open) return;
    (sql as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
      const fn = args.pop() as (tx: postgres.Sql) => unknown;
      return open(...args, (tx: postgres.Sql) => fn(timedPostgres(tx, metrics)));
    };
  };
  wrapScope("begin");
  wrapScope("savepoint");
  return sql;
}

/** Times every statement drizzle sends through PGlite (`query`), in transactions too. */
function timedPglite(client: PGlite, metrics: DatabaseMetrics): PGlite {
  const query = client.query.bind(client);
  client.query = ((q: string, ...rest: never[]) => timed(metrics, q, query(q, ...rest))) as typeof client.query;
  const transaction = client.transaction.bind(client);
  client.transaction = ((fn: (tx: Parameters<Parameters<PGlite["transaction"]>[0]>[0]) => Promise<unknown>) =>
    transaction((tx) => {
      const txQuery = tx.query.bind(tx);
      tx.query = ((q: string, ...rest: never[]) => timed(metrics, q, txQuery(q, ...rest))) as typeof tx.query;
      return fn(tx);
    })) as typeof client.transaction;
  return client;
}
