/**
 * Steps of a relay's start that stand apart from the composition (boot.ts): listening on its port,
 * opening the coordination of several instances, starting a channel pool, calling a step off.
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Config } from "../config.ts";
import type { createApp } from "../app.ts";
import type { Localnet } from "../localnet/ledger.ts";
import type { Logger } from "../kernel/log.ts";
import type { ChannelPool } from "../features/pool/channel-pool.ts";
import { Cluster } from "../store/cluster.ts";

/** Bun's own request body limit (1 GiB): above it Bun answers a bare 413, so it must never be the one that answers. */
export const SERVER_BODY_LIMIT = 2 ** 30;

const portInUse = (port: number) =>
  new Error(`port ${port} is already in use (another relay, or another program): set PORT to a free port`);
const isInUse = (e: unknown) => (e as { code?: string }).code === "EADDRINUSE" || /in use/i.test(String(e));

/**
 * Fails at once when PORT is taken, before the start opens or creates anything (a database, a data
 * directory's lock): it listens on the port for a moment, alone, as the relay will, and lets it go.
 * PORT 0 (any free port) is never taken.
 */
export function checkPortFree(config: Config): void {
  if (config.PORT === 0) return;
  try {
    Bun.serve({ port: config.PORT, reusePort: false, fetch: () => new Response(null) }).stop(true);
  } catch (e) {
    if (!isInUse(e)) throw e;
    throw portInUse(config.PORT);
  }
}

/**
 * Listens on PORT, alone: Elysia asks for SO_REUSEPORT, which would let a second relay share the
 * port with the first and split its connections; a port in use is a clear start error instead. A
 * connection idle for longer than a request may wait (a submission's timeout, a long poll) plus a
 * margin is closed; Elysia's 30 s would cut a 504 answered after SUBMISSION_TIMEOUT_MS's 30 s.
 */
export function listenOn(app: ReturnType<typeof createApp>, config: Config): void {
  const idleTimeout = Math.min(255, Math.ceil((config.SUBMISSION_TIMEOUT_MS + config.SEQUENCE_HOLD_MS) / 1000) + 30);
  try {
    app.listen({ port: config.PORT, maxRequestBodySize: SERVER_BODY_LIMIT, reusePort: false, idleTimeout });
  } catch (e) {
    if (!isInUse(e)) throw e;
    throw portInUse(config.PORT);
  }
}

/** Redis commands of the coordination between instances give up after this long. */
export const CLUSTER_COMMAND_TIMEOUT_MS = 2000;

/** The coordination of several instances (all on Postgres, Redis and upstream networks). */
export async function openCluster(config: Config): Promise<Cluster> {
  if (!config.CHANNEL_ENCRYPTION_KEY)
    throw new Error(
      "several instances share the channel accounts: set CHANNEL_ENCRYPTION_KEY, the same on every instance",
    );
  return await Cluster.open({
    url: config.REDIS_URL!,
    prefix: config.REDIS_PREFIX,
    id: config.INSTANCE_ID ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`,
    leaseMs: config.CLUSTER_LEASE_MS,
    timeoutMs: CLUSTER_COMMAND_TIMEOUT_MS,
  });
}

/** `step`, or the signal's reason as soon as it is aborted (the step goes on: the caller's stop() ends it). */
export function calledOff<T>(step: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  let onAbort = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
  });
  return Promise.race([step, aborted]).finally(() => signal.removeEventListener("abort", onAbort));
}

/** An embedded network's pool is ready before the relay answers (a ledger is closed for it when the localnet closes only on demand). */
export async function startLocalPool(pool: ChannelPool, net: Localnet): Promise<void> {
  let done = false;
  const starting = pool.start().finally(() => {
    done = true;
  });
  while (net.ledgerCloseMs <= 0 && !done && !pool.stopped) {
    await Bun.sleep(5);
    net.closeIfPending();
  }
  await starting;
}

/** An upstream network's pool starts in the background, retried (after 0.25 s, doubling to 5 s) until the network answers. */
export async function startUpstreamPool(pool: ChannelPool, log: Logger): Promise<void> {
  for (let waitMs = 250; ; waitMs = Math.min(waitMs * 2, 5000)) {
    try {
      return await pool.start();
    } catch (e) {
      if (pool.stopped) return;
      pool.lastError = e instanceof Error ? e.message : String(e); // shown by GET /v1/admin/channels meanwhile
      log.error({ network: pool.network, err: pool.lastError, retryInMs: waitMs }, "the channel pool cannot start");
      await Bun.sleep(waitMs);
    }
  }
}
