/**
 * Fresh databases for the store's tests: PGlite in a temporary folder (a copy of the migrated
 * template, see pglite.ts), or Postgres in a schema of its own when TEST_DATABASE_URL is set. All
 * are removed after the test file's last test.
 */
import { afterAll, beforeAll } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { openDatabase, type Database } from "../../src/store/db.ts";
import { pgliteTemplates, seedPglite } from "./pglite.ts";

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;

/** Opens databases named after `prefix`; registers their removal. */
export function storeDatabases(prefix: string): (kind: "pglite" | "postgres") => Promise<Database> {
  const dirs: string[] = [];
  const schemas: string[] = [];
  // the first PGlite of a test process waits for its templates (initdb: seconds of a core, more on a busy
  // machine): waited for here, with room, so that a test's own time is its own
  beforeAll(() => pgliteTemplates(), { timeout: 180_000 });
  afterAll(async () => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    if (!TEST_DATABASE_URL || !schemas.length) return;
    const c = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {} });
    for (const s of schemas) await c.unsafe(`drop schema if exists "${s}" cascade`);
    await c.end();
  });
  return async (kind) => {
    const dataDir = mkdtempSync(join(tmpdir(), `${prefix}-`));
    dirs.push(dataDir);
    if (kind === "pglite") {
      await seedPglite(dataDir);
      return await openDatabase({ dataDir });
    }
    const schema = `${prefix.replace(/\W/g, "_")}_${crypto.randomUUID().replace(/-/g, "").slice(0, 12)}`;
    schemas.push(schema);
    return await openDatabase({ url: TEST_DATABASE_URL, dataDir, schema });
  };
}

export { rowsOf } from "../../src/store/batch-sql.ts";
