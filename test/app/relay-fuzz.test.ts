/**
 * Property-based fuzzing (fast-check) of every endpoint through the whole relay's app.handle:
 * arbitrary JSON and non-JSON bodies, nesting of any depth, strings with control characters and lone
 * surrogates, random X-API-Key / X-Idempotency-Key / Content-Type / Authorization headers, random
 * URL segments, and mutated transaction XDR (bits flipped, bytes truncated, extended, overwritten).
 * Every answer must be below 500; every error the envelope with `requestId` equal to X-Request-Id.
 * A failure prints the counterexample and the seed (replay with `{ seed, path }` in fc.assert).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { Contract, nativeToScVal, TransactionBuilder } from "@stellar/stellar-sdk";
import { ERROR_STATUS } from "../../src/http/errors.ts";
import { startTestRelay, TEST_ADMIN_TOKEN, type TestRelay } from "../support/relay.ts";
import { TEST_CONTRACT_ID } from "../../src/localnet/soroban/contracts.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Runs per property (FUZZ_RUNS to change): the whole file takes a few seconds. */
const RUNS = Number(process.env.FUZZ_RUNS ?? 500);

interface Sent {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
}

// ---- arbitraries ------------------------------------------------------------------------------------

const CONTROLS = ["\u0000", "\u0001", "\t", "\n", "\r", "\u001b", "\u001f", "\u007f"];
/** Strings mixing control characters, lone surrogates, JSON syntax and anything else. */
const hostileString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.string({
    unit: fc.constantFrom(...CONTROLS, "a", "é", "\ud800", "\udfff", "[", "{", '"', "\\", "%00", "sr_test_"),
    maxLength: 40,
  }),
);
/** Values a header may hold (visible ASCII and tab). */
const visibleAscii = fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c));
const headerValue = fc.string({ unit: fc.oneof(visibleAscii, fc.constant("\t")), maxLength: 80 });
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const base62 = fc.string({ unit: fc.constantFrom(...BASE62), minLength: 30, maxLength: 50 });
/** Mostly JSON, so that most requests get past the parser; null: no Content-Type. */
const contentType = fc.oneof(
  { arbitrary: fc.constant("application/json"), weight: 6 },
  {
    arbitrary: fc.constantFrom(
      "application/json; charset=utf-8",
      "application/vnd.x+json",
      "text/plain",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      "application/octet-stream",
      "application/json; charset=latin1",
    ),
    weight: 2,
  },
  { arbitrary: headerValue, weight: 1 },
  { arbitrary: fc.constant(null), weight: 1 },
);

/** Nesting of any depth, up to past the body limit, in arrays, objects or both. */
const NESTINGS = [
  { open: "[", inner: "", close: "]" },
  { open: '{"a":', inner: "1", close: "}" },
  { open: '[{"b":', inner: "1", close: "}]" },
];
const deepJson = fc
  .tuple(fc.integer({ min: 1, max: 60_000 }), fc.constantFrom(...NESTINGS))
  .map(([depth, { open, inner, close }]) => open.repeat(depth) + inner + close.repeat(depth));

/** A base64 XDR mutated: bits flipped, cut short, extended, overwritten, or its text garbled. */
function mutatedXdr(valid: string[]): fc.Arbitrary<string> {
  const at = fc.noBias(fc.nat()); // anywhere in the XDR, not mostly its first bytes
  const mutation = fc.oneof(
    fc.record({ kind: fc.constant("flip" as const), at, bit: fc.integer({ min: 0, max: 7 }) }),
    fc.record({ kind: fc.constant("truncate" as const), at }),
    fc.record({ kind: fc.constant("extend" as const), bytes: fc.uint8Array({ minLength: 1, maxLength: 64 }) }),
    fc.record({ kind: fc.constant("overwrite" as const), at, bytes: fc.uint8Array({ minLength: 1, maxLength: 8 }) }),
  );
  const mutations = fc.array(mutation, { minLength: 1, maxLength: 3, size: "xsmall" });
  const bytes = fc.tuple(fc.constantFrom(...valid), mutations).map(([b64, mutations]) => {
    let b = Buffer.from(b64, "base64");
    for (const m of mutations) {
      const at = b.length ? ("at" in m ? m.at % b.length : 0) : 0;
      if (m.kind === "flip" && b.length) b[at] = b[at]! ^ (1 << m.bit);
      else if (m.kind === "truncate") b = b.subarray(0, at);
      else if (m.kind === "extend") b = Buffer.concat([b, m.bytes]);
      else if (m.kind === "overwrite") b = Buffer.concat([b.subarray(0, at), m.bytes, b.subarray(at + m.bytes.length)]);
    }
    return b.toString("base64");
  });
  const garbled = fc.tuple(fc.constantFrom(...valid), at, hostileString).map(([b64, at, s]) => {
    const cut = at % (b64.length + 1);
    return b64.slice(0, cut) + s + b64.slice(cut);
  });
  return fc.oneof(
    { arbitrary: bytes, weight: 4 },
    { arbitrary: garbled, weight: 1 },
    { arbitrary: fc.constantFrom(...valid), weight: 1 },
  );
}

