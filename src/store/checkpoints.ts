/**
 * Where actor checkpoints go: Redis (ioredis) when REDIS_URL is set, a process-local map
 * otherwise. Values are JSON with bigints as `{"$bigint":"…"}`. The map is bounded: an LRU of at
 * most `maxEntries` (least recently written or read dropped first), so that any number of client
 * IPs cannot grow it; Redis keys expire with their TTL (bound Redis itself with `maxmemory`).
 */
import { Redis } from "ioredis";

export interface CheckpointStore {
  get(key: string): Promise<unknown | null>;
  set(key: string, value: unknown, ttlSeconds?: number): Promise<void>;
  close(): Promise<void>;
}

const encode = (v: unknown): string =>
  JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? { $bigint: x.toString() } : x));
const decode = (s: string): unknown =>
  JSON.parse(s, (_k, x) =>
    x && typeof x === "object" && typeof x.$bigint === "string" && Object.keys(x).length === 1 ? BigInt(x.$bigint) : x,
  );

/** Checkpoints kept by the in-memory store unless configured (CHECKPOINT_MEMORY_MAX_ENTRIES). */
export const DEFAULT_MEMORY_CHECKPOINTS = 20_000;

export class MemoryCheckpoints implements CheckpointStore {
  /** Least recently used first. */
  private readonly map = new Map<string, { value: string; expiresAt: number }>();
  constructor(private readonly maxEntries = DEFAULT_MEMORY_CHECKPOINTS) {}
  get size(): number {
    return this.map.size;
  }
  async get(key: string) {
    const e = this.map.get(key);
    if (!e) return null;
    this.map.delete(key);
    if (e.expiresAt < Date.now()) return null;
    this.map.set(key, e);
    return decode(e.value);
  }
  async set(key: string, value: unknown, ttlSeconds?: number) {
    this.map.delete(key);
    this.map.set(key, { value: encode(value), expiresAt: ttlSeconds ? Date.now() + ttlSeconds * 1000 : Infinity });
    for (const oldest of this.map.keys()) {
      if (this.map.size <= this.maxEntries) break;
      this.map.delete(oldest);
    }
  }
  async close() {}
}

class RedisCheckpoints implements CheckpointStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}
  async get(key: string) {
    const s = await this.redis.get(this.prefix + key);
    return s === null ? null : decode(s);
  }
  async set(key: string, value: unknown, ttlSeconds?: number) {
    if (ttlSeconds) await this.redis.set(this.prefix + key, encode(value), "EX", ttlSeconds);
    else await this.redis.set(this.prefix + key, encode(value));
  }
  async close() {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

export async function openCheckpoints(opts: {
  url?: string;
  prefix: string;
  maxEntries?: number;
}): Promise<{ store: CheckpointStore; kind: "redis" | "memory" }> {
  if (!opts.url) return { store: new MemoryCheckpoints(opts.maxEntries), kind: "memory" };
  const redis = new Redis(opts.url, { lazyConnect: true, maxRetriesPerRequest: 2, enableOfflineQueue: true });
  await redis.connect();
  return { store: new RedisCheckpoints(redis, opts.prefix), kind: "redis" };
}
