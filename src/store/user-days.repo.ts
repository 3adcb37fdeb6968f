/**
 * Per end-user daily usage (the policy's perUser caps): one row per project, end user and UTC day.
 * `reserve` checks the caps and counts the transaction and its fee hold in one statement (a row
 * lock: instances sharing the database never grant past a cap together); `settle` turns the hold
 * into what the network charged (a transaction that used nothing is not counted).
 */
import { sql } from "drizzle-orm";
import type { Db } from "./db.ts";
import { submissions, userDays } from "./schema.ts";
import { rowsOf } from "./batch-sql.ts";

export interface UserDay {
  transactions: number;
  feeCharged: bigint;
  feeHeld: bigint;
}

export interface UserCaps {
  maxTransactionsPerDay: number | null;
  maxFeePerDay: bigint | null;
}

export interface UserKey {
  projectId: string;
  account: string;
  day: string;
}

const INT8_MAX = 9_223_372_036_854_775_807n;

export class UserDaysRepo {
  constructor(private readonly db: Db) {}

  /** Counts one transaction holding `grant` if the caps allow it; else the day's usage as it stands (null: allowed). */
  async reserve(k: UserKey, grant: bigint, caps: UserCaps): Promise<UserDay | null> {
    const maxTx = caps.maxTransactionsPerDay ?? 2_147_483_647;
    const maxFee = caps.maxFeePerDay ?? INT8_MAX;
    if (maxTx < 1 || grant > maxFee) return (await this.usage(k)) ?? { transactions: 0, feeCharged: 0n, feeHeld: 0n };
    const rows = await this.db.execute(sql`insert into ${userDays} (project_id, account, day, transactions, fee_held)
      values (${k.projectId}, ${k.account}, ${k.day}, 1, ${grant})
      on conflict (project_id, account, day) do update
        set transactions = ${userDays}.transactions + 1, fee_held = ${userDays}.fee_held + ${grant}
        where ${userDays}.transactions < ${maxTx}
          and ${userDays}.fee_charged + ${userDays}.fee_held + ${grant} <= ${maxFee}
      returning 1`);
    if (rowsOf(rows).length) return null;
    return (await this.usage(k))!;
  }

  /** Ends a hold of `grant`: `charged` added to the fees; a transaction that was charged nothing is not counted. */
  async settle(k: UserKey, grant: bigint, charged: bigint): Promise<void> {
    await this.db.execute(sql`update ${userDays}
      set fee_held = greatest(fee_held - ${grant}, 0), fee_charged = fee_charged + ${charged},
        transactions = transactions - ${charged > 0n ? 0 : 1}
      where project_id = ${k.projectId} and account = ${k.account} and day = ${k.day}`);
  }

  /**
   * The end user's day as the submissions record it, whether or not a cap counts it: its transactions
   * admitted that UTC day that landed (charged) or may still land (in flight), and what they were charged.
   */
  async recorded(k: UserKey): Promise<{ transactions: number; feeCharged: bigint }> {
    const start = `${k.day}T00:00:00Z`;
    const end = new Date(Date.parse(start) + 86_400_000).toISOString();
    const [r] = rowsOf<{ transactions: number | string; fee_charged: string }>(
      await this.db.execute(sql`select count(*) filter (where fee_charged is not null
            or (outcome_kind is null and released_at is null)) as transactions,
          coalesce(sum(fee_charged), 0)::text as fee_charged
        from ${submissions}
        where project_id = ${k.projectId} and end_user = ${k.account} and updated_at >= ${start}::timestamptz
          and created_at >= ${start}::timestamptz and created_at < ${end}::timestamptz`),
    );
    return { transactions: Number(r?.transactions ?? 0), feeCharged: BigInt(r?.fee_charged ?? 0) };
  }

  async usage(k: UserKey): Promise<UserDay | null> {
    const r = rowsOf<{ transactions: number; fee_charged: string; fee_held: string }>(
      await this.db.execute(sql`select transactions, fee_charged::text as fee_charged, fee_held::text as fee_held
        from ${userDays} where project_id = ${k.projectId} and account = ${k.account} and day = ${k.day}`),
    )[0];
    return r
      ? { transactions: Number(r.transactions), feeCharged: BigInt(r.fee_charged), feeHeld: BigInt(r.fee_held) }
      : null;
  }
}
