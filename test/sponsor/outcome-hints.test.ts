/** SUBMISSION_FAILED in plain words: the usual result codes carry a hint of what to do. */
import { expect, test } from "bun:test";
import { submissionFailed } from "../../src/features/sponsor/outcomes.ts";
import { feeBumpResult, plainResult } from "../../src/localnet/results.ts";
import { X, toB64 } from "../../src/stellar/xdr.ts";

const b64 = (r: Parameters<typeof X.result.encode>[0]) => toB64(X.result.encode(r));

test("tx_no_source_account (in a fee-bump or alone) says to create and fund the source account", () => {
  for (const result of [
    b64(feeBumpResult(200n, new Uint8Array(32), { code: -8 } as never)),
    b64(plainResult(100n, { code: -8 } as never)),
  ]) {
    const e = submissionFailed("ab".repeat(32), result);
    expect(e.details?.result_codes).toMatchObject({ transaction: "tx_no_source_account" });
    expect(e.message).toContain("tx_no_source_account");
    expect(e.message).toContain("its source account does not exist on this network: create and fund it first");
  }
});
