/**
 * Starts the relay, as a list of steps run by one loop (`START`): keys in tokens, the store, the
 * coordination of instances, the networks, events, the features, the projects, the HTTP server; then
 * the networks start and the background work begins. Each step is given what the steps before it
 * made and adds its own part (nothing is set after construction), and pushes what it opened on one
 * stack, which a failed start or stop() closes, newest first.
 */
import type { Config } from "../config.ts";
import type { createApp } from "../app.ts";
import type { Logger } from "../kernel/log.ts";
import type { Db } from "../store/db.ts";
import { lockDataDir } from "../store/instance-lock.ts";
import type { EventFeed } from "../features/transactions/events/event-feed.ts";
import type { Network, Networks } from "../features/networks/networks.ts";
import { Closers } from "./closers.ts";
import { buildNetworks, startNetworks } from "./build-networks.ts";
import { embeddedParts, settingsOf, singleInstance } from "./networks.ts";
import { openShared, openStore, startEvents, startProjects } from "./parts.ts";
import { startBackground, wireFeatures } from "./features.ts";
import { checkPortFree } from "./steps.ts";
import { openSigners } from "./signers.ts";
import { StepList } from "./step-list.ts";
import { type NetworkFacts, readyLine } from "./start-summary.ts";

export { localFunder } from "./networks.ts";

/** At stop, how long the server waits for the responses still being sent (the event streams' last events). */
const SERVER_CLOSE_MS = 1_000;

export interface Relay {
  url: string;
  app: ReturnType<typeof createApp>;
  networks: Networks;
  /** The relay's database (for operators' tooling and tests). */
  database: Db;
  /** The feed of GET /v1/events (a writer of events pokes it). */
  events: EventFeed;
  stop(): Promise<void>;
}

/**
 * Starts the relay. `signal` calls the start off (SIGTERM while starting): it stops at its next
 * step, closes what it had opened and rejects with the signal's reason. A step under way finishes
 * first (each has its own timeout), except the wait for an embedded network's channel pool, which
 * waits on ledger closes.
 */
export async function startRelay(config: Config, log: Logger, signal?: AbortSignal): Promise<Relay> {
  checkPortFree(config);
  const closers = new Closers(log);
  const unlock = singleInstance(config) ? lockDataDir(config.DATA_DIR, embeddedParts(config)) : () => {};
  closers.push("data directory lock", unlock);
  try {
    const started = signal ?? new AbortController().signal;
    const m = await START.run({ config, log, closers, signal: started }, signal, (step) =>
      log.debug({ step }, "start step"),
    );
    log.info({ port: m.app.server!.port }, "relay listening");
    const networks = m.networks.all().map((n) => factsOf(config, n, m.url));
    log.info({ url: m.url }, readyLine(config, { url: m.url, networks }));
    return relay(m.url, m.app, m.networks, m.store.database.db, m.events, closers);
  } catch (e) {
    await closers.close(); // a relay that cannot start leaves nothing running
    throw e;
  }
}

/** The start, in order; each step pushes what it opens on the closers (closed newest first). */
const START = StepList.of<{ config: Config; log: Logger; closers: Closers; signal: AbortSignal }>()
  // keys in tokens first: a wrong PIN or a missing key ends the start before anything is opened
  .step("keys in tokens", async ({ config, log }) => ({ signers: await openSigners(config, log) }))
  .step("store", async ({ config, log, closers }) => ({ store: await openStore(config, log, closers) }))
  .step("shared parts", async ({ config, log, closers, store }) => ({
    shared: await openShared(config, log, store, closers),
  }))
  .step("networks", async ({ config, log, closers, store, shared, signers }) => ({
    networks: await buildNetworks({ config, log, ...store, ...shared, signers }, (n) => {
      closers.push(`${n.name} network`, () => n.localnet?.stop());
      closers.push(`${n.name} gateway`, () => n.gateway.stop());
      closers.push(`${n.name} channel pool`, () => n.pool?.stop());
    }),
  }))
  .step("events", async ({ config, log, closers, store }) => ({
    events: await startEvents(config, log, store, closers),
  }))
  .step("features", ({ config, log, store, shared, networks, events }) => ({
    features: wireFeatures(config, log, { ...store, ...shared, networks, events }),
  }))
  .step("projects", async ({ config, log, closers, store, shared, features, networks, events }) => ({
    projects: await startProjects(config, log, { ...store, ...shared, ...features, networks, events }, closers),
  }))
  .step("http server", ({ closers, features, projects }) => {
    const app = features.app(projects);
    closers.push("http server", async () => {
      // the event streams just ended send what they hold (a second at most); what is still open is then closed
      const server = app.server;
      if (server) await Promise.race([server.stop(false), Bun.sleep(SERVER_CLOSE_MS)]);
      await app.stop(true);
    });
    closers.push("requests in flight", () => features.drain(projects.watch));
    return { app, url: `http://127.0.0.1:${app.server!.port}` };
  })
  .step("networks started", async ({ config, log, networks, url, signal }) => {
    await startNetworks(networks, { config, log, url, signal });
    return {};
  })
  .step("background work", ({ config, log, features, networks, closers }) => {
    startBackground(config, log, features, networks, closers);
    return {};
  });

const factsOf = (config: Config, n: Network, url: string): NetworkFacts => ({
  name: n.name,
  embedded: !n.rpc,
  rpc: n.rpc ?? `${url}/localnet/${n.name}/rpc`,
  channels: n.pool && settingsOf(config, n.name).channels,
  signer: n.pool?.signer,
});

function relay(
  url: string,
  app: ReturnType<typeof createApp>,
  networks: Networks,
  database: Db,
  events: EventFeed,
  closers: Closers,
): Relay {
  return {
    url,
    app,
    networks,
    database,
    events,
    stop: () => closers.close(),
  };
}
