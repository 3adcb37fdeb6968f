/**
 * The RPC client's batches: `batched` calls of one turn travel in one HTTP request (a JSON-RPC
 * array), each answer is matched to its call by id and checked on its own, and an upstream that
 * refuses batches gets every call again one by one, then and later. The transport here is a
 * function that records each HTTP body and answers like stellar-rpc's bridge (or refuses).
 */
import { expect, test } from "bun:test";
import { Type } from "@sinclair/typebox";
import { RpcClient, type RpcFailure, type RpcTransport } from "../../src/network/rpc-client.ts";

const Echo = Type.Object({ n: Type.Number() });
type Req = { jsonrpc: string; id: number; method: string; params: { n: number } };

/** Answers `echo` with its params; `answer` rewrites each answer (undefined drops it), `batch` answers a batch instead. */
function upstream(opts: { batch?: () => { status: number; text: string } } = {}) {
  const bodies: string[] = [];
  let rewrite = (r: Req): unknown => ({ jsonrpc: "2.0", id: r.id, result: r.params });
  const transport: RpcTransport = async (body) => {
    bodies.push(body);
    const parsed = JSON.parse(body) as Req | Req[];
    if (Array.isArray(parsed)) {
      const instead = opts.batch?.();
      if (instead) return instead;
      const answers = parsed.map(rewrite).filter((a) => a !== undefined);
      return { status: 200, text: JSON.stringify(answers.reverse()) }; // the order is not the calls'
    }
    return { status: 200, text: JSON.stringify(rewrite(parsed)) };
  };
  return {
    bodies,
    transport,
    answer(fn: (r: Req) => unknown) {
      rewrite = fn;
    },
  };
}

const settle = <T>(p: Promise<T>) =>
  p.then(
    (value) => ({ value, error: null as RpcFailure | null }),
    (error: RpcFailure) => ({ value: null, error }),
  );

test("calls of one turn travel in one request; each answer is matched by id and checked on its own", async () => {
  const u = upstream();
  const client = new RpcClient(u.transport, 1000);
  const requests: [string, number][] = [];
  client.onRequest = (method, calls) => requests.push([method, calls]);
  u.answer((r) => {
    if (r.params.n === 2) return { jsonrpc: "2.0", id: r.id, error: { code: -32602, message: "bad n" } };
    if (r.params.n === 3) return { jsonrpc: "2.0", id: r.id, result: { n: "three" } };
    if (r.params.n === 4) return undefined; // no answer for it
    return { jsonrpc: "2.0", id: r.id, result: r.params };
  });
  const results = await Promise.all([0, 1, 2, 3, 4, 5].map((n) => settle(client.batched("echo", { n }, Echo))));
  expect(u.bodies).toHaveLength(1);
  expect((JSON.parse(u.bodies[0]!) as Req[]).map((r) => r.params.n)).toEqual([0, 1, 2, 3, 4, 5]);
  expect(results.map((r) => r.value?.n ?? null)).toEqual([0, 1, null, null, null, 5]);
  expect(results.map((r) => r.error?.kind ?? null)).toEqual([
    null,
    null,
    "rpc_error",
    "bad_answer",
    "bad_answer",
    null,
  ]);
  expect(results[4]!.error!.message).toContain("no id");
  expect(client.batches).toBe(true);

  // a call alone in its turn is sent as a plain request, not an array of one
  expect(await client.batched("echo", { n: 7 }, Echo)).toEqual({ n: 7 });
  expect(u.bodies[1]!.startsWith("{")).toBe(true);
  expect(requests).toEqual([
    ["echo", 6],
    ["echo", 1],
  ]);
});

test("a batch holds at most 25 calls and stays under 256 KiB", async () => {
  const u = upstream();
  const client = new RpcClient(u.transport, 1000);
  const many = await Promise.all(Array.from({ length: 60 }, (_, n) => client.batched("echo", { n }, Echo)));
  expect(many.map((r) => r.n)).toEqual(Array.from({ length: 60 }, (_, n) => n));
  expect(u.bodies.map((b) => (JSON.parse(b) as Req[]).length)).toEqual([25, 25, 10]);

  u.bodies.length = 0;
  const big = "x".repeat(100 * 1024);
  const Big = Type.Object({ n: Type.Number(), pad: Type.String() });
  const four = await Promise.all([0, 1, 2, 3].map((n) => client.batched("echo", { n, pad: big }, Big)));
  expect(four.map((r) => r.n)).toEqual([0, 1, 2, 3]);
  expect(u.bodies.map((b) => (JSON.parse(b) as Req[]).length)).toEqual([2, 2]);
  expect(Math.max(...u.bodies.map((b) => b.length))).toBeLessThan(256 * 1024);
});

for (const [how, refuse] of [
  ["HTTP 400", () => ({ status: 400, text: "batches are not supported" })],
  [
    "a JSON-RPC error for the whole request",
    () => ({ status: 200, text: JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "no" } }) }),
  ],
] as const) {
  test(`an upstream that refuses batches (${how}) gets each call alone, then and later`, async () => {
    const u = upstream({ batch: refuse });
    const client = new RpcClient(u.transport, 1000);
    const first = await Promise.all([1, 2, 3].map((n) => client.batched("echo", { n }, Echo)));
    expect(first.map((r) => r.n)).toEqual([1, 2, 3]);
    expect(client.batches).toBe(false);
    expect(u.bodies.map((b) => b[0])).toEqual(["[", "{", "{", "{"]);

    const later = await Promise.all([4, 5].map((n) => client.batched("echo", { n }, Echo)));
    expect(later.map((r) => r.n)).toEqual([4, 5]);
    expect(u.bodies.slice(4).map((b) => b[0])).toEqual(["{", "{"]);
  });
}

test("an answer that may hide what was done fails every call of the batch, and is not sent again", async () => {
  for (const bad of [
    { status: 200, text: JSON.stringify({ jsonrpc: "2.0", id: 1, result: { n: 1 } }) }, // not an array
    { status: 502, text: "Bad Gateway" },
    { status: 429, text: "Too Many Requests" }, // a rate limit, not a refusal of batches
    { status: 200, text: "<html>" },
  ]) {
    const u = upstream({ batch: () => bad });
    const client = new RpcClient(u.transport, 1000);
    const results = await Promise.all([1, 2].map((n) => settle(client.batched("echo", { n }, Echo))));
    expect(results.map((r) => r.error?.kind)).toEqual(["bad_answer", "bad_answer"]);
    expect(u.bodies).toHaveLength(1);
    expect(client.batches).toBe(true); // a fault may pass: only a refusal turns batches off
  }
});

test("a batch that gets no answer in time: every call times out", async () => {
  const bodies: string[] = [];
  const hang: RpcTransport = (body, signal) => {
    bodies.push(body);
    return new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
  };
  const client = new RpcClient(hang, 50);
  const results = await Promise.all([1, 2, 3].map((n) => settle(client.batched("echo", { n }, Echo))));
  expect(results.map((r) => r.error?.kind)).toEqual(["timeout", "timeout", "timeout"]);
  expect(bodies).toHaveLength(1);
  expect(client.batches).toBe(true);
});
