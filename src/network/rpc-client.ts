/**
 * A JSON-RPC 2.0 client for Stellar RPC with a timeout on every call and the shape of every answer
 * checked (TypeBox, compiled once per method): an upstream that hangs, answers slowly, closes the
 * socket, or answers garbage, `{}`, wrong types or another request's id is an `RpcFailure` with a
 * message that says which, never an undefined field the caller trips on.
 *
 * `batched` calls made in one turn of the event loop travel as one JSON-RPC batch (an array in one
 * HTTP request; stellar-rpc's HTTP bridge takes them). An upstream that refuses a batch (HTTP 400,
 * 405, 413, 415 or 422, or a JSON-RPC error for the request as a whole) has not acted on it: its
 * calls are sent again one by one, and so is every call after.
 */
import { Type, type Static, type TSchema } from "@sinclair/typebox";
import { TypeCompiler, type TypeCheck } from "@sinclair/typebox/compiler";
import type { Logger } from "../kernel/log.ts";

/** Why a call failed: the upstream could not be reached in time, or its answer was not usable. */
export class RpcFailure extends Error {
  constructor(
    readonly method: string,
    readonly kind: "unreachable" | "timeout" | "bad_answer" | "rpc_error",
    message: string,
  ) {
    super(`${method}: ${message}`);
  }
}

const checks = new WeakMap<TSchema, TypeCheck<TSchema>>();
function checker<T extends TSchema>(schema: T): TypeCheck<T> {
  let c = checks.get(schema);
  if (!c) checks.set(schema, (c = TypeCompiler.Compile(schema)));
  return c as TypeCheck<T>;
}

const Envelope = Type.Object({
  jsonrpc: Type.Literal("2.0"),
  id: Type.Union([Type.Number(), Type.String(), Type.Null()]),
  result: Type.Optional(Type.Unknown()),
  error: Type.Optional(Type.Object({ code: Type.Number(), message: Type.String() })),
});

/** Carries one JSON-RPC request body to the network and brings back the HTTP status and body. */
export type RpcTransport = (body: string, signal: AbortSignal) => Promise<{ status: number; text: string }>;

/** Over HTTP(S) to `url`. */
export const httpTransport =
  (url: string): RpcTransport =>
  async (body, signal) => {
    const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body, signal });
    return { status: res.status, text: await res.text() };
  };

/**
 * A batch stays well under stellar-rpc's limit on a request body (512 KiB), and holds few enough
 * calls that a connection lost under it (each of its calls then unknown: a 504) costs few answers.
 */
const BATCH_BYTES = 256 * 1024;
const BATCH_CALLS = 25;

interface Queued {
  id: number;
  method: string;
  body: string;
  schema: TSchema;
  resolve(value: unknown): void;
  reject(e: unknown): void;
}

export class RpcClient {
  private nextId = 1;
  private queue: Queued[] = [];
  /** Whether `batched` calls still go in batches: false once the upstream refused one. */
  batches = true;
  /** Told of every HTTP request: its method, and how many calls it carries. */
  onRequest?: (method: string, calls: number) => void;

  constructor(
    private readonly transport: RpcTransport,
    private readonly timeoutMs: number,
    private readonly log?: Logger,
  ) {}

  /** Calls `method`; resolves with a result of `schema`'s shape or rejects with an RpcFailure. */
  async call<T extends TSchema>(
    method: string,
    params: unknown,
    schema: T,
    timeoutMs = this.timeoutMs,
  ): Promise<Static<T>> {
    const id = this.nextId++;
    return this.single({ id, method, body: request(id, method, params), schema }, timeoutMs) as Promise<Static<T>>;
  }

