/** The error table and envelope, and the relay when its networks cannot be reached. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Elysia } from "elysia";
import { Account, Asset, Keypair, Networks, Operation, TransactionBuilder } from "@stellar/stellar-sdk";
import { ERROR_STATUS } from "../../src/http/errors.ts";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ERROR_CODES, RelayError, type ErrorCode } from "../../src/kernel/errors.ts";
import { errorsPlugin } from "../../src/http/errors.plugin.ts";
import { createLogger } from "../../src/kernel/log.ts";
import { startTestRelay, type TestRelay } from "../support/relay.ts";

test("docs/api.md's error table has a row for every error code, with its status", () => {
  const doc = readFileSync(join(import.meta.dir, "..", "..", "docs", "api.md"), "utf8");
  for (const code of ERROR_CODES) {
    const row = new RegExp(`^\\| \`${code}\` \\| ${ERROR_STATUS[code]}\\b`, "m");
    expect({ code, listed: row.test(doc) }).toEqual({ code, listed: true });
  }
});

test("every error code has its status and the spec's envelope with the request id", async () => {
  const expected: Record<ErrorCode, number> = {
    VALIDATION_ERROR: 400,
    UNAUTHORIZED: 401,
    KEY_EXPIRED: 401,
    INSUFFICIENT_CREDITS: 402,
    FORBIDDEN: 403,
    SCOPE_REQUIRED: 403,
    POLICY_VIOLATION: 403,
    SPONSORSHIP_DENIED: 403,
    NOT_FOUND: 404,
    METHOD_NOT_ALLOWED: 405,
    PAYLOAD_TOO_LARGE: 413,
    SUBMISSION_FAILED: 422,
    SIMULATION_FAILED: 422,
    IDEMPOTENCY_KEY_REUSED: 422,
    RATE_LIMIT_EXCEEDED: 429,
    USER_LIMIT_EXCEEDED: 429,
    INTERNAL_ERROR: 500,
    NETWORK_UNAVAILABLE: 503,
    SUBMISSION_TIMEOUT: 504,
    NETWORK_NOT_SERVED: 400,
  };
  expect({ ...ERROR_STATUS } as Record<string, number>).toEqual(expected);
  const app = new Elysia()
    .use(errorsPlugin({ log: createLogger("silent") }))
    .get("/e/:code", ({ params }) => {
      throw new RelayError(params.code as ErrorCode, `failed with ${params.code}`, { n: 1 }, { retryAfter: 3 });
    })
    .get("/boom", () => {
      throw new Error("secret internals");
    });
  for (const [code, status] of Object.entries(expected)) {
    const res = await app.handle(new Request(`http://localhost/e/${code}`));
    const body = (await res.json()) as { error: Record<string, unknown> };
    expect(res.status).toBe(status);
    expect(body).toEqual({
      error: { code, message: `failed with ${code}`, details: { n: 1 }, requestId: res.headers.get("x-request-id")! },
    });
    expect(res.headers.get("retry-after")).toBe("3");
  }
  const boom = await app.handle(new Request("http://localhost/boom"));
  const text = await boom.text();
  expect(boom.status).toBe(500);
  expect(text).toContain("INTERNAL_ERROR");
  expect(text).not.toContain("secret internals");
});

describe("networks that cannot be reached", () => {
  let r: TestRelay;
  beforeAll(async () => {
    r = await startTestRelay({
      TESTNET_RPC_URL: "http://127.0.0.1:9/rpc",
      MAINNET_RPC_URL: "http://127.0.0.1:9/rpc",
      TESTNET_PASSPHRASE: Networks.TESTNET,
      MAINNET_PASSPHRASE: Networks.PUBLIC,
      TESTNET_FUNDER_SECRET: Keypair.random().secret(),
    });
  });
  afterAll(() => r.stop());

  test("GET /health is 503 down", async () => {
    const res = await r.http.get("/health");
    const body = res.body as { status: string; networks: Record<string, { status: string; upstream: string }> };
    expect(res.status).toBe(503);
    expect(body.status).toBe("down");
    expect(body.networks.testnet).toMatchObject({ status: "down", upstream: "127.0.0.1:9" });
  });

  test("sponsoring is NETWORK_UNAVAILABLE with Retry-After; mainnet without a fee account too", async () => {
    const kp = Keypair.random();
    const tx = new TransactionBuilder(new Account(kp.publicKey(), "1"), {
      fee: "100",
      networkPassphrase: Networks.TESTNET,
    })
      .addOperation(
        Operation.payment({ destination: Keypair.random().publicKey(), asset: Asset.native(), amount: "1" }),
      )
      .setTimeout(60)
      .build();
    tx.sign(kp);
    const res = await r.post("/v1/sponsor", { transaction: tx.toEnvelope().toXdr("base64"), network: "testnet" });
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe("NETWORK_UNAVAILABLE");
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    const { liveKey } = await r.project({ credits: 10_000_000n });
    const main = await r.post(
      "/v1/sponsor",
      { transaction: tx.toEnvelope().toXdr("base64"), network: "mainnet" },
      { "x-api-key": liveKey },
    );
    expect(main.status).toBe(503);
  });
});
