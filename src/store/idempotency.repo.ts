/**
 * Idempotency keys in the database: a claim is an insert that only an expired record gives way to.
 * Claims and completions of requests that arrive together are written together (group-commit.ts):
 * one statement per batch, each request still answered once its own row is written.
 */
import { lt, sql } from "drizzle-orm";
import { idempotencyKeys } from "./schema.ts";
import type { Db } from "./db.ts";
import { BatchStatement, rowsOf } from "./batch-sql.ts";
import { GroupCommit } from "./group-commit.ts";
import { readOutcome } from "./outcome-codec.ts";
import type { IdempotencyRecord, IdempotencyStore, Outcome } from "./types.ts";

type Claim = { scope: string; key: string; bodyHash: string; expiresAt: Date };
type Completion = { scope: string; key: string; outcome: Outcome | null };

const idOf = (c: { scope: string; key: string }) => `${c.scope}\u0000${c.key}`;

export class IdempotencyRepo implements IdempotencyStore {
  private readonly claims: GroupCommit<Claim, IdempotencyRecord | null>;
  /** Completions (an outcome) and releases (null: the key is forgotten). */
  private readonly completions: GroupCommit<Completion, undefined>;

  constructor(private readonly db: Db) {
    this.claims = new GroupCommit<Claim, IdempotencyRecord | null>((items) => this.writeClaims(items), { key: idOf });
    this.completions = new GroupCommit<Completion, undefined>((items) => this.writeCompletions(items), { key: idOf });
  }

  claimKey(scope: string, key: string, bodyHash: string, ttlMs: number): Promise<IdempotencyRecord | null> {
    return this.claims.run({ scope, key, bodyHash, expiresAt: new Date(Date.now() + ttlMs) });
  }

  async complete(scope: string, key: string, outcome: Outcome): Promise<void> {
    await this.completions.run({ scope, key, outcome });
  }

  async release(scope: string, key: string): Promise<void> {
    await this.completions.run({ scope, key, outcome: null });
  }

  /** Deletes expired keys; returns how many. */
  async prune(): Promise<number> {
    const r = await this.db
      .delete(idempotencyKeys)
      .where(lt(idempotencyKeys.expiresAt, sql`now()`))
      .returning({ key: idempotencyKeys.key });
    return r.length;
  }

  /**
   * Inserts the batch's keys (an expired record gives way); for a key already taken, answers its
   * record, read in a second statement only when there is one.
   */
  private async writeClaims(items: Claim[]): Promise<(IdempotencyRecord | null)[]> {
    const claimed = rowsOf<{ scope: string; key: string }>(
      await insertClaims.run(this.db, {
        scope: items.map((c) => c.scope),
        key: items.map((c) => c.key),
        bodyHash: items.map((c) => c.bodyHash),
        expiresAt: items.map((c) => c.expiresAt.toISOString()),
      }),
    );
    const won = new Set(claimed.map(idOf));
    const taken = items.filter((c) => !won.has(idOf(c)));
    const records = new Map<string, IdempotencyRecord>();
    if (taken.length) {
      const keys = { scope: taken.map((c) => c.scope), key: taken.map((c) => c.key) };
      const rows = rowsOf<{ scope: string; key: string; body_hash: string; outcome: unknown }>(
        await takenKeys.run(this.db, keys),
      );
      for (const r of rows) records.set(idOf(r), { bodyHash: r.body_hash, outcome: readOutcome(r.outcome) });
    }
    return items.map((c) => records.get(idOf(c)) ?? null);
  }

  /** Writes the batch's outcomes and deletes its released keys, in one statement. */
  private async writeCompletions(items: Completion[]): Promise<undefined[]> {
    await completeKeys.run(this.db, {
      scope: items.map((c) => c.scope),
      key: items.map((c) => c.key),
      outcome: items.map((c) => (c.outcome ? JSON.stringify(c.outcome) : null)),
    });
    return items.map(() => undefined);
  }
}

/** Claims keys: inserted, or taken over from an expired record; answers those claimed. */
const insertClaims = new BatchStatement<"scope" | "key" | "bodyHash" | "expiresAt">(
  "idempotency_claims",
  (col) => sql`insert into ${idempotencyKeys} (scope, key, body_hash, expires_at)
    select scope, key, body_hash, expires_at::timestamptz
    from unnest(${col("scope", "text")}, ${col("key", "text")}, ${col("bodyHash", "text")},
      ${col("expiresAt", "text")}) as t (scope, key, body_hash, expires_at)
    on conflict (scope, key) do update set body_hash = excluded.body_hash, outcome = null,
      expires_at = excluded.expires_at
    where ${idempotencyKeys.expiresAt} < now()
    returning scope, key`,
);

/** The records of keys someone else holds. */
const takenKeys = new BatchStatement<"scope" | "key">(
  "idempotency_taken",
  (col) => sql`select k.scope, k.key, k.body_hash, k.outcome from ${idempotencyKeys} k
    join unnest(${col("scope", "text")}, ${col("key", "text")}) as t (scope, key)
      on k.scope = t.scope and k.key = t.key`,
);

/** Writes outcomes (a key with one) and deletes released keys (a key with none). */
const completeKeys = new BatchStatement<"scope" | "key" | "outcome">(
  "idempotency_completions",
  (col) => sql`with input (scope, key, outcome) as (
      select scope, key, outcome::jsonb from unnest(${col("scope", "text")}, ${col("key", "text")},
        ${col("outcome", "text")}) as t (scope, key, outcome)),
    done as (update ${idempotencyKeys} k set outcome = input.outcome from input
      where k.scope = input.scope and k.key = input.key and input.outcome is not null returning k.key),
    released as (delete from ${idempotencyKeys} k using input
      where k.scope = input.scope and k.key = input.key and input.outcome is null returning k.key)
    select (select count(*) from done) + (select count(*) from released) as n`,
);
