/**
 * Requests to the relay's HTTP app for tests, and the assertions every HTTP suite makes on the answers.
 *
 * `inProcess(app)` calls the Elysia app's `handle` (no socket, no port): what a suite about routes,
 * keys, errors or headers needs. Its requests have no client address (`server.requestIP` answers
 * nothing for them: every anonymous one is the client "unknown"), and Bun's own server limits do not
 * apply; a test about either uses `overTcp(url)`, the same helpers through fetch.
 */
import { expect } from "bun:test";
import type { xdr } from "@stellar/stellar-sdk";

export type Res = { status: number; headers: Headers; body: any };
type HeaderMap = Record<string, string>;

export interface Http {
  /** A request; a body that is not a string is sent as JSON (content-type application/json). */
  request(method: string, path: string, body?: unknown, headers?: HeaderMap): Promise<Res>;
  get(path: string, headers?: HeaderMap): Promise<Res>;
  post(path: string, body: unknown, headers?: HeaderMap): Promise<Res>;
  /** A request to the admin API (`/v1/admin` + `path`) with the bearer token. */
  admin(method: string, path: string, body?: unknown): Promise<Res>;
  /** The Response itself, for a request built by the test (`init` as fetch takes it). */
  raw(path: string, init?: RequestInit): Promise<Response>;
}

/** The body parsed as JSON when it is JSON, else its text. */
export async function parsed(res: Response): Promise<Res> {
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* keep the text */
  }
  return { status: res.status, headers: res.headers, body };
}

function http(send: (path: string, init: RequestInit) => Promise<Response>, adminToken?: string): Http {
  const request = async (method: string, path: string, body?: unknown, headers: HeaderMap = {}) =>
    parsed(
      await send(path, {
        method,
        headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
        ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
      }),
    );
  return {
    request,
    get: (path, headers) => request("GET", path, undefined, headers),
    post: (path, body, headers) => request("POST", path, body, headers),
    admin: (method, path, body) =>
      request(method, `/v1/admin${path}`, body, adminToken ? { authorization: `Bearer ${adminToken}` } : {}),
    raw: (path, init = {}) => send(path, init),
  };
}

/**
 * Requests answered by `app.handle`, in this process. Elysia runs a request's afterResponse hooks (metrics,
 * the request's log line) in a setImmediate after the answer: each request waits for them, as a client
 * over a socket in effect does.
 */
export function inProcess(app: { handle(request: Request): Promise<Response> }, adminToken?: string): Http {
  return http(async (path, init) => {
    const res = await app.handle(new Request(`http://localhost${path}`, init));
    await new Promise((resolve) => setImmediate(resolve));
    return res;
  }, adminToken);
}

/** The same requests over a socket to `url` (the client's address and the server's own limits apply). */
export function overTcp(url: string, adminToken?: string): Http {
  return http((path, init) => fetch(`${url}${path}`, init), adminToken);
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const HASH = /^[0-9a-f]{64}$/;

/** The error envelope: `status` and `code`, a message, and the request id in the body and in X-Request-Id. */
export function expectError(res: Res, status: number, code: string): void {
  if (res.status !== status || res.body?.error?.code !== code)
    throw new Error(`expected ${status} ${code}, got ${res.status} ${JSON.stringify(res.body)}`);
  expect(res.body.error.requestId).toMatch(UUID);
  expect(res.headers.get("x-request-id")).toBe(res.body.error.requestId);
  expect(typeof res.body.error.message).toBe("string");
}

/** `status` (200 unless given), or the answer in the failure message. */
export function expectOk(res: Res, status = 200): void {
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
}

/** The rate-limit headers of a response, both spellings, which must agree. */
export function rateHeaders(res: Res): { limit: number; remaining: number; reset: number } {
  const get = (name: string) => {
    const plain = res.headers.get(`ratelimit-${name}`);
    const x = res.headers.get(`x-ratelimit-${name}`);
    if (plain === null) throw new Error(`no RateLimit-${name} on ${res.status} ${JSON.stringify(res.body)}`);
    expect(plain).toMatch(/^[0-9]+$/);
    expect(x).toBe(plain);
    return Number(plain);
  };
  return { limit: get("limit"), remaining: get("remaining"), reset: get("reset") };
}

/** Waits until `cond` holds, checking every `pollMs`; answers how long it took, throws after `ms`. */
export async function until(
  what: string,
  cond: () => boolean | Promise<boolean>,
  ms = 10_000,
  pollMs = 10,
): Promise<number> {
  const t0 = Date.now();
  while (!(await cond())) {
    if (Date.now() - t0 > ms) throw new Error(`${what}: not within ${ms} ms`);
    await Bun.sleep(pollMs);
  }
  return Date.now() - t0;
}

/** A transaction's envelope in base64, as the relay's routes take it. */
export const xdrOf = (tx: { toEnvelope(): xdr.TransactionEnvelope }): string => tx.toEnvelope().toXdr("base64");

export const sum = (xs: bigint[]): bigint => xs.reduce((a, b) => a + b, 0n);
