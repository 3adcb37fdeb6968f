/**
 * The channels plugin's management actions (`params.management`), authorized by `adminSecret` = the
 * relay's ADMIN_TOKEN (compared in constant time) and by nothing else: a project's key alone never
 * runs one. Wrong secrets count per client IP with the admin API's wrong tokens (one limiter): past
 * the limit they are 429 RATE_LIMIT_EXCEEDED with Retry-After, while the right secret still passes.
 * Each maps onto what the relay already has:
 * - `stats`, `listChannelAccounts`: the network's channel pool, every instance's (GET /v1/admin/channels);
 * - `getFeeUsage`, `getFeeLimit`, `setFeeLimit`, `deleteFeeLimit`: a client API key's project and its
 *   policy's `dailySpendLimit` (the period is the UTC day; consumed is what the network charged today);
 * - `setChannelAccounts`: not supported (the pool is resized with PUT /v1/admin/channels).
 */
import { timingSafeEqual } from "node:crypto";
import { RelayError } from "../../kernel/errors.ts";
import type { NetworkName } from "../../stellar/networks.ts";
import type { Networks } from "../networks/networks.ts";
import type { ChannelPool } from "../pool/channel-pool.ts";
import { BASE_FEE } from "../../stellar/protocol.ts";
import { utcDay } from "../../../actors/projects/project.machine.ts";
import type { FeePlanner } from "../tx/fee-plan.ts";
import type { ProjectActors } from "../projects/project-actors.ts";
import type { ProjectsService } from "../projects/projects.service.ts";
import { PROJECT_POLICY_DEFAULTS } from "../projects/rules/policy.ts";
import { ChannelsError } from "./channels-protocol.ts";
import { type AdminGuesses, wrongAdminToken } from "../projects/admin-guesses.ts";

export interface ManagementDeps {
  adminToken?: string;
  /** Wrong adminSecrets are counted here (compat.routes.ts passes the admin API's limiter; default: its own). */
  adminGuesses?: AdminGuesses;
  projects: ProjectsService;
  actors: ProjectActors;
  networks: Networks;
  /** The outcomes already answered (the usage counts them once they are written). */
  sponsor: { written(): Promise<void> };
  /** The fee planner (the rates `stats` shows); without it, the rates are the protocol's base fee. */
  fees?: FeePlanner;
}

const DAY_MS = 86_400_000;
const digest = (s: string) => new Bun.CryptoHasher("sha256").update(s).digest();
const invalidPayload = (message: string, details?: Record<string, unknown>) =>
  new ChannelsError("INVALID_PAYLOAD", 400, message, details);

export class ChannelsManagement {
  private readonly admin: Buffer | null;

  constructor(private readonly deps: ManagementDeps & { adminGuesses: AdminGuesses }) {
    this.admin = deps.adminToken ? digest(deps.adminToken) : null;
  }

  /**
   * The secret is the ADMIN_TOKEN (constant time), else the request is refused: 401, or 429 with Retry-After once
   * `ip` (the client's, as the admin API derives it) has guessed wrong too often. The right secret always passes:
   * whoever shares the address cannot lock the operator out. A missing secret is no guess: not counted.
   */
  private authorize(m: Record<string, unknown>, admin: Buffer, ip: string): void {
    const secret = typeof m.adminSecret === "string" ? m.adminSecret : "";
    if (secret && timingSafeEqual(digest(secret), admin)) return;
    wrongAdminToken(this.deps.adminGuesses, ip, secret !== "", "admin secrets");
    throw new ChannelsError("UNAUTHORIZED", 401, "Unauthorized: adminSecret must be the relay's ADMIN_TOKEN");
  }

