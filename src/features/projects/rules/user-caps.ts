/**
 * Per end-user caps of a project's policy (`perUser`: transactions and fees per UTC day). The end
 * user is the inner transaction's source account, or in func+auth mode the address that signs the
 * first authorization entry. Checked and counted at admission, after the project's own rules and
 * credits, in one database statement (exact across instances); settled with what the network charged.
 */
import { RelayError } from "../../../kernel/errors.ts";
import type { UserDaysRepo, UserKey } from "../../../store/user-days.repo.ts";
import { utcDay } from "../../../../actors/projects/project.machine.ts";
import type { Policy } from "./policy.ts";

/** One admitted transaction's count and fee hold against its end user's day. */
export interface UserHold {
  key: UserKey;
  grant: bigint;
}

export class UserCaps {
  constructor(private readonly repo: UserDaysRepo) {}

  /** Counts the transaction against its user's caps (its hold), or answers 429 USER_LIMIT_EXCEEDED. */
  async reserve(
    projectId: string,
    user: string,
    policy: Policy,
    grant: bigint,
    now: number,
  ): Promise<UserHold | RelayError | null> {
    const caps = policy.perUser;
    if (!caps) return null;
    const key = { projectId, account: user, day: utcDay(now) };
    const usage = await this.repo.reserve(key, grant, caps);
    if (!usage) return { key, grant };
    const limit =
      caps.maxTransactionsPerDay !== null && usage.transactions >= caps.maxTransactionsPerDay
        ? "maxTransactionsPerDay"
        : "maxFeePerDay";
    const reset = dayAfter(key.day);
    return new RelayError(
      "USER_LIMIT_EXCEEDED",
      limit === "maxTransactionsPerDay"
        ? `${user} was sponsored ${usage.transactions} transactions today, the policy's most per user (maxTransactionsPerDay)`
        : `${user}'s fees today (${usage.feeCharged} charged, ${usage.feeHeld} in flight) and this one's (up to ${grant}) ` +
            `would pass the policy's maxFeePerDay of ${caps.maxFeePerDay} stroops`,
      { user, limit, resetAt: new Date(reset).toISOString() },
      { retryAfter: Math.max(1, Math.ceil((reset - now) / 1000)) },
    );
  }

  /** Ends a hold with what the network charged (nothing: the transaction is not counted). */
  async settle(hold: UserHold, charged: bigint): Promise<void> {
    await this.repo.settle(hold.key, hold.grant, charged);
  }

  /** The end user's usage today, from what the submissions record (a cap or none). */
  async today(projectId: string, account: string, now = Date.now()) {
    const day = utcDay(now);
    const u = await this.repo.recorded({ projectId, account, day });
    return { account, day, transactions: u.transactions, feeCharged: u.feeCharged.toString() };
  }
}

/** The start of the day after `day` (YYYY-MM-DD), epoch ms. */
const dayAfter = (day: string): number => Date.parse(`${day}T00:00:00Z`) + 86_400_000;
