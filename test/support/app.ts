/**
 * The relay's HTTP app (createApp) without networks or a database: for tests of what happens before
 * any route does its work (request ids, headers, authentication, rate limits, input checks, CORS), through
 * `app.handle` (`http`: test/support/harness.ts). No key is known: every X-API-Key is unknown (its lookup
 * answers nothing).
 */
import { createApp } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import { createLogger, type Logger } from "../../src/kernel/log.ts";
import { ProjectActors } from "../../src/features/projects/project-actors.ts";
import { ProjectsService } from "../../src/features/projects/projects.service.ts";
import {
  ANONYMOUS_POLICY_DEFAULTS,
  PROJECT_POLICY_DEFAULTS,
  effectivePolicy,
  type PolicyPatch,
} from "../../src/features/projects/rules/policy.ts";
import { MemoryCheckpoints } from "../../src/store/checkpoints.ts";
import { Networks } from "../../src/features/networks/networks.ts";
import { inProcess } from "./harness.ts";

export interface LightAppOptions {
  anonymousPolicy?: PolicyPatch;
  maxAnonymousClients?: number;
  maxCheckpoints?: number;
  trustProxy?: boolean;
  hstsMaxAge?: number;
  /** CORS_ORIGINS (unset: no CORS headers). */
  corsOrigins?: string;
  log?: Logger;
}

const ADMIN_TOKEN = "light-app-admin-token-0123";

export function lightApp(opts: LightAppOptions = {}) {
  const log = opts.log ?? createLogger("silent");
  const checkpoints = new MemoryCheckpoints(opts.maxCheckpoints);
  const anonymousPolicy = effectivePolicy(ANONYMOUS_POLICY_DEFAULTS, opts.anonymousPolicy ?? {});
  const maxAnonymousClients = opts.maxAnonymousClients ?? loadConfig({}).ANONYMOUS_MAX_CLIENTS;
  const actors = new ProjectActors(checkpoints, { anonymousPolicy, debounceMs: 0, maxAnonymousClients }, log);
  let lookups = 0;
  const repo = {
    keyByHash: async () => {
      lookups++;
      return null;
    },
  };
  const unused = {} as never; // the routes that need them are not called
  const projects = new ProjectsService({
    projects: repo as never,
    credits: unused,
    submissions: unused,
    actors,
    defaults: PROJECT_POLICY_DEFAULTS,
    log,
  });
  const app = createApp({
    networks: new Networks([]),
    publicUrl: () => "http://localhost",
    sponsor: unused,
    transactions: unused,
    simulate: unused,
    idempotency: unused,
    events: unused,
    projects,
    actors,
    webhooks: unused,
    adminToken: ADMIN_TOKEN,
    storage: async () => ({ database: "none", status: "ok", checkpoints: "memory" }),
    log,
    maxBodyBytes: 262_144,
    trustProxy: opts.trustProxy ?? false,
    hstsMaxAge: opts.hstsMaxAge,
    corsOrigins: opts.corsOrigins,
    startedAt: Date.now(),
  });
  const http = inProcess(app, ADMIN_TOKEN);
  return { app, http, actors, checkpoints, lookups: () => lookups, stop: () => actors.stop() };
}
