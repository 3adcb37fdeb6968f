/** The credit journal: append-only; a project's balance is the sum of its entries. */
import { and, desc, eq, lt, sql } from "drizzle-orm";
import { creditJournal } from "./schema.ts";
import type { Db } from "./db.ts";

export type JournalKind = "topup" | "adjustment" | "reserve" | "release" | "charge";

export interface JournalEntry {
  id: bigint;
  projectId: string;
  kind: JournalKind;
  amount: bigint;
  submissionId: string | null;
  txHash: string | null;
  reference: string | null;
  reason: string | null;
  createdAt: Date;
}

export class CreditsRepo {
  constructor(private readonly db: Db) {}

  async append(e: {
    projectId: string;
    kind: "topup" | "adjustment";
    amount: bigint;
    reference?: string | null;
    reason?: string | null;
  }): Promise<JournalEntry> {
    const [r] = await this.db
      .insert(creditJournal)
      .values({ ...e, reference: e.reference ?? null, reason: e.reason ?? null })
      .returning();
    return r!;
  }

  /** Every project's balance (the sum of its journal). */
  async balances(): Promise<Map<string, bigint>> {
    const rows = await this.db
      .select({ projectId: creditJournal.projectId, total: sql<string>`sum(${creditJournal.amount})` })
      .from(creditJournal)
      .groupBy(creditJournal.projectId);
    return new Map(rows.map((r) => [r.projectId, BigInt(r.total)]));
  }

  /** A project's balance (the sum of its journal) and what is reserved in it (reservations not yet released). */
  async summary(projectId: string): Promise<{ balance: bigint; reserved: bigint }> {
    const [r] = await this.db
      .select({
        balance: sql<string>`coalesce(sum(${creditJournal.amount}), 0)`,
        reserved: sql<string>`-coalesce(sum(${creditJournal.amount}) filter (where ${creditJournal.kind} in ('reserve', 'release')), 0)`,
      })
      .from(creditJournal)
      .where(eq(creditJournal.projectId, projectId));
    return { balance: BigInt(r?.balance ?? 0), reserved: BigInt(r?.reserved ?? 0) };
  }

  /** Newest first; `before` is the id of the last entry of the previous page. */
  async page(projectId: string, opts: { limit: number; before?: bigint }): Promise<JournalEntry[]> {
    return this.db
      .select()
      .from(creditJournal)
      .where(
        and(
          eq(creditJournal.projectId, projectId),
          ...(opts.before !== undefined ? [lt(creditJournal.id, opts.before)] : []),
        ),
      )
      .orderBy(desc(creditJournal.id))
      .limit(opts.limit);
  }
}