  /** As `call`, sent with the other `batched` calls of this turn of the event loop. */
  batched<T extends TSchema>(method: string, params: unknown, schema: T): Promise<Static<T>> {
    if (!this.batches) return this.call(method, params, schema);
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      if (this.queue.length === 0) setImmediate(() => this.flush());
      this.queue.push({ id, method, body: request(id, method, params), schema, resolve, reject });
    });
  }

  private async single(c: Omit<Queued, "resolve" | "reject">, timeoutMs: number): Promise<unknown> {
    this.onRequest?.(c.method, 1);
    const res = await this.post(c.method, c.body, timeoutMs);
    if (!ok(res.status) && !res.text.startsWith("{"))
      throw new RpcFailure(c.method, "bad_answer", `HTTP ${res.status}`);
    return this.answer(c, parse(c.method, res.text));
  }

  private flush(): void {
    const queue = this.queue;
    this.queue = [];
    let chunk: Queued[] = [];
    let bytes = 0;
    for (const q of queue) {
      if (chunk.length >= BATCH_CALLS || (chunk.length > 0 && bytes + q.body.length > BATCH_BYTES)) {
        void this.sendBatch(chunk);
        chunk = [];
        bytes = 0;
      }
      chunk.push(q);
      bytes += q.body.length + 1;
    }
    void this.sendBatch(chunk);
  }

  private async sendBatch(calls: Queued[]): Promise<void> {
    if (calls.length === 1 || !this.batches) {
      for (const c of calls) this.single(c, this.timeoutMs).then(c.resolve, c.reject);
      return;
    }
    const label = `${calls[0]!.method} (a batch of ${calls.length})`;
    let answers: unknown[] | null = null;
    this.onRequest?.(calls[0]!.method, calls.length);
    try {
      const res = await this.post(label, `[${calls.map((c) => c.body).join(",")}]`, this.timeoutMs);
      if (!refused(res)) {
        if (!ok(res.status) && !/^[[{]/.test(res.text)) throw new RpcFailure(label, "bad_answer", `HTTP ${res.status}`);
        const body = parse(label, res.text);
        if (Array.isArray(body)) answers = body;
        // another answer is a fault like any garbage (batches stay on: a fault may pass)
        else if (!refusal(body)) throw new RpcFailure(label, "bad_answer", "the answer to a batch is not an array");
      }
    } catch (e) {
      for (const c of calls) c.reject(e);
      return;
    }
    if (!answers) {
      // nothing of the batch was taken: each call goes again on its own, as every later one will
      this.batches = false;
      this.log?.warn({ calls: calls.length }, "the RPC refused a JSON-RPC batch: calls go one by one from now on");
      return this.sendBatch(calls);
    }
    const byId = new Map<unknown, unknown>();
    for (const a of answers) byId.set((a as { id?: unknown } | null)?.id, a);
    for (const c of calls) {
      try {
        if (!byId.has(c.id)) throw new RpcFailure(c.method, "bad_answer", `the batch's answer has no id ${c.id}`);
        c.resolve(this.answer(c, byId.get(c.id)));
      } catch (e) {
        c.reject(e);
      }
    }
  }

  /** One HTTP request; its failures as RpcFailures. */
  private async post(method: string, body: string, timeoutMs: number): Promise<{ status: number; text: string }> {
    try {
      return await this.transport(body, AbortSignal.timeout(timeoutMs));
    } catch (e) {
      const timedOut = e instanceof Error && (e.name === "TimeoutError" || e.name === "AbortError");
      if (timedOut) throw new RpcFailure(method, "timeout", `no answer within ${timeoutMs} ms`);
      // a connection closed after the request went out: the upstream may have acted on it, so this is
      // not "unreachable" (which says the request never arrived: a sent transaction would be answered 503)
      if ((e as { code?: unknown }).code === "ECONNRESET")
        throw new RpcFailure(method, "bad_answer", "the connection closed without an answer");
      throw new RpcFailure(method, "unreachable", messageOf(e));
    }
  }

  /** The result in one call's answer, checked against its schema. */
  private answer(c: Pick<Queued, "id" | "method" | "schema">, body: unknown): unknown {
    const { id, method } = c;
    if (!checker(Envelope).Check(body))
      throw new RpcFailure(method, "bad_answer", "the answer is not a JSON-RPC 2.0 response");
    if (body.id !== id)
      throw new RpcFailure(method, "bad_answer", `the answer is for request id ${JSON.stringify(body.id)}, not ${id}`);
    if (body.error) throw new RpcFailure(method, "rpc_error", `error ${body.error.code}: ${body.error.message}`);
    const check = checker(c.schema);
    if (!check.Check(body.result)) {
      const first = check.Errors(body.result).First();
      throw new RpcFailure(
        method,
        "bad_answer",
        `unexpected result shape${first ? ` at '${first.path}': ${first.message}` : ""}`,
      );
    }
    return body.result;
  }
}

const request = (id: number, method: string, params: unknown): string =>
  JSON.stringify({ jsonrpc: "2.0", id, method, params });

const ok = (status: number): boolean => status >= 200 && status < 300;

function parse(method: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new RpcFailure(method, "bad_answer", "the answer is not JSON");
  }
}

/**
 * The upstream refused the request's shape (bad request, method or media type not allowed, too
 * large, unprocessable), before acting on any of it. A 429 is not a refusal of batches.
 */
const REFUSALS = new Set([400, 405, 413, 415, 422]);
const refused = (res: { status: number }): boolean => REFUSALS.has(res.status);

/** A JSON-RPC error for the request as a whole (id null: parse error, invalid request). */
const refusal = (body: unknown): boolean =>
  checker(Envelope).Check(body) && body.id === null && body.error !== undefined;

export const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e));
