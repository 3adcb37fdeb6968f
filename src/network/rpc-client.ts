/**
 * A JSON-RPC 2.0 client for Stellar RPC with a timeout on every call and the shape of every answer
 * checked (TypeBox, compiled once per method): an upstream that hangs, answers slowly, closes the
 * socket, or answers garbage, `{}`, wrong types or another request's id is an `RpcFailure` with a
 * message that says which, never an undefined field the caller trips on.
 */
import { Type, type Static, type TSchema } from "@sinclair/typebox";
import { TypeCompiler, type TypeCheck } from "@sinclair/typebox/compiler";

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

export class RpcClient {
  private nextId = 1;

  constructor(
    private readonly transport: RpcTransport,
    private readonly timeoutMs: number,
  ) {}

  /** Calls `method`; resolves with a result of `schema`'s shape or rejects with an RpcFailure. */
  async call<T extends TSchema>(
    method: string,
    params: unknown,
    schema: T,
    timeoutMs = this.timeoutMs,
  ): Promise<Static<T>> {
    const id = this.nextId++;
    let text: string;
    try {
      const body = JSON.stringify({ jsonrpc: "2.0", id, method, params });
      const res = await this.transport(body, AbortSignal.timeout(timeoutMs));
      text = res.text;
      const ok = res.status >= 200 && res.status < 300;
      if (!ok && !text.startsWith("{")) throw new RpcFailure(method, "bad_answer", `HTTP ${res.status}`);
    } catch (e) {
      if (e instanceof RpcFailure) throw e;
      const timedOut = e instanceof Error && (e.name === "TimeoutError" || e.name === "AbortError");
      if (timedOut) throw new RpcFailure(method, "timeout", `no answer within ${timeoutMs} ms`);
      // a connection closed after the request went out: the upstream may have acted on it, so this is
      // not "unreachable" (which says the request never arrived: a sent transaction would be answered 503)
      if ((e as { code?: unknown }).code === "ECONNRESET")
        throw new RpcFailure(method, "bad_answer", "the connection closed without an answer");
      throw new RpcFailure(method, "unreachable", messageOf(e));
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new RpcFailure(method, "bad_answer", "the answer is not JSON");
    }
    if (!checker(Envelope).Check(body))
      throw new RpcFailure(method, "bad_answer", "the answer is not a JSON-RPC 2.0 response");
    if (body.id !== id)
      throw new RpcFailure(method, "bad_answer", `the answer is for request id ${JSON.stringify(body.id)}, not ${id}`);
    if (body.error) throw new RpcFailure(method, "rpc_error", `error ${body.error.code}: ${body.error.message}`);
    const check = checker(schema);
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

export const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e));
