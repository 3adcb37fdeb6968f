/**
 * A sent fee-bump's intent, as the store's tests write it: on mainnet, through channel GCHANNEL at
 * 100 stroops per operation, its envelope sent at ledger 1.
 */
import type { SubmissionIntent } from "../../src/store/types.ts";

export function sentIntent(id: string, innerHash: string, projectId: string | null, maxFee: bigint): SubmissionIntent {
  return {
    id,
    network: "mainnet",
    innerHash,
    hash: `${innerHash}-outer`,
    caller: projectId ? `project:${projectId}` : "anonymous",
    projectId,
    maxFee,
    envelope: "x",
    sentLedger: 1,
    feeBid: 100n,
    channel: "GCHANNEL",
  };
}
