/** Idempotency keys in the database: a claim is an insert that only an expired record gives way to. */
import { and, eq, lt, sql } from "drizzle-orm";
import { idempotencyKeys } from "./schema.ts";
import type { Db } from "./db.ts";
import { readOutcome } from "./outcome-codec.ts";
import type { IdempotencyRecord, IdempotencyStore, Outcome } from "./types.ts";

export class IdempotencyRepo implements IdempotencyStore {
  constructor(private readonly db: Db) {}

  async claim(scope: string, key: string, bodyHash: string, ttlMs: number): Promise<IdempotencyRecord | null> {
    const expiresAt = new Date(Date.now() + ttlMs);
    const claimed = await this.db
      .insert(idempotencyKeys)
      .values({ scope, key, bodyHash, expiresAt })
      .onConflictDoUpdate({
        target: [idempotencyKeys.scope, idempotencyKeys.key],
        set: { bodyHash, outcome: null, expiresAt },
        setWhere: lt(idempotencyKeys.expiresAt, sql`now()`),
      })
      .returning({ scope: idempotencyKeys.scope });
    if (claimed.length) return null;
    const [r] = await this.db
      .select()
      .from(idempotencyKeys)
      .where(and(eq(idempotencyKeys.scope, scope), eq(idempotencyKeys.key, key)));
    return r ? { bodyHash: r.bodyHash, outcome: readOutcome(r.outcome) } : null;
  }

  async complete(scope: string, key: string, outcome: Outcome): Promise<void> {
    await this.db
      .update(idempotencyKeys)
      .set({ outcome })
      .where(and(eq(idempotencyKeys.scope, scope), eq(idempotencyKeys.key, key)));
  }

  async release(scope: string, key: string): Promise<void> {
    await this.db.delete(idempotencyKeys).where(and(eq(idempotencyKeys.scope, scope), eq(idempotencyKeys.key, key)));
  }

  /** Deletes expired keys; returns how many. */
  async prune(): Promise<number> {
    const r = await this.db
      .delete(idempotencyKeys)
      .where(lt(idempotencyKeys.expiresAt, sql`now()`))
      .returning({ key: idempotencyKeys.key });
    return r.length;
  }
}
