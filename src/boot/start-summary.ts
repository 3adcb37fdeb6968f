/**
 * What the relay says while it starts and once it is ready, for the person who started it: what it
 * is doing during a first start (the database created, the channel pools funded), then one line to
 * act on: its URL, where each network points, the store, Redis, the pools and the docs page. Never a
 * password: URLs are shown by host, port and path only, and an upstream RPC's by scheme, host and
 * port (providers put their API keys in the path).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../config.ts";
import type { KeySigner } from "../features/pool/channel-pool.ts";
import type { NetworkName } from "../stellar/networks.ts";

/** A URL without its credentials or query: host, port and path. */
export function shownUrl(raw: string): string {
  try {
    const u = new URL(raw);
    return `${u.protocol}//${u.host}${u.pathname === "/" ? "" : u.pathname}`;
  } catch {
    return "(not a URL)";
  }
}

/** An upstream RPC's URL as shown and logged: scheme, host and port (its path and query may hold a key). */
export function rpcOrigin(raw: string): string {
  try {
    const u = new URL(raw);
    return `${u.protocol}//${u.host}`;
  } catch {
    return "(not a URL)";
  }
}

/** The store, as a person reads it. */
export function storeOf(config: Config): string {
  if (!config.DATABASE_URL) return `PGlite in ${join(config.DATA_DIR, "pglite")}`;
  const schema = config.DATABASE_SCHEMA ? ` (schema ${config.DATABASE_SCHEMA})` : "";
  return `Postgres ${shownUrl(config.DATABASE_URL).replace(/^postgres(ql)?:\/\//, "")}${schema}`;
}

/** What opening the database will do: a first start on PGlite creates it (initdb, a few seconds). */
export function databaseStep(config: Config): string {
  const fresh = !config.DATABASE_URL && !existsSync(join(config.DATA_DIR, "pglite", "PG_VERSION"));
  return fresh
    ? `creating the embedded database in ${join(config.DATA_DIR, "pglite")} (first start: a few seconds)`
    : `opening the database: ${storeOf(config)}`;
}

/** What the ready line says of one served network. */
export interface NetworkFacts {
  name: NetworkName;
  /** Its embedded localnet, or its upstream RPC. */
  embedded: boolean;
  rpc: string;
  /** Its pool's channel count (none: it has no funder). */
  channels?: number;
  /** What signs for it: its funder and new channels (seed, sealed, or a token). */
  signer?: { funder: KeySigner; channels: KeySigner };
}

export interface StartFacts {
  url: string;
  networks: NetworkFacts[];
}

const shownSigner = (k: KeySigner) => (k.kind === "pkcs11" ? `pkcs11 token "${k.token}"` : k.kind);

/** The line a person acts on once the relay is ready. */
export function readyLine(config: Config, f: StartFacts): string {
  const networks = f.networks
    .map((n) => `${n.name}: ${n.embedded ? `embedded localnet (${n.rpc})` : rpcOrigin(n.rpc)}`)
    .join(", ");
  const pools = f.networks.flatMap((n) => (n.channels === undefined ? [] : [`${n.name} ${n.channels}`])).join(", ");
  const redis = config.REDIS_URL ? `Redis ${shownUrl(config.REDIS_URL)}` : "in-memory limits (no Redis)";
  const keys = f.networks
    .flatMap((n) =>
      n.signer ? [`${n.name} funder ${shownSigner(n.signer.funder)}, channels ${shownSigner(n.signer.channels)}`] : [],
    )
    .join("; ");
  return [
    `relay ready on ${f.url}`,
    `networks: ${networks}`,
    `store: ${storeOf(config)}`,
    redis,
    `channel pools: ${pools || "none"}`,
    ...(keys ? [`keys: ${keys}`] : []),
    `docs: ${f.url}/openapi`,
  ].join(" | ");
}
