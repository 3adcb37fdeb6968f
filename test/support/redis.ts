/** The Redis the checkpoint tests use, when one answers at REDIS_URL (they are skipped otherwise). */
import { Redis } from "ioredis";

export const REDIS_URL = "redis://127.0.0.1:6379";

async function reachable(): Promise<boolean> {
  const redis = new Redis(REDIS_URL, {
    lazyConnect: true,
    connectTimeout: 500,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
  redis.on("error", () => {});
  try {
    await redis.connect();
    return (await redis.ping()) === "PONG";
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

export const redisUp = await reachable();

/** Deletes every key under `prefix` (a test's own). */
export async function clearPrefix(prefix: string): Promise<void> {
  const r = new Redis(REDIS_URL);
  const keys = await r.keys(`${prefix}*`);
  if (keys.length) await r.del(...keys);
  await r.quit();
}
