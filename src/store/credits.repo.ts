/**
 * The credit journal: append-only; a project's balance is the sum of its entries, kept on the
 * project's row (`credit_balance`, `credit_reserved`) by a trigger on the journal's inserts.
 */
import { and, desc, eq, lt } from "drizzle-orm";
import { creditJournal, projects } from "./schema.ts";
import type { Db } from "./db.ts";
import { OUT_OF_RANGE, sqlState } from "./write-errors.ts";
import { validationError } from "../kernel/errors.ts";

/** The most a balance holds: its column is int8. */
export const MAX_BALANCE = 9_223_372_036_854_775_807n;

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
    try {
      const [r] = await this.db
        .insert(creditJournal)
        .values({ ...e, reference: e.reference ?? null, reason: e.reason ?? null })
        .returning();
      return r!;
    } catch (err) {
      // the journal's trigger adds the amount to the project's balance (int8): past its largest value the
      // insert fails, and nothing is written
      if (sqlState(err) === OUT_OF_RANGE)
        throw validationError(`amount: the balance would pass the most it can hold (${MAX_BALANCE} stroops)`, {
          field: "amount",
          reason: "out_of_range",
          max: MAX_BALANCE.toString(),
        });
      throw err;
    }
  }

  /** Every project's balance (the sum of its journal). */
  async balances(): Promise<Map<string, bigint>> {
    const rows = await this.db.select({ id: projects.id, balance: projects.creditBalance }).from(projects);
    return new Map(rows.map((r) => [r.id, r.balance]));
  }

  /** A project's balance (the sum of its journal) and what is reserved in it (reservations not yet released). */
  async summary(projectId: string): Promise<{ balance: bigint; reserved: bigint }> {
    const [r] = await this.db
      .select({ balance: projects.creditBalance, reserved: projects.creditReserved })
      .from(projects)
      .where(eq(projects.id, projectId));
    return { balance: r?.balance ?? 0n, reserved: r?.reserved ?? 0n };
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
