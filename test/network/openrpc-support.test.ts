import { describe, expect, test } from "bun:test";
import { openRpcMethods, validateRpcResult } from "../support/openrpc.ts";

const HASH = "d8ec9b68780314ffdfdfc2194b1b35dd27d7303c3bceaef6447e31631a1419dc";
const FEE_DISTRIBUTION = {
  max: "200",
  min: "100",
  mode: "100",
  p10: "100",
  p20: "100",
  p30: "100",
  p40: "100",
  p50: "100",
  p60: "100",
  p70: "100",
  p80: "100",
  p90: "200",
  p95: "200",
  p99: "200",
  transactionCount: "371",
  ledgerCount: 50,
};

/** One result accepted by the method's schema, one rejected, and an error the rejected one must produce. */
interface Case {
  valid: Record<string, unknown>;
  broken: Record<string, unknown>;
  error: string;
}

/** Valid results follow the OpenRPC document's own examples (XDR shortened). */
const cases: Record<string, Case> = {
  getHealth: {
    valid: {
      status: "healthy",
      latestLedger: 3730763,
      latestLedgerCloseTime: "1784671485",
      oldestLedger: 3609804,
      oldestLedgerCloseTime: "1784065656",
      ledgerRetentionWindow: 120960,
    },
    broken: { status: "healthy", latestLedger: "3730763" },
    error: "/latestLedger must be number",
  },
  getNetwork: {
    valid: {
      friendbotUrl: "https://friendbot-testnet.stellar.org/",
      passphrase: "Test SDF Network ; September 2015",
      protocolVersion: 20,
    },
    broken: { protocolVersion: 20 },
    error: "(result) must have required property 'passphrase'",
  },
  getLatestLedger: {
    valid: {
      id: "9f3308826b666c11df41693b17eddbb68aea9758be0f67fd5df81f6cf5c48984",
      protocolVersion: 24,
      sequence: 2002985,
      closeTime: "1765223032",
      headerXdr: "AAAAGBVa",
      metadataXdr: "AAAAAgAA",
    },
    broken: {
      id: "9f3308826b666c11df41693b17eddbb68aea9758be0f67fd5df81f6cf5c48984",
      protocolVersion: 24,
      sequence: "2002985",
    },
    error: "/sequence must be number",
  },
  getFeeStats: {
    valid: {
      sorobanInclusionFee: FEE_DISTRIBUTION,
      inclusionFee: { ...FEE_DISTRIBUTION, transactionCount: "28", ledgerCount: 10 },
      latestLedger: 3730870,
    },
    broken: {
      sorobanInclusionFee: FEE_DISTRIBUTION,
      inclusionFee: { ...FEE_DISTRIBUTION, p50: 100 },
      latestLedger: 3730870,
    },
    error: "/inclusionFee/p50 must be string",
  },
  sendTransaction: {
    // The schema types latestLedgerCloseTime as a number; the document's own examples send a string.
    valid: {
      status: "ERROR",
      hash: HASH,
      latestLedger: 2553978,
      latestLedgerCloseTime: 1700159337,
      errorResultXdr: "AAAAAAAAAGT////7AAAAAA==",
    },
    broken: { status: "PENDING", latestLedger: 2553978, latestLedgerCloseTime: 1700159337 },
    error: "(result) must have required property 'hash'",
  },
  getTransaction: {
    valid: {
      latestLedger: 337311,
      latestLedgerCloseTime: "1751955519",
      oldestLedger: 337151,
      oldestLedgerCloseTime: "1751954719",
      status: "FAILED",
      txHash: "109cf6170666e15470fb622df4965051ecfea2fee97d8165d072a769ba098b54",
      applicationOrder: 1,
      feeBump: false,
      envelopeXdr: "AAAAAgAA",
      resultXdr: "AAAAAAAAAGT/////AAAAAQAAAAAAAAAB////+wAAAAA=",
      resultMetaXdr: "AAAABAAA",
      events: { transactionEventsXdr: ["AAAAAAAA"], contractEventsXdr: [[]] },
      ledger: 337192,
      createdAt: "1751954924",
    },
    broken: {
      status: "PENDING",
      txHash: HASH,
      latestLedger: 2540099,
      latestLedgerCloseTime: "1700086455",
      oldestLedger: 2538660,
      oldestLedgerCloseTime: "1700078913",
    },
    error: `/status must be equal to one of the allowed values ["SUCCESS","NOT_FOUND","FAILED"]`,
  },
  simulateTransaction: {
    // `cost` is not in the schema; extra properties are allowed.
    valid: {
      transactionData: "AAAAAAAA",
      minResourceFee: "90353",
      events: ["AAAAAQAA"],
      results: [{ auth: [], xdr: "AAAAAwAAAAw=" }],
      cost: { cpuInsns: "1635562", memBytes: "1295756" },
      latestLedger: 2552139,
    },
    broken: { minResourceFee: "90353", results: [{ xdr: "AAAAAwAAAAw=" }], latestLedger: 2552139 },
    error: "/results/0 must have required property 'auth'",
  },
  getLedgerEntries: {
    valid: {
      entries: [
        { key: "AAAAB+qfy4GuVKKfazvyk4R9P9fpo2n9HICsr+xqvVcTF+DC", xdr: "AAAABgAA", lastModifiedLedgerSeq: 2552504 },
      ],
      latestLedger: 2552990,
    },
    broken: { entries: [] },
    error: "(result) must have required property 'latestLedger'",
  },
  getTransactions: {
    valid: {
      transactions: [
        {
          status: "FAILED",
          txHash: "173d6022f8db9654f31c5aa53785385b913ed32baf8ee72f984b97a97bb0909b",
          applicationOrder: 1,
          feeBump: true,
          envelopeXdr: "AAAABQAA",
          resultXdr: "AAAAAAAA",
          resultMetaXdr: "AAAABAAA",
          ledger: 1888539,
          createdAt: 1717166042,
        },
      ],
      latestLedger: 1888542,
      latestLedgerCloseTimestamp: 1717166057,
      oldestLedger: 1871263,
      oldestLedgerCloseTimestamp: 1717075350,
      cursor: "8111217537191937",
    },
    broken: { transactions: [{ status: "SUCCESS", txHash: HASH, ledger: "1888539" }], latestLedger: 1888542 },
    error: "/transactions/0/ledger must be number",
  },
  getVersionInfo: {
    valid: {
      version: "27.1.1-7e712815319140618b9be8cf0846701a6f9a2cbe",
      commitHash: "7e712815319140618b9be8cf0846701a6f9a2cbe",
      buildTimestamp: "2026-07-07T21:12:19",
      captiveCoreVersion: "stellar-core 27.1.0 (3589a696b0d4ef5a2cf2124e349c671d71886d9c)",
      protocolVersion: 27,
    },
    broken: { version: "27.1.1", protocolVersion: 27.5 },
    error: "/protocolVersion must be integer",
  },
};

describe("validateRpcResult", () => {
  test("every method in the OpenRPC document compiles", () => {
    expect(openRpcMethods).toEqual(expect.arrayContaining(Object.keys(cases)));
    for (const method of openRpcMethods) expect(() => validateRpcResult(method, {})).not.toThrow();
  });

  for (const [method, { valid, broken, error }] of Object.entries(cases)) {
    test(`${method}: accepts a valid result, reports a broken one`, () => {
      expect(validateRpcResult(method, valid)).toEqual([]);
      expect(validateRpcResult(method, broken)).toContain(error);
    });
  }

  test("sendTransaction: a string latestLedgerCloseTime, as in the document's examples, is rejected", () => {
    const result = { status: "PENDING", hash: HASH, latestLedger: 2553978, latestLedgerCloseTime: "1700159337" };
    expect(validateRpcResult("sendTransaction", result)).toEqual(["/latestLedgerCloseTime must be number"]);
  });

  test("unknown method throws", () => {
    expect(() => validateRpcResult("getAccount", {})).toThrow("Unknown Stellar RPC method");
  });
});