const anything = fc.oneof(fc.jsonValue({ maxDepth: 3 }), hostileString);
const network = fc.oneof(fc.constantFrom("testnet", "mainnet"), anything);

/** Bodies of every kind: arbitrary JSON, shapes close to each endpoint's, deep nesting, non-JSON text and raw bytes. */
function bodies(shaped: fc.Arbitrary<Record<string, unknown>>): fc.Arbitrary<string | Uint8Array | undefined> {
  return fc.oneof(
    { arbitrary: shaped.map((o) => JSON.stringify(o)), weight: 5 },
    { arbitrary: fc.jsonValue().map((v) => JSON.stringify(v)), weight: 2 },
    { arbitrary: deepJson, weight: 1 },
    { arbitrary: hostileString, weight: 1 },
    { arbitrary: fc.uint8Array({ maxLength: 200 }), weight: 1 },
    { arbitrary: fc.constant(undefined), weight: 1 },
  );
}

/** A URL path segment: a real id, or anything (percent-encoded, or raw visible ASCII). */
const segment = (real: string[]) =>
  fc.oneof(
    fc.constantFrom(...real),
    hostileString.map((s) => encodeURIComponent(s.toWellFormed())),
    fc.string({ unit: fc.constantFrom(..."abc019-_.~%:@!$&'()*+,;="), maxLength: 12 }),
  );

/** The headers given (null: not sent). */
const headersOf = (h: Record<string, string | null>): Record<string, string> =>
  Object.fromEntries(Object.entries(h).filter((e): e is [string, string] => e[1] !== null));

// ---- checks -----------------------------------------------------------------------------------------

/** Throws (with what was sent) unless the answer is below 500 and, for an error, the envelope with its request id. */
async function check(sent: Sent, res: Response): Promise<void> {
  const text = sent.method === "HEAD" ? "" : await res.text();
  const fail = (why: string) => {
    const body = typeof sent.body === "string" ? sent.body.slice(0, 200) : sent.body;
    const request = `${sent.method} ${sent.path.slice(0, 200)} ${JSON.stringify(sent.headers)} ${JSON.stringify(body)}`;
    throw new Error(`${why}: ${request} -> ${res.status} ${text.slice(0, 300)}`);
  };
  const id = res.headers.get("x-request-id");
  if (!id || !UUID.test(id)) fail("no X-Request-Id");
  if (res.status >= 500) fail("a 5xx");
  if (res.headers.get("x-content-type-options") !== "nosniff") fail("no X-Content-Type-Options");
  if (res.status < 400 || sent.method === "HEAD") return;
  let body: { error?: { code?: string; message?: unknown; requestId?: unknown; details?: unknown } };
  try {
    body = JSON.parse(text);
  } catch {
    return fail("an error that is not JSON");
  }
  const e = body.error;
  if (!e || Object.keys(body).length !== 1) return fail("an error outside the envelope");
  if (e.requestId !== id) fail("requestId is not X-Request-Id");
  if (typeof e.message !== "string") fail("no message");
  if (ERROR_STATUS[e.code as keyof typeof ERROR_STATUS] !== res.status) fail("a code that does not match the status");
  if (e.details !== undefined && (typeof e.details !== "object" || e.details === null))
    fail("details that are not an object");
}

