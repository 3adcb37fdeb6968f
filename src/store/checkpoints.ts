/**
 * Where actor checkpoints go: Redis (ioredis) when REDIS_URL is set, a process-local map
 * otherwise. Values are JSON with bigints as `{"$bigint":"…"}`.
 */
import { Redis } from "ioredis";

export interface CheckpointStore {
  get(key: string): Promise<unknown | null>;
  set(key: string, value: unknown, ttlSeconds?: number): Promise<void>;
  close(): Promise<void>;
}

const encode = (v: unknown): string => JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? { $bigint: x.toString() } : x));
const decode = (s: string): unknown => JSON.parse(s, (_k, x) => (x && typeof x === "object" && typeof x.$bigint === "string" && Object.keys(x).length === 1 ? BigInt(x.$bigint) : x));

class MemoryCheckpoints implements CheckpointStore {
  private readonly map = new Map<string, { value: string; expiresAt: number }>();
  async get(key: string) {
    const e = this.map.get(key);
    if (!e || e.expiresAt < Date.now()) return null;
    return decode(e.value);
  }
  async set(key: string, value: unknown, ttlSeconds?: number) {
    this.map.set(key, { value: encode(value), expiresAt: ttlSeconds ? Date.now() + ttlSeconds * 1000 : Infinity });
  }
  async close() {}
}

class RedisCheckpoints implements CheckpointStore {
  constructor(private readonly redis: Redis, private readonly prefix: string) {}
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

export async function openCheckpoints(opts: { url?: string; prefix: string }): Promise<{ store: CheckpointStore; kind: "redis" | "memory" }> {
  if (!opts.url) return { store: new MemoryCheckpoints(), kind: "memory" };
  const redis = new Redis(opts.url, { lazyConnect: true, maxRetriesPerRequest: 2, enableOfflineQueue: true });
  await redis.connect();
  return { store: new RedisCheckpoints(redis, opts.prefix), kind: "redis" };
}
