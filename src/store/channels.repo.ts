/** Channel accounts (secret keys sealed by the caller) and the channel count asked for, per network. */
import { and, asc, eq, ne, sql } from "drizzle-orm";
import { channels, channelTargets } from "./schema.ts";
import type { Db } from "./db.ts";

export type ChannelState = "creating" | "active" | "draining" | "merged";

export interface ChannelRow {
  network: string;
  publicKey: string;
  /** Sealed (AES-256-GCM), never the plain secret. */
  secret: string;
  state: ChannelState;
}

export class ChannelsRepo {
  constructor(private readonly db: Db) {}

  /** The channels that are not merged, oldest first. */
  async live(network: string): Promise<ChannelRow[]> {
    return this.db
      .select({
        network: channels.network,
        publicKey: channels.publicKey,
        secret: channels.secret,
        state: channels.state,
      })
      .from(channels)
      .where(and(eq(channels.network, network), ne(channels.state, "merged")))
      .orderBy(asc(channels.createdAt), asc(channels.publicKey));
  }

  /** Public keys of the channels merged into the funder: fees they paid before are still the relay's. */
  async merged(network: string): Promise<string[]> {
    const rows = await this.db
      .select({ publicKey: channels.publicKey })
      .from(channels)
      .where(and(eq(channels.network, network), eq(channels.state, "merged")));
    return rows.map((r) => r.publicKey);
  }

  async insert(rows: ChannelRow[]): Promise<void> {
    if (rows.length) await this.db.insert(channels).values(rows);
  }

  async setState(network: string, publicKeys: string[], state: ChannelState): Promise<void> {
    for (const pk of publicKeys) {
      await this.db
        .update(channels)
        .set({ state, updatedAt: sql`now()` })
        .where(and(eq(channels.network, network), eq(channels.publicKey, pk)));
    }
  }

  /** Removes channels whose account was never created. */
  async remove(network: string, publicKeys: string[]): Promise<void> {
    for (const pk of publicKeys)
      await this.db
        .delete(channels)
        .where(and(eq(channels.network, network), eq(channels.publicKey, pk), eq(channels.state, "creating")));
  }

  async target(network: string): Promise<number | null> {
    const [r] = await this.db
      .select({ target: channelTargets.target })
      .from(channelTargets)
      .where(eq(channelTargets.network, network));
    return r ? r.target : null;
  }

  /** The maximum set at runtime (null: none set). */
  async maximum(network: string): Promise<number | null> {
    const [r] = await this.db
      .select({ max: channelTargets.maxChannels })
      .from(channelTargets)
      .where(eq(channelTargets.network, network));
    return r?.max ?? null;
  }

  async setMaximum(network: string, target: number, max: number): Promise<void> {
    await this.db
      .insert(channelTargets)
      .values({ network, target, maxChannels: max })
      .onConflictDoUpdate({ target: channelTargets.network, set: { maxChannels: max, updatedAt: sql`now()` } });
  }

  async setTarget(network: string, target: number): Promise<void> {
    await this.db
      .insert(channelTargets)
      .values({ network, target })
      .onConflictDoUpdate({ target: channelTargets.network, set: { target, updatedAt: sql`now()` } });
  }
}
