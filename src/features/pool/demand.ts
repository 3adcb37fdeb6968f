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

  constructor(
    private readonly idleMs: number,
    private max: number,
  ) {}

  /** A request had to wait: one more channel over `target`, within the maximum; true when that changes the pool. */
  waited(target: number, now = Date.now()): boolean {
    this.lastWaitAt = now;
    const before = this.more;
    this.more = Math.min(this.room(target), this.more + 1);
    return this.more !== before;
  }

  /** The channels the pool should have now: `target`, and more while requests wait (none once idle). */
  wanted(target: number, now = Date.now()): number {
    if (this.more && now - this.lastWaitAt >= this.idleMs) this.more = 0;
    this.more = Math.min(this.more, this.room(target));
    return target + this.more;
  }

  /** The most channels demand may grow the pool to (never under the operator's count). */
  maximum(target: number): number {
    return Math.max(this.max, target);
  }

  setMaximum(max: number): void {
    this.max = max;
  }

  private room(target: number): number {
    return Math.max(0, this.max - target);
  }
}
