/**
 * Examples for the OpenAPI document: one for every JSON request and answer. The main operations
 * have examples written here (`EXAMPLES`, by "method path status", `req` for the request body);
 * every other schema gets one built from the schema itself (`exampleOf`: consts, defaults, the
 * first of each union, a plausible value per type and pattern). Error answers get the envelope with
 * a code of their status.
 */
import { ERROR_DESCRIPTIONS, type ErrorCode } from "../kernel/errors.ts";

const HASH = "3f1c0d6e8b7a59c4e2d1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9";
const INNER = "a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6071829";
const CHANNEL = "GCHANNELEXAMPLE7XJ3W2NQ5RTMPRW5TGUNM3QZJ6YBHQSXOTRHGFHCJ";
const AT = "2026-11-25T14:03:12.512Z";
const RESULT = "AAAAAAAAAMgAAAAAAAAAAQAAAAAAAAABAAAAAAAAAAA=";
const ENVELOPE = "AAAAAgAAAAB...base64 TransactionEnvelope...";

const summary = {
  hash: HASH,
  innerHash: INNER,
  status: "success",
  network: "testnet",
  ledger: 4242,
  feeCharged: "200",
  resultXdr: RESULT,
  createdAt: AT,
  updatedAt: AT,
};

const KEY = {
  id: "5c1d8e2a-7b3f-4a6c-9d0e-2f1a3b4c5d6e",
  prefix: "sr_live_7Q2m",
  environment: "live",
  label: "production",
  scopes: ["sponsor", "read"],
  createdAt: AT,
  expiresAt: "2027-05-31T00:00:00.000Z",
  lastUsedAt: null,
  revokedAt: null,
};

export const EXAMPLES: Record<string, unknown> = {
  "post /v1/sponsor req": { transaction: ENVELOPE, network: "testnet" },
  "post /v1/sponsor 200": {
    hash: HASH,
    innerHash: INNER,
    status: "success",
    feePaid: "200",
    ledger: 4242,
    resultXdr: RESULT,
  },
  "post /v1/sponsor 202": { hash: HASH, innerHash: INNER, status: "submitted" },
  "get /v1/transactions/{hash} 200": {
    ...summary,
    attempts: [{ hash: HASH, feeBid: "100", channel: CHANNEL, answer: "PENDING", sentAt: AT, answeredAt: AT }],
  },
  "post /v1/simulate req": { transaction: ENVELOPE, network: "testnet" },
  "post /v1/estimate req": { transaction: ENVELOPE, network: "mainnet" },
  "post /v1/estimate 200": {
    estimatedFee: "200",
    bidFee: "200",
    maxFee: "200000",
    breakdown: { baseFee: "200", resourceFee: "0" },
    rates: { likely: "100", bid: "100", max: "100000" },
    explanation:
      "the network charges the market rate, not the bid: most likely 100 stroops per operation (2 operations " +
      "with the fee-bump's own), the relay bids 100 (the lowest valid bid) and may raise its bid up to 100000 " +
      "when ledgers are full; on mainnet the most it may pay is reserved from credits",
  },
  "post /v1/admin/projects req": {
    name: "Acme trading",
    policy: {
      requestsPerSecond: 50,
      burst: 100,
      allow: {
        contracts: [{ contract: "CAS3J7GYLGXMF6TDJBBYYSE3HQ6BBSMLNUQ34T6TZMYMW2EVH34XOWMA", functions: ["transfer"] }],
        assets: ["native"],
      },
      activeFrom: "2026-12-01T00:00:00Z",
      perUser: { maxTransactionsPerDay: 20, maxFeePerDay: "2000000" },
      approval: { url: "https://app.example.com/relay/approve", timeoutMs: 1500, onFailure: "deny" },
    },
  },
  "post /v1/admin/projects/{id}/keys req": {
    environment: "live",
    label: "production",
    scopes: ["sponsor", "read"],
    expiresAt: "2027-05-31T00:00:00Z",
  },
  "post /v1/admin/projects/{id}/keys 201": { ...KEY, key: "sr_live_7Q2mX9pLr4vT8wZ1nB6cY3kH5jF0dS2aE4gU7iO9qW1" },
  "get /v1/admin/projects/{id}/keys 200": { keys: [{ ...KEY, lastUsedAt: AT }] },
  "post /v1/admin/projects/{id}/keys/{keyId}/rotate req": { overlapSeconds: 3600 },
  "post /v1/admin/projects/{id}/keys/{keyId}/rotate 201": {
    ...KEY,
    id: "0b6f3c1e-5a2d-4e8b-9c7f-1d2e3a4b5c6d",
    prefix: "sr_live_K3vP",
    expiresAt: null,
    key: "sr_live_K3vP8nR2tY6wQ1zX5cV9bM4lJ7hG0fD3sA6eU8iO2pT",
  },
  "post /v1/admin/projects/{id}/credits req": { amount: "100000000", reference: "invoice 2026-11" },
  "post /v1/admin/projects/{id}/credits 200": { creditBalance: "100000000" },
  "get /v1/admin/transactions 200": {
    transactions: [{ ...summary, projectId: "prj_7d1c2a" }],
    nextCursor: "WyIyMDI2LTExLTI1VDE0OjAzOjEyLjUxMjAwMFoiLCJhYmMiXQ",
  },
};

/** The envelope of an error answer with this code. */
export function errorExample(code: ErrorCode): unknown {
  return {
    error: {
      code,
      message: ERROR_DESCRIPTIONS[code],
      requestId: "9b2e6f1a-4c3d-4e5f-8a9b-0c1d2e3f4a5b",
    },
  };
}

type Schema = Record<string, unknown>;

/** An example value built from a schema (`resolve` follows `$ref`s into the document's components). */
export function exampleOf(schema: Schema, resolve: (ref: string) => Schema | undefined, depth = 0): unknown {
  if (depth > 8) return null;
  if (typeof schema.$ref === "string") {
    const target = resolve(schema.$ref);
    return target ? exampleOf(target, resolve, depth + 1) : null;
  }
  if (Array.isArray(schema.examples) && schema.examples.length) return schema.examples[0];
  if ("const" in schema) return schema.const;
  if (schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const union = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (union?.length) return exampleOf(union.find((s) => s.type !== "null") ?? union[0]!, resolve, depth + 1);
  switch (schema.type) {
    case "object": {
      const props = (schema.properties ?? {}) as Record<string, Schema>;
      return Object.fromEntries(Object.entries(props).map(([k, s]) => [k, exampleOf(s, resolve, depth + 1)]));
    }
    case "array":
      return [exampleOf((schema.items ?? {}) as Schema, resolve, depth + 1)];
    case "integer":
    case "number":
      return typeof schema.minimum === "number" ? schema.minimum : 1;
    case "boolean":
      return true;
    case "string":
      return stringExample(schema);
    default:
      return null;
  }
}

function stringExample(schema: Schema): string {
  if (schema.format === "date-time") return AT;
  const pattern = typeof schema.pattern === "string" ? schema.pattern : "";
  if (/\[0-9\]/.test(pattern) && !/[a-z]-/.test(pattern)) return "100";
  if (pattern.includes("a-f") || pattern.includes("0-9a-f")) return HASH;
  if (pattern.startsWith("^G")) return CHANNEL;
  return "string";
}