describe("fuzzing every endpoint", () => {
  let r: TestRelay;
  let txs: string[];
  /** The invokeHostFunction operation of the echo call (func+auth mode). */
  let invocation: string;
  let keys: string[];
  let projectIds: string[];
  /** Answers by status and error code (printed at the end: what the fuzzing reached). */
  const seen: Record<string, number> = {};
  const handle = async (sent: Sent) => {
    const init: RequestInit = {
      method: sent.method,
      headers: sent.headers,
      ...(sent.body === undefined ? {} : { body: sent.body }),
    };
    const res = await r.app.handle(new Request(`http://localhost${sent.path}`, init));
    const code =
      res.status >= 400
        ? ` ${
            (
              (await res
                .clone()
                .json()
                .catch(() => ({}))) as { error?: { code?: string } }
            ).error?.code
          }`
        : "";
    seen[`${res.status}${code}`] = (seen[`${res.status}${code}`] ?? 0) + 1;
    await check(sent, res);
  };
  const started = performance.now();

  beforeAll(async () => {
    r = await startTestRelay();
    const user = await r.funded();
    const payment = await r.payment(user);
    const feeBump = TransactionBuilder.buildFeeBumpTransaction(user, "200", payment, r.passphrase);
    feeBump.sign(user);
    const echo = new Contract(TEST_CONTRACT_ID).call("echo", nativeToScVal(7, { type: "u32" }));
    const call = new TransactionBuilder(await r.rpc.getAccount(user.publicKey()), {
      fee: "100",
      networkPassphrase: r.passphrase,
    })
      .addOperation(echo)
      .setTimeout(60)
      .build();
    txs = [payment, feeBump, call].map((t) => t.toEnvelope().toXdr("base64"));
    invocation = echo.toXDR("base64");
    // a project that the fuzzing does not rate-limit, with credits for mainnet
    const p = await r.project({ policy: { requestsPerSecond: 1_000_000, burst: 1_000_000 }, credits: 10_000_000_000n });
    keys = [p.testKey, p.liveKey];
    projectIds = [p.id];
  }, 30_000);
  afterAll(async () => {
    console.log(
      `fuzz suite: ${RUNS} runs per property, ${Math.round(performance.now() - started)} ms; answers: ${JSON.stringify(seen)}`,
    );
    await r.stop();
  });

  /** No key (the anonymous relay), a project's key, or an unknown or malformed one; null: no X-API-Key. */
  const apiKey = () =>
    fc.oneof(
      { arbitrary: fc.constant(null), weight: 4 },
      { arbitrary: fc.constantFrom(...keys), weight: 3 },
      {
        arbitrary: fc.oneof(
          base62.map((k) => `sr_test_${k}`),
          base62.map((k) => `sr_live_${k}`),
          headerValue,
        ),
        weight: 2,
      },
    );

  test("POST /v1/sponsor, /v1/simulate, /v1/estimate: any body, any headers, mutated XDR", async () => {
    const xdr = mutatedXdr(txs);
    const operation = mutatedXdr([invocation]);
    const payload = fc.oneof(
      { arbitrary: xdr.map((transaction) => ({ transaction })), weight: 3 },
      { arbitrary: operation.map((operation) => ({ operation })), weight: 1 },
    );
    const wellFormed = fc
      .tuple(payload, fc.constantFrom("testnet", "mainnet"))
      .map(([p, network]) => ({ ...p, network }));
    const loose = fc.record(
      { transaction: fc.oneof(xdr, anything), network, operation: fc.oneof(operation, anything) },
      { requiredKeys: [] },
    );
    const path = fc.constantFrom("/v1/sponsor", "/v1/simulate", "/v1/estimate");
    // clean requests (JSON, no key on testnet or the network's key, a well-formed body) reach decoding, policies,
    // simulation and submission with the mutated XDR; hostile ones vary everything
    const [testKey, liveKey] = keys;
    const clean = fc
      .record({
        path,
        payload,
        who: fc.constantFrom("anonymous", "test", "live"),
        idempotencyKey: fc.option(fc.uuid()),
      })
      .map(({ path, payload, who, idempotencyKey }) => ({
        path,
        body: JSON.stringify({ ...payload, network: who === "live" ? "mainnet" : "testnet" }),
        apiKey: who === "anonymous" ? null : who === "test" ? testKey! : liveKey!,
        idempotencyKey,
        contentType: "application/json",
      }));
    const hostile = fc.record({
      path,
      body: bodies(fc.oneof(wellFormed, loose)),
      apiKey: apiKey(),
      idempotencyKey: fc.option(headerValue, { freq: 2 }),
      contentType,
    });
    const sent = fc.oneof(clean, hostile).map(
      ({ path, body, apiKey, idempotencyKey, contentType }): Sent => ({
        method: "POST",
        path,
        body,
        headers: headersOf({ "x-api-key": apiKey, "x-idempotency-key": idempotencyKey, "content-type": contentType }),
      }),
    );
    await fc.assert(fc.asyncProperty(sent, handle), { numRuns: RUNS });
  }, 120_000);

  test("the admin API, with, without or with a wrong token", async () => {
    const id = segment(projectIds);
    const fields = [
      "requestsPerSecond",
      "burst",
      "maxFee",
      "allowedOperations",
      "allowedContractIds",
      "maxOperations",
      "dailySpendLimit",
      "x",
    ];
    const policy = fc.dictionary(
      fc.constantFrom(...fields),
      fc.oneof(anything, fc.integer(), fc.double(), fc.constant(null)),
    );
    const shaped = fc.record(
      {
        name: fc.oneof(hostileString, anything),
        policy,
        status: fc.oneof(fc.constantFrom("active", "suspended"), anything),
        environment: fc.oneof(fc.constantFrom("test", "live"), anything),
        label: fc.oneof(hostileString, anything),
        amount: fc.oneof(fc.bigInt({ min: -(10n ** 19n), max: 10n ** 19n }).map(String), anything),
        reference: hostileString,
        reason: hostileString,
      },
      { requiredKeys: [] },
    );
    const route = fc
      .tuple(id, segment(["1", "50", "0", "abc"]), segment(["testnet", "mainnet"]))
      .chain(([pid, seg, net]) =>
        fc.constantFrom(
          ["POST", "/v1/admin/projects"],
          ["GET", "/v1/admin/projects"],
          ["GET", `/v1/admin/projects/${pid}`],
          ["PATCH", `/v1/admin/projects/${pid}`],
          ["POST", `/v1/admin/projects/${pid}/keys`],
          ["GET", `/v1/admin/projects/${pid}/keys`],
          ["DELETE", `/v1/admin/projects/${pid}/keys/${seg}`],
          ["POST", `/v1/admin/projects/${pid}/credits`],
          ["GET", `/v1/admin/projects/${pid}/credits?limit=${seg}&cursor=${seg}`],
          ["GET", `/v1/admin/channels?network=${net}`],
          ["PUT", "/v1/admin/channels"],
          ["DELETE", `/v1/admin/channels/${seg}?network=${net}`],
        ),
      );
    const authorization = fc.oneof(
      { arbitrary: fc.constant(`Bearer ${TEST_ADMIN_TOKEN}`), weight: 6 },
      {
        arbitrary: fc.oneof(
          headerValue,
          headerValue.map((t) => `Bearer ${t}`),
        ),
        weight: 2,
      },
      { arbitrary: fc.constant(null), weight: 1 },
    );
    // PUT /v1/admin/channels with a valid body would resize the pool: its bodies are never shaped
    const sent = fc
      .record({ route, shaped: bodies(shaped), unshaped: bodies(fc.constant({})), authorization, contentType })
      .map(
        ({ route: [method, path], shaped, unshaped, authorization, contentType }): Sent => ({
          method: method!,
          path: path!,
          body: method === "GET" ? undefined : path === "/v1/admin/channels" ? unshaped : shaped,
          headers: headersOf({ authorization, "content-type": contentType }),
        }),
      );
    await fc.assert(fc.asyncProperty(sent, handle), { numRuns: RUNS * 2 });
  }, 120_000);

  test("GET /health and any other path or method", async () => {
    const path = fc
      .oneof(
        fc.constant("/health"),
        fc
          .array(segment(["v1", "admin", "projects", "sponsor", "health", "openapi", ".."]), {
            minLength: 1,
            maxLength: 4,
          })
          .map((s) => `/${s.join("/")}`),
      )
      .filter((p) => !p.startsWith("/localnet")); // the embedded networks answer in their own formats
    const method = fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD");
    const sent = fc.record({ path, method, apiKey: apiKey(), contentType }).map(
      ({ path, method, apiKey, contentType }): Sent => ({
        method,
        path,
        body: ["GET", "HEAD"].includes(method) ? undefined : "{}",
        headers: headersOf({ "x-api-key": apiKey, "content-type": contentType }),
      }),
    );
    await fc.assert(fc.asyncProperty(sent, handle), { numRuns: RUNS });
  }, 120_000);

  test("the relay still works afterwards", async () => {
    const transaction = (await r.payment(await r.funded())).toEnvelope().toXdr("base64");
    const res = await r.post("/v1/sponsor", { transaction, network: "testnet" });
    expect(res.status).toBe(200);
  }, 30_000);
});
