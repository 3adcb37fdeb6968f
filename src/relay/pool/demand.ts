/**
 * The pool grows on demand: while requests wait for a channel, the pool's target rises by one per
 * request that had to wait, up to its maximum (MAINNET_CHANNELS_MAX / TESTNET_CHANNELS_MAX, or set
 * at runtime); once no request has waited for `idleMs`, the extra channels are retired again (the
 * reconciler drains the least busy and merges them into the funder). The operator's count is the floor.
 */
export class PoolDemand {
  /** Channels over the operator's count, for the waiting requests. */
  private more = 0;
  private lastWaitAt = 0;

  constructor(private readonly idleMs: number) {}

  /** A request had to wait: one more channel, within `room` (the maximum less the operator's count). */
  waited(room: number, now = Date.now()): boolean {
    this.lastWaitAt = now;
    const before = this.more;
    this.more = Math.max(0, Math.min(room, this.more + 1));
    return this.more !== before;
  }

  /** The channels over the operator's count the pool should have now (0 once idle for `idleMs`). */
  extra(room: number, now = Date.now()): number {
    if (this.more && now - this.lastWaitAt >= this.idleMs) this.more = 0;
    this.more = Math.min(this.more, Math.max(0, room));
    return this.more;
  }
}
