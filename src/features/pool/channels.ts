/**
 * The channel accounts of one network as the relay holds them: the pool actor and its channel
 * actors, the funder's actor, the keys, and the channels merged away (their earlier fees are the
 * relay's). Leases and the reconciler share it; a change that may free a channel wakes the waiters.
 */
import type { Keypair } from "@stellar/stellar-sdk";
import { createActor, type Actor } from "xstate";
import { poolMachine, type ChannelRef } from "../../../actors/pool/pool.machine.ts";
import type { ChannelEvent, channelMachine } from "../../../actors/pool/channel.machine.ts";

export type AnyChannel = ChannelRef | Actor<typeof channelMachine>;

export class Channels {
  readonly pool = createActor(poolMachine);
  funderActor: Actor<typeof channelMachine> | null = null;
  readonly keys = new Map<string, Keypair>();
  readonly merged = new Set<string>();
  private readonly waiters = new Set<() => void>();

  constructor(readonly funder: Keypair) {
    this.pool.start();
  }

  /** Whether `address` (G...) is one of the relay's own accounts on this network. */
  isRelayAccount(address: string): boolean {
    return address === this.funder.publicKey() || this.keys.has(address) || this.merged.has(address);
  }

  refs(): Record<string, ChannelRef> {
    return this.pool.getSnapshot().context.channels;
  }

  /** A channel's actor by its public key: its own key only (`valueOf`, `__proto__`... are no channel). */
  private ref(pk: string): ChannelRef | undefined {
    const refs = this.refs();
    return Object.hasOwn(refs, pk) ? refs[pk] : undefined;
  }

  channel(pk: string) {
    return this.ref(pk)?.getSnapshot();
  }

  /** The actor of an account: the funder's, or a channel's. */
  actor(pk: string): AnyChannel | undefined {
    return pk === this.funder.publicKey() ? (this.funderActor ?? undefined) : this.ref(pk);
  }

  /** Sends a channel actor an event (straight to it: the pool has no part in one channel's events). */
  send(pk: string, event: ChannelEvent): void {
    this.ref(pk)?.send(event);
    this.notify();
  }

  /** Channels that count toward the target (not draining). */
  liveCount(): number {
    return Object.values(this.refs()).filter((r) => r.getSnapshot().value !== "draining").length;
  }

  /** Resolves at the next change that may free a channel (or after `ms`). */
  changed(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(t);
        this.waiters.delete(done);
        resolve();
      };
      const t = setTimeout(done, ms);
      this.waiters.add(done);
    });
  }

  notify(): void {
    for (const w of [...this.waiters]) w();
  }
}