  /**
   * Runs one management request for `network` (the path's) from the client at `ip`; throws a ChannelsError the
   * plugin's way (or a RelayError it translates: RATE_LIMIT_EXCEEDED).
   */
  async handle(network: NetworkName, m: Record<string, unknown>, ip: string): Promise<object> {
    if (!this.admin)
      throw new ChannelsError("MANAGEMENT_DISABLED", 403, "Management API disabled: the relay has no ADMIN_TOKEN");
    this.authorize(m, this.admin, ip);
    switch (m.action) {
      case "stats":
        return await this.stats(network);
      case "listChannelAccounts":
        return { relayerIds: (await this.pool(network).whole()).channels.map((c) => c.publicKey) };
      case "setChannelAccounts":
        throw new ChannelsError(
          "NOT_SUPPORTED",
          400,
          "setChannelAccounts is not supported: the relay creates and funds its own channel accounts; resize the pool with PUT /v1/admin/channels {network, count}",
        );
      case "getFeeUsage":
        return await this.feeUsage(m);
      case "getFeeLimit": {
        const limit = this.policyOf(await this.projectOf(m)).dailySpendLimit;
        return limit === null ? {} : { limit: Number(limit) };
      }
      case "setFeeLimit": {
        const projectId = await this.projectOf(m);
        const limit = m.limit;
        if (typeof limit !== "number" || !Number.isFinite(limit) || limit < 0 || limit >= 1e18)
          throw invalidPayload("Invalid payload: limit must be a non-negative number (stroops)");
        const stroops = Math.floor(limit);
        await this.deps.projects.update(projectId, { policy: { dailySpendLimit: String(stroops) } });
        return { ok: true, limit: stroops };
      }
      case "deleteFeeLimit": {
        await this.deps.projects.update(await this.projectOf(m), { policy: { dailySpendLimit: null } });
        return { ok: true };
      }
      default:
        throw new ChannelsError("INVALID_ACTION", 400, "Invalid management action", {
          action: typeof m.action === "string" ? m.action : null,
        });
    }
  }

  private pool(network: NetworkName): ChannelPool {
    const pool = this.deps.networks.find(network)?.pool;
    if (!pool)
      throw new ChannelsError("NO_CHANNELS_CONFIGURED", 503, `${network} has no channel pool (yet)`, { network });
    return pool;
  }

  /** The pool's size and use, the limits' defaults and period, and the inclusion rates the relay bids now. */
  private async stats(network: NetworkName) {
    const view = await this.pool(network).whole(); // every instance's channels
    const active = view.channels.filter((c) => c.state === "active");
    // a channel is never locked to one transaction here: "locked" counts active channels with fees in flight
    // (another instance's channel shows none: only its holder knows)
    const locked = active.filter((c) => ((c.inFlight as { count?: number } | null)?.count ?? 0) > 0).length;
    const defaultLimit = PROJECT_POLICY_DEFAULTS.dailySpendLimit;
    return {
      pool: { size: active.length, locked, available: active.length - locked },
      config: {
        network,
        lockTtlSeconds: 0,
        ...(defaultLimit === null ? {} : { feeLimit: Number(defaultLimit) }),
        feeResetPeriodSeconds: DAY_MS / 1000,
        contractCapacityRatio: 1,
        limitedContracts: [] as string[],
      },
      fees: {
        inclusionFeeDefault: Number(await this.rate(network, false)),
        inclusionFeeLimited: Number(await this.rate(network, true)),
      },
    };
  }

  private async rate(network: NetworkName, soroban: boolean): Promise<bigint> {
    const gw = this.deps.networks.find(network)?.gateway;
    if (!gw || !this.deps.fees) return BASE_FEE;
    return (await this.deps.fees.plan(gw, BASE_FEE, soroban)).rate;
  }

  /** The project of the `apiKey` a fee action names (one of the relay's keys, either network). */
  private async projectOf(m: Record<string, unknown>): Promise<string> {
    const apiKey = m.apiKey;
    if (typeof apiKey !== "string" || apiKey === "") throw invalidPayload("Invalid payload: apiKey is required");
    try {
      const principal = await this.deps.projects.authenticate(apiKey, "management");
      if (principal.projectId) return principal.projectId;
    } catch (e) {
      if (!(e instanceof RelayError)) throw e;
    }
    throw invalidPayload("Invalid payload: apiKey is not a live API key of this relay", { reason: "unknown_api_key" });
  }

  private context(projectId: string) {
    const actor = this.deps.actors.project(projectId);
    if (!actor) throw invalidPayload("Invalid payload: the key's project is not loaded", { reason: "unknown_project" });
    return actor.getSnapshot().context;
  }

  private policyOf(projectId: string) {
    return this.context(projectId).policy;
  }

  /** What the key's project was charged today (UTC), its daily limit and what is left; the period is the day. */
  private async feeUsage(m: Record<string, unknown>) {
    const projectId = await this.projectOf(m);
    await this.deps.sponsor.written(); // outcomes already answered are counted
    const c = this.context(projectId);
    const now = Date.now();
    const day = utcDay(now);
    const consumed = Number(c.spentDay === day ? c.spent : 0n);
    const start = Date.parse(`${day}T00:00:00Z`);
    const limit = c.policy.dailySpendLimit === null ? undefined : Number(c.policy.dailySpendLimit);
    return {
      consumed,
      ...(limit === undefined ? {} : { limit, remaining: Math.max(0, limit - consumed) }),
      periodStartAt: new Date(start).toISOString(),
      periodEndsAt: new Date(start + DAY_MS).toISOString(),
    };
  }
}
