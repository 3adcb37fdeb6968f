/**
 * Submission intents and outcomes in the database, and the credit journal entries that go with
 * them: a credit reservation is journaled with the intent, in one transaction; the outcome
 * releases it and charges what the network charged, in one transaction.
 */
import { and, eq, inArray, isNotNull, gte, sql } from "drizzle-orm";
import { creditJournal, submissions } from "./schema.ts";
import type { Db } from "./db.ts";
import type { Outcome, SettledCredits, SubmissionIntent, SubmissionRecord, SubmissionStore } from "./types.ts";

type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];

/** What the journal still holds for a submission (a positive number), and whether it was ever reserved or charged. */
async function journalOf(tx: Tx, id: string): Promise<{ outstanding: bigint; reserved: boolean; charged: boolean }> {
  const [r] = await tx.select({
    net: sql<string>`coalesce(sum(${creditJournal.amount}) filter (where ${creditJournal.kind} in ('reserve', 'release')), 0)`,
    reserves: sql<number>`count(*) filter (where ${creditJournal.kind} = 'reserve')`,
    charges: sql<number>`count(*) filter (where ${creditJournal.kind} = 'charge')`,
  }).from(creditJournal).where(eq(creditJournal.submissionId, id));
  return { outstanding: -BigInt(r?.net ?? 0), reserved: Number(r?.reserves ?? 0) > 0, charged: Number(r?.charges ?? 0) > 0 };
}

export class SubmissionsRepo implements SubmissionStore {
  constructor(private readonly db: Db) {}

  async recordIntent(s: SubmissionIntent, hold = 0n): Promise<boolean> {
    const upsert = (db: Db | Tx) => db.insert(submissions).values(s).onConflictDoUpdate({
      target: submissions.id,
      set: { hash: s.hash, maxFee: s.maxFee, updatedAt: sql`now()` },
    });
    if (hold <= 0n || !s.projectId) {
      await upsert(this.db);
      return false;
    }
    return this.db.transaction(async (tx) => {
      await upsert(tx);
      // a reservation still outstanding for this submission (a resumed intent) already covers it
      if ((await journalOf(tx, s.id)).outstanding > 0n) return false;
      await tx.insert(creditJournal).values({ projectId: s.projectId!, kind: "reserve", amount: -hold, submissionId: s.id, txHash: s.hash });
      return true;
    });
  }

  async recordOutcome(id: string, outcome: Outcome, feeCharged: bigint | null): Promise<SettledCredits> {
    return this.db.transaction(async (tx) => {
      const [row] = await tx.update(submissions).set({ outcome, outcomeStatus: outcome.status, feeCharged, updatedAt: sql`now()` })
        .where(eq(submissions.id, id)).returning({ projectId: submissions.projectId, hash: submissions.hash });
      if (!row?.projectId) return { released: 0n, charged: 0n };
      const j = await journalOf(tx, id);
      if (!j.reserved) return { released: 0n, charged: 0n };
      const charged = feeCharged && feeCharged > 0n && !j.charged ? feeCharged : 0n;
      const entries = [
        ...(j.outstanding > 0n ? [{ projectId: row.projectId, kind: "release" as const, amount: j.outstanding, submissionId: id, txHash: row.hash }] : []),
        ...(charged > 0n ? [{ projectId: row.projectId, kind: "charge" as const, amount: -charged, submissionId: id, txHash: row.hash }] : []),
      ];
      if (entries.length) await tx.insert(creditJournal).values(entries);
      return { released: j.outstanding > 0n ? j.outstanding : 0n, charged };
    });
  }

  async byInnerHash(network: string, innerHash: string): Promise<SubmissionRecord | null> {
    const [r] = await this.db.select().from(submissions).where(and(eq(submissions.network, network), eq(submissions.innerHash, innerHash))).limit(1);
    if (!r) return null;
    return { id: r.id, network: r.network, innerHash: r.innerHash, hash: r.hash, caller: r.caller, projectId: r.projectId, maxFee: r.maxFee, outcome: (r.outcome as Outcome | null) ?? null, feeCharged: r.feeCharged };
  }

  /** Fees the network charged per project since `since` (for the daily spend limits after a restart). */
  async spentSince(since: Date, projectIds?: string[]): Promise<Map<string, bigint>> {
    const rows = await this.db.select({ projectId: submissions.projectId, total: sql<string>`coalesce(sum(${submissions.feeCharged}), 0)` })
      .from(submissions)
      .where(and(isNotNull(submissions.projectId), gte(submissions.updatedAt, since), ...(projectIds ? [inArray(submissions.projectId, projectIds)] : [])))
      .groupBy(submissions.projectId);
    return new Map(rows.map((r) => [r.projectId!, BigInt(r.total)]));
  }
}
