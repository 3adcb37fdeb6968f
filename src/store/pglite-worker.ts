/**
 * The embedded database's thread (`pglite-thread.ts` starts it): PGlite runs here, so its WASM
 * Postgres does not take the relay's event loop while it executes a statement. Answers each
 * message by its id: a query (in an open transaction, or on its own), a transaction's begin and
 * end, and close. PGlite still runs one statement at a time, and an open transaction holds it whole.
 */
import { PGlite, type QueryOptions, type Transaction } from "@electric-sql/pglite";
import type { Reply, Request } from "./pglite-thread.ts";

declare const self: Worker;

let pg: PGlite | null = null;
/** Open transactions by id: their handle, and how to end them (commit or roll back). */
const open = new Map<number, { tx: Transaction; end: (commit: boolean, id: number) => void }>();

/** Answers a message; an answer that cannot be sent (cloned) answers an error instead. */
function reply(r: Reply): void {
  try {
    self.postMessage(r);
  } catch (e) {
    const message = `the embedded database's answer could not be sent: ${String(e)}`;
    self.postMessage({ id: r.id, error: { message, fields: {} } });
  }
}

/** Kinds of values an error's field may have to be sent (PGlite's also holds the query's options). */
const PLAIN = new Set(["string", "number", "boolean", "bigint"]);

/** A query error as plain data: its message and its plain fields (code, detail, constraint...). */
function failure(id: number, e: unknown): void {
  const fields: Record<string, unknown> = {};
  if (e instanceof Error) for (const [k, v] of Object.entries(e)) if (PLAIN.has(typeof v)) fields[k] = v;
  reply({ id, error: { message: e instanceof Error ? e.message : String(e), fields } });
}

/** Type parsers that keep the text (drizzle asks that of dates, timestamps and intervals). */
function options(raw: number[] | undefined, rowMode: "array" | "object" | undefined): QueryOptions {
  const parsers = raw ? Object.fromEntries(raw.map((oid) => [oid, (v: string) => v])) : undefined;
  return { ...(rowMode ? { rowMode } : {}), ...(parsers ? { parsers } : {}) };
}

function begin(id: number): void {
  let endId = id;
  db()
    .transaction(async (tx) => {
      const commit = await new Promise<boolean>((end) => {
        open.set(id, {
          tx,
          end: (c, at) => {
            endId = at;
            end(c);
          },
        });
        reply({ id, result: id });
      });
      if (!commit) await tx.rollback();
    })
    .then(
      () => reply({ id: endId, result: null }),
      (e) => failure(endId, e),
    )
    .finally(() => open.delete(id));
}

function db(): PGlite {
  if (!pg) throw new Error("the embedded database is not open");
  return pg;
}

self.onmessage = async (event: MessageEvent<Request>) => {
  const m = event.data;
  try {
    switch (m.op) {
      case "open":
        pg = new PGlite(m.dir);
        await pg.waitReady;
        reply({ id: m.id, result: null });
        // opening (a new database's initdb above all) leaves hundreds of MB of garbage this thread would keep
        setTimeout(() => Bun.gc(true), 100);
        return;
      case "query": {
        const on = m.tx === undefined ? db() : open.get(m.tx)?.tx;
        if (!on) throw new Error("the transaction has ended");
        const r = await on.query(m.text, m.params, options(m.raw, m.rowMode));
        return reply({ id: m.id, result: { rows: r.rows, fields: r.fields, affectedRows: r.affectedRows } });
      }
      case "begin":
        return begin(m.id);
      case "end": {
        const t = open.get(m.tx);
        if (!t) throw new Error("the transaction has ended");
        return t.end(m.commit, m.id);
      }
      case "close":
        await pg?.close();
        pg = null;
        return reply({ id: m.id, result: null });
    }
  } catch (e) {
    failure(m.id, e);
  }
};
