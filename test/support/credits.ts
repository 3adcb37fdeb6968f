/** A project's credits through the admin API: its journal page by page, its view, and the checks that they agree. */
import { expect } from "bun:test";
import { HASH, sum, type Res } from "./harness.ts";
import type { TestRelay } from "./relay.ts";

export interface JournalEntry {
  id: string;
  kind: string;
  amount: string;
  submissionId: string | null;
  txHash: string | null;
  reference: string | null;
  reason: string | null;
  createdAt: string;
}

/** The whole journal, newest first, read in pages of `limit` through nextCursor. */
export async function journal(r: TestRelay, id: string, limit = 4): Promise<JournalEntry[]> {
  const entries: JournalEntry[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 1000; page++) {
    const res: Res = await r.admin("GET", `/projects/${id}/credits?limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`);
    expect(res.status).toBe(200);
    expect(res.body.entries.length).toBeLessThanOrEqual(limit);
    entries.push(...res.body.entries);
    cursor = res.body.nextCursor;
    if (!cursor) break;
  }
  const ids = entries.map((e) => BigInt(e.id));
  for (let i = 1; i < ids.length; i++) expect(ids[i]! < ids[i - 1]!).toBe(true); // newest first, no entry twice
  return entries;
}

export async function projectView(r: TestRelay, id: string) {
  const res = await r.admin("GET", `/projects/${id}`);
  expect(res.status).toBe(200);
  return res.body as { id: string; creditBalance: string; creditReserved: string; policy: Record<string, unknown> };
}

/**
 * The journal and the project agree: creditBalance is the journal's sum, nothing is reserved,
 * every reservation was released once in full, every charge names its transaction.
 */
export async function expectSettled(r: TestRelay, id: string): Promise<{ entries: JournalEntry[]; balance: bigint }> {
  const entries = await journal(r, id);
  const view = await projectView(r, id);
  expect(view.creditReserved).toBe("0");
  expect(view.creditBalance).toBe(sum(entries.map((e) => BigInt(e.amount))).toString());
  const bySubmission = new Map<string, JournalEntry[]>();
  for (const e of entries) {
    if (e.kind === "topup" || e.kind === "adjustment") {
      expect(e.submissionId).toBeNull();
      continue;
    }
    expect(["reserve", "release", "charge"]).toContain(e.kind);
    expect(e.submissionId).toEqual(expect.any(String));
    expect(e.txHash).toMatch(HASH);
    bySubmission.set(e.submissionId!, [...(bySubmission.get(e.submissionId!) ?? []), e]);
  }
  for (const group of bySubmission.values()) {
    const of = (kind: string) => group.filter((e) => e.kind === kind);
    expect(of("reserve")).toHaveLength(1);
    expect(of("release")).toHaveLength(1);
    expect(of("charge").length).toBeLessThanOrEqual(1);
    expect(BigInt(of("reserve")[0]!.amount) < 0n).toBe(true);
    expect(BigInt(of("release")[0]!.amount)).toBe(-BigInt(of("reserve")[0]!.amount));
    for (const c of of("charge")) expect(BigInt(c.amount) < 0n).toBe(true);
  }
  return { entries, balance: BigInt(view.creditBalance) };
}
