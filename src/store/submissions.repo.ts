/** Submission intents and outcomes in the database. */
import { and, eq, sql } from "drizzle-orm";
import { submissions } from "./schema.ts";
import type { Db } from "./db.ts";
import type { Outcome, SubmissionIntent, SubmissionRecord, SubmissionStore } from "./types.ts";

export class SubmissionsRepo implements SubmissionStore {
  constructor(private readonly db: Db) {}

  async recordIntent(s: SubmissionIntent): Promise<void> {
    await this.db.insert(submissions).values(s).onConflictDoUpdate({
      target: submissions.id,
      set: { hash: s.hash, maxFee: s.maxFee, updatedAt: sql`now()` },
    });
  }

  async recordOutcome(id: string, outcome: Outcome, feeCharged: bigint | null): Promise<void> {
    await this.db.update(submissions).set({ outcome, outcomeStatus: outcome.status, feeCharged, updatedAt: sql`now()` }).where(eq(submissions.id, id));
  }

  async byInnerHash(network: string, innerHash: string): Promise<SubmissionRecord | null> {
    const [r] = await this.db.select().from(submissions).where(and(eq(submissions.network, network), eq(submissions.innerHash, innerHash))).limit(1);
    if (!r) return null;
    return { id: r.id, network: r.network, innerHash: r.innerHash, hash: r.hash, caller: r.caller, maxFee: r.maxFee, outcome: (r.outcome as Outcome | null) ?? null, feeCharged: r.feeCharged };
  }
}
