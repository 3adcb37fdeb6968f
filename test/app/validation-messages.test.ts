/**
 * A refused request names its problem: the field, what it got and what is allowed, and a reason
 * code. An unknown field comes first, with the closest known name; a `X | null` policy field
 * reports its own failure (a pattern, a range, a list of words), never "should be one of: 'string',
 * 'null'"; a query parameter is named as a body field is.
 */
import { afterAll, expect, test } from "bun:test";
import { lightApp } from "../support/app.ts";
import { expectError } from "../support/harness.ts";
import { closest, editDistance } from "../../src/http/validation-errors.ts";
import { REASONS } from "../../src/kernel/reasons.ts";

const light = lightApp();
afterAll(() => light.stop());
const patch = (policy: unknown) => light.http.admin("PATCH", "/projects/p1", { policy });

test.each([
  [{ maxFee: "abc" }, "maxFee", "bad_format", ["a whole number of stroops", "1 to 18 digits", '"abc"', "or null"]],
  [{ maxFee: 100 }, "maxFee", "wrong_type", ["a whole number of stroops written as a string", "got 100"]],
  [{ activeUntil: "2030-01-01 00:00" }, "activeUntil", "bad_format", ["ISO 8601", "time zone", "2030-01-01T00:00:00Z"]],
  [{ allow: { assets: ["USDC"] } }, "allow.assets.0", "bad_format", ['"native" or CODE:ISSUER', '"USDC"']],
  [{ allow: { destinations: ["Gxyz"] } }, "allow.destinations.0", "bad_format", ["(G...) or a contract (C...)"]],
  [{ dailySpendLimit: "1.5" }, "dailySpendLimit", "bad_format", ["a whole number of stroops"]],
  [{ perUser: { maxTransactionsPerDay: 0 } }, "perUser.maxTransactionsPerDay", "out_of_range", [">= 1"]],
  [{ feeStrategy: "cheap" }, "feeStrategy", "not_allowed", ["fast, economy", '"cheap"']],
  [
    { allowedOperations: ["paymnt"] },
    "allowedOperations.0",
    "not_allowed",
    ["payment", '"paymnt"', "did you mean payment?"],
  ],
  [{ burst: 0 }, "burst", "out_of_range", [">= 1", "got 0"]],
  [{ requestsPerSecond: "x" }, "requestsPerSecond", "wrong_type", ["a number", '"x"']],
  [{ allowedOperations: ["payment", "payment"] }, "allowedOperations", "duplicate_items", ["twice"]],
] as const)("policy %j: names %s, what it got and what is allowed (%s)", async (policy, field, reason, words) => {
  const res = await patch(policy);
  expectError(res, 400, "VALIDATION_ERROR");
  expect(res.body.error.details).toMatchObject({ field: `policy.${field}`, reason });
  expect(res.body.error.message.startsWith(`policy.${field} `)).toBe(true);
  for (const w of words) expect(res.body.error.message).toContain(w);
  expect(res.body.error.message).not.toContain("should be one of");
  expect(res.body.error.message).not.toMatch(/[\^$]|\[[0-9A-Za-z]-/); // no pattern shown
});

test("a misspelled field inside a nested object is unknown_field with the closest name, Tx read as Transactions", async () => {
  const perUser = await patch({ perUser: { maxTxPerDay: 5 } });
  expectError(perUser, 400, "VALIDATION_ERROR");
  expect(perUser.body.error.details).toEqual({
    field: "policy.perUser.maxTxPerDay",
    reason: "unknown_field",
    suggestion: "maxTransactionsPerDay",
  });
  const allow = await patch({ allow: { destination: ["GA"] } });
  expect(allow.body.error.details).toMatchObject({
    field: "policy.allow.destination",
    reason: "unknown_field",
    suggestion: "destinations",
  });
});

test("an empty project name says it is empty and gives the allowed length", async () => {
  const res = await light.http.admin("POST", "/projects", { name: "" });
  expectError(res, 400, "VALIDATION_ERROR");
  expect(res.body.error.details).toMatchObject({ field: "name", reason: "bad_length" });
  expect(res.body.error.message).toBe("name must not be empty: it must be a string of 1 to 200 characters");
});

test("feeStrategy's error lists its words in details.allowed too", async () => {
  const res = await patch({ feeStrategy: "cheap" });
  expect(res.body.error.details.allowed).toEqual(["fast", "economy"]);
});

test("a misspelled field is named first, with the closest known name", async () => {
  const sponsor = await light.http.post("/v1/sponsor", { transaction: "AAAA", netwrk: "mainnet" });
  expectError(sponsor, 400, "VALIDATION_ERROR");
  expect(sponsor.body.error.details).toEqual({ field: "netwrk", reason: "unknown_field", suggestion: "network" });
  expect(sponsor.body.error.message).toContain("did you mean network?");
  const policy = await patch({ maxFe: "1" });
  expect(policy.body.error.details).toMatchObject({
    field: "policy.maxFe",
    reason: "unknown_field",
    suggestion: "maxFee",
  });
  // nothing close: no suggestion, the names it takes instead
  const far = await light.http.post("/v1/estimate", { transaction: "AAAA", zzzzzzzz: 1 });
  expect(far.body.error.details.suggestion).toBeUndefined();
  expect(far.body.error.message).toContain("it takes transaction, network");
});

test("?wait=31 names wait and its range", async () => {
  const res = await light.http.get(`/v1/transactions/${"a".repeat(64)}?wait=31`);
  expectError(res, 400, "VALIDATION_ERROR");
  expect(res.body.error.details).toEqual({ field: "wait", reason: "out_of_range" });
  expect(res.body.error.message).toBe("wait must be a number >= 0 and <= 30 (got 31)");
});

test("every reason these answers carry is a documented code", async () => {
  for (const policy of [{ maxFee: "abc" }, { burst: 0 }, { x: 1 }, { allowedOperations: "payment" }]) {
    const res = await patch(policy);
    expect(Object.keys(REASONS)).toContain(res.body.error.details.reason);
  }
});

test("closest: a misspelling within a third of the name's length, else none", () => {
  expect(editDistance("netwrk", "network")).toBe(1);
  expect(closest("Netwrok", ["transaction", "network"])).toBe("network");
  expect(closest("fee", ["transaction", "network"])).toBeUndefined();
});
