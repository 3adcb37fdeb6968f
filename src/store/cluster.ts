/**
 * What several relay instances share through Redis (ioredis), beside Postgres (the truth for money
 * and records): which instances are alive, leases (a key held by one instance for a TTL, renewed
 * while it lives: a channel account, a network's upkeep), global rate-limit buckets, and change
 * notices (pub/sub). Every command has a timeout; the scripts run atomically in Redis, on Redis's
 * clock (instances' clocks may differ).
 */
import { Redis } from "ioredis";

/** Takes or renews a lease: KEYS[1], ARGV: holder, ttl ms. 1 if held by the holder now. */
const CLAIM = `
local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
if v then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`;

/** Renews the holder's leases among KEYS: 1 or 0 for each. */
const RENEW = `
local out = {}
for i, k in ipairs(KEYS) do
  if redis.call('GET', k) == ARGV[1] then redis.call('PEXPIRE', k, ARGV[2]) out[i] = 1 else out[i] = 0 end
end
return out`;

/** Marks ARGV[1] alive in the sorted set KEYS[1], drops those silent for ARGV[2] ms, answers the live ones. */
const HEARTBEAT = `
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], 0, now - tonumber(ARGV[2]))
return redis.call('ZRANGE', KEYS[1], 0, -1)`;

const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

/**
 * A token bucket: KEYS[1], ARGV: tokens per second, burst. Refilled to Redis's time, then one token
 * taken if there is one. Answers {taken (1/0), tokens left x1000}.
 */
const TAKE = `
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2])
local b = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens, at = tonumber(b[1]) or burst, tonumber(b[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) * rate / 1000)
local taken = 0
if tokens >= 1 then tokens = tokens - 1 taken = 1 end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', now)
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + 1000)
return {taken, math.floor(tokens * 1000)}`;

/** A day's spend counters outlive the day by one (a late settlement still finds them). */
const SPEND_TTL_S = 2 * 24 * 3600;

export interface ClusterOptions {
  url: string;
  prefix: string;
  /** This instance's id (unique among the live ones). */
  id: string;
  /** A lease's TTL: a dead instance's leases are free this long after its last renewal. */
  leaseMs: number;
  /** Each command's timeout. */
  timeoutMs: number;
}

export type Notice = { topic: string; [field: string]: unknown };

export class Cluster {
  readonly id: string;
  readonly leaseMs: number;
  private readonly prefix: string;
  private subscriber: Redis | null = null;

  private constructor(
    private readonly redis: Redis,
    opts: ClusterOptions,
  ) {
    this.id = opts.id;
    this.prefix = opts.prefix;
    this.leaseMs = opts.leaseMs;
  }

  static async open(opts: ClusterOptions): Promise<Cluster> {
    const redis = new Redis(opts.url, {
      lazyConnect: true,
      commandTimeout: opts.timeoutMs,
      connectTimeout: opts.timeoutMs,
      maxRetriesPerRequest: 1,
    });
    redis.on("error", () => {}); // each command reports its own failure
    await redis.connect();
    return new Cluster(redis, opts);
  }

  private key(name: string): string {
    return `${this.prefix}${name}`;
  }

  /** Marks this instance alive and answers the live instances (itself included), sorted. */
  async heartbeat(): Promise<string[]> {
    const live = (await this.redis.eval(HEARTBEAT, 1, this.key("instances"), this.id, this.leaseMs)) as string[];
    return live.sort();
  }

  /** Removes this instance from the live ones (a clean stop). */
  async leave(): Promise<void> {
    await this.redis.zrem(this.key("instances"), this.id);
  }

  /** Takes (or renews) the lease `name` for `ttlMs` (default: the lease TTL): true if this instance holds it now. */
  async claim(name: string, ttlMs = this.leaseMs): Promise<boolean> {
    return (await this.redis.eval(CLAIM, 1, this.key(`lease:${name}`), this.id, ttlMs)) === 1;
  }

  /** Renews the leases this instance holds among `names`; answers those it still holds. */
  async renew(names: string[]): Promise<Set<string>> {
    if (names.length === 0) return new Set();
    const keys = names.map((n) => this.key(`lease:${n}`));
    const r = (await this.redis.eval(RENEW, keys.length, ...keys, this.id, this.leaseMs)) as number[];
    return new Set(names.filter((_, i) => r[i] === 1));
  }

  async release(name: string): Promise<void> {
    await this.redis.eval(RELEASE, 1, this.key(`lease:${name}`), this.id);
  }

  /** The instance holding the lease `name`, if any. */
  holder(name: string): Promise<string | null> {
    return this.redis.get(this.key(`lease:${name}`));
  }

  /** The instances holding the leases `names` (null: free), in one round trip. */
  async holders(names: string[]): Promise<(string | null)[]> {
    if (names.length === 0) return [];
    return await this.redis.mget(...names.map((n) => this.key(`lease:${n}`)));
  }

  /** Takes a token from the global bucket `name`; answers whether it did and the tokens left. */
  async take(name: string, perSecond: number, burst: number): Promise<{ taken: boolean; tokens: number }> {
    const r = (await this.redis.eval(TAKE, 1, this.key(`bucket:${name}`), perSecond, burst)) as [number, number];
    return { taken: r[0] === 1, tokens: r[1] / 1000 };
  }

  /**
   * Adds `grant` to what is held against the day's spend `name` (its spent starting at `seed` if
   * the day is new there); answers the spent and held totals after that, exact (int64 in Redis).
   */
  async reserveSpend(name: string, grant: bigint, seed: bigint): Promise<{ spent: bigint; held: bigint }> {
    const key = this.key(`spend:${name}`);
    const r = await this.redis
      .multi()
      .hsetnx(key, "spent", seed.toString())
      .hincrby(key, "held", grant.toString())
      .hmget(key, "spent", "held") // bulk strings: ioredis turns integer replies into floats
      .expire(key, SPEND_TTL_S)
      .exec();
    for (const [err] of r ?? []) if (err) throw err;
    const [spent, held] = (r?.[2]?.[1] ?? []) as (string | null)[];
    return { spent: BigInt(spent ?? 0), held: BigInt(held ?? 0) };
  }

  /** Ends a hold of `grant` against the day's spend `name`: `charged` is added to the spent. */
  async settleSpend(name: string, grant: bigint, charged: bigint): Promise<void> {
    const key = this.key(`spend:${name}`);
    const r = await this.redis
      .multi()
      .hincrby(key, "held", (-grant).toString())
      .hincrby(key, "spent", charged.toString())
      .exec();
    for (const [err] of r ?? []) if (err) throw err;
  }

  /** Tells every instance (this one too) about a change. */
  async publish(notice: Notice): Promise<void> {
    await this.redis.publish(this.key("notices"), JSON.stringify({ ...notice, from: this.id }));
  }

  /** Calls `handler` with each notice any instance publishes (from the moment this resolves). */
  async subscribe(handler: (n: Notice & { from: string }) => void): Promise<void> {
    const sub = this.redis.duplicate();
    sub.on("error", () => {});
    this.subscriber = sub;
    sub.on("message", (_channel: string, message: string) => {
      try {
        handler(JSON.parse(message));
      } catch {
        /* a notice this version does not read */
      }
    });
    await sub.subscribe(this.key("notices"));
  }

  async close(): Promise<void> {
    await this.leave().catch(() => {});
    this.subscriber?.disconnect();
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
