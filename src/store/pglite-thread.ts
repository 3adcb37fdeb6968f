/**
 * The embedded database (PGlite) in a thread of its own (`pglite-worker.ts`): its WASM Postgres
 * takes 0.4 to 0.5 ms of CPU per sponsored request, which on the relay's event loop delayed
 * every other request by as much. This is the part of PGlite's interface drizzle uses: `query`,
 * `transaction` (whose queries run in it, and which holds the database until it ends), `close`.
 * Rows come back as the worker's PGlite built them (structured clone keeps bigints, dates, bytes
 * and JSON values). Type parsers must keep the raw text (drizzle's do); others are refused.
 */
import type { QueryOptions, Results } from "@electric-sql/pglite";

export type Request =
  | { id: number; op: "open"; dir: string }
  | {
      id: number;
      op: "query";
      text: string;
      params?: unknown[];
      rowMode?: "array" | "object";
      /** Type ids whose values stay text. */
      raw?: number[];
      tx?: number;
    }
  | { id: number; op: "begin" }
  | { id: number; op: "end"; tx: number; commit: boolean }
  | { id: number; op: "close" };

type Payload = Request extends infer R ? (R extends { id: number } ? Omit<R, "id"> : never) : never;

export type Reply =
  | { id: number; result: unknown }
  | { id: number; error: { message: string; fields: Record<string, unknown> } };

/** What a transaction's callback gets: queries that run in it. */
export interface ThreadTransaction {
  query<T>(text: string, params?: unknown[], options?: QueryOptions): Promise<Results<T>>;
}

export class PGliteThread {
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private next = 1;
  private dead: Error | null = null;
  private closing: Promise<void> | null = null;

  private constructor(private readonly worker: Worker) {
    worker.onmessage = (event: MessageEvent<Reply>) => {
      const r = event.data;
      const p = this.pending.get(r.id);
      if (!p) return;
      this.pending.delete(r.id);
      if ("error" in r) p.reject(Object.assign(new Error(r.error.message), r.error.fields));
      else p.resolve(r.result);
    };
    // the message's first line (Bun adds an excerpt of the source)
    const failed = (why: string) =>
      this.fail(new Error(`the embedded database's thread failed: ${why.split("\n")[0]}`));
    worker.onerror = (event) => failed(event.message);
    worker.addEventListener("close", () => failed("it ended"));
  }

  /** Starts the thread and opens the database in `dir`. */
  static async open(dir: string): Promise<PGliteThread> {
    const t = new PGliteThread(new Worker(new URL("./pglite-worker.ts", import.meta.url).href));
    try {
      await t.call({ op: "open", dir });
    } catch (e) {
      t.worker.terminate();
      throw e;
    }
    return t;
  }

  query<T>(text: string, params?: unknown[], options?: QueryOptions): Promise<Results<T>> {
    return this.call({ op: "query", text, params, ...wire(options) }) as Promise<Results<T>>;
  }

  /** Runs `fn` in a transaction: committed when it resolves, rolled back when it throws. */
  async transaction<T>(fn: (tx: ThreadTransaction) => Promise<T>): Promise<T> {
    const tx = (await this.call({ op: "begin" })) as number;
    const handle: ThreadTransaction = {
      query: <R>(text: string, params?: unknown[], options?: QueryOptions) =>
        this.call({ op: "query", text, params, tx, ...wire(options) }) as Promise<Results<R>>,
    };
    let result: T;
    try {
      result = await fn(handle);
    } catch (e) {
      await this.call({ op: "end", tx, commit: false }).catch(() => {}); // the callback's error is the one to tell
      throw e;
    }
    await this.call({ op: "end", tx, commit: true });
    return result;
  }

  /** Closes the database and ends the thread (once, however often it is called). */
  close(): Promise<void> {
    this.closing ??= (async () => {
      try {
        if (!this.dead) await this.call({ op: "close" });
      } finally {
        this.fail(new Error("the embedded database is closed"));
        this.worker.terminate();
      }
    })();
    return this.closing;
  }

  private call(payload: Payload): Promise<unknown> {
    if (this.dead) return Promise.reject(this.dead);
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ ...payload, id });
    });
  }

  /** Rejects every call waiting, and every later one. */
  private fail(e: Error): void {
    this.dead ??= e;
    for (const p of this.pending.values()) p.reject(e);
    this.pending.clear();
  }
}

/** A query's options as the worker takes them (parsers by type id; each must keep the text). */
function wire(options: QueryOptions | undefined): { rowMode?: "array" | "object"; raw?: number[] } {
  if (!options) return {};
  const raw = options.parsers ? Object.keys(options.parsers).map(Number) : undefined;
  for (const oid of raw ?? []) {
    if (options.parsers![oid]!("0") !== "0") throw new Error(`type ${oid}: only parsers that keep the text`);
  }
  if (options.serializers || options.blob || options.onNotice || options.paramTypes)
    throw new Error("the embedded database's thread takes rowMode and text-keeping parsers only");
  return { ...(options.rowMode ? { rowMode: options.rowMode } : {}), ...(raw ? { raw } : {}) };
}
