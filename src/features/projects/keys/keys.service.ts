/**
 * A project's API keys: creation (scopes, expiry), rotation, the list, and authentication's part:
 * the key row of a presented key (401: unknown, revoked or KEY_EXPIRED) and its last use noted.
 *
 * Scopes and expiry travel with the key row, which every instance caches (KeyCache): an expiry is
 * a time, so each instance enforces it by its own clock; a rotation's new expiry of the old key is
 * told to the other instances (notice `key-expiry`), as a revocation is.
 *
 * lastUsedAt is written at most once a minute per key and instance, after the answer's way and
 * without waiting for it (never on a request's path): it may be up to a minute old.
 */
import { RelayError, validationError } from "../../../kernel/errors.ts";
import type { Logger } from "../../../kernel/log.ts";
import { KEY_SCOPES, type CreatedKeyView, type KeyScope, type KeyView } from "./key.model.ts";
import type { KeyRow, ProjectsRepo } from "../../../store/projects.repo.ts";
import type { KeyEnvironment } from "../../../stellar/networks.ts";
import { generateKey, hashKey, keyEnvironment, keyPrefix } from "./api-keys.ts";
import { expired, KeyCache } from "./key-cache.ts";

/** How often a key's last use is written (per key and instance). */
export const LAST_USED_EVERY_MS = 60_000;

/** A change to a key the other instances apply (ProjectsService's notices). */
export type KeyNotice = { topic: "key-expiry"; keyId: string; expiresAt: string };

export interface NewKey {
  environment: KeyEnvironment;
  label: string | null;
  scopes?: KeyScope[];
  /** ISO 8601, in the future. */
  expiresAt?: string;
}

export const keyView = (k: KeyRow): KeyView => ({
  id: k.id,
  prefix: k.prefix,
  environment: k.environment,
  label: k.label,
  scopes: k.scopes,
  createdAt: k.createdAt.toISOString(),
  expiresAt: k.expiresAt?.toISOString() ?? null,
  lastUsedAt: k.lastUsedAt?.toISOString() ?? null,
  revokedAt: k.revokedAt?.toISOString() ?? null,
});

const unauthorized = (message: string) => new RelayError("UNAUTHORIZED", message);
const notFound = (what: string) => new RelayError("NOT_FOUND", `${what} not found`);

export class KeysService {
  /** The API keys this instance knows. */
  readonly cache: KeyCache;
  /** When each key's last use was last written here. */
  private readonly written = new Map<string, number>();

  constructor(
    private readonly deps: {
      projects: ProjectsRepo;
      log: Logger;
      /** Tells the other instances (failures logged, not thrown). */
      tell: (n: KeyNotice) => Promise<void>;
      /** A key's expiry brought forward, here or by a notice: what it holds open ends then. */
      expiring: (keyId: string, at: Date) => void;
    },
  ) {
    this.cache = new KeyCache(deps.projects);
  }

  /**
   * The row of a presented key: 401 when malformed, unknown or revoked, 401 KEY_EXPIRED past its expiry.
   * `known`: its hash, when `known` found it (a well-formed key, hashed once per request).
   */
  async resolve(apiKey: string, known?: string): Promise<KeyRow> {
    if (known === undefined && !keyEnvironment(apiKey))
      throw unauthorized("malformed API key: expected sr_test_ or sr_live_ followed by at least 32 base62 characters");
    const row = await this.cache.lookup(known ?? hashKey(apiKey));
    if (!row) throw unauthorized("unknown or revoked API key");
    if (expired(row))
      throw new RelayError("KEY_EXPIRED", `this API key expired at ${row.expiresAt!.toISOString()}`, {
        keyId: row.id,
        expiresAt: row.expiresAt!.toISOString(),
      });
    return row;
  }

  /** A key's hash when this process knows it as valid (not expired): authenticating it needs no database lookup. */
  known(apiKey: string): string | null {
    if (keyEnvironment(apiKey) === null) return null;
    const hash = hashKey(apiKey);
    return this.cache.has(hash) ? hash : null;
  }

  /** Notes a key's use: written at most once a minute per key, not waited for. */
  used(keyId: string, now = Date.now()): void {
    const last = this.written.get(keyId);
    if (last !== undefined && now - last < LAST_USED_EVERY_MS) return;
    this.written.set(keyId, now);
    this.deps.projects
      .touchKeys([keyId])
      .catch((e) => this.deps.log.warn({ err: String(e), keyId }, "writing a key's last use failed"));
  }

  private async project(projectId: string): Promise<void> {
    if (!(await this.deps.projects.get(projectId))) throw notFound("project");
  }

  async create(projectId: string, k: NewKey): Promise<CreatedKeyView> {
    await this.project(projectId);
    const expiresAt = k.expiresAt === undefined ? null : futureTime(k.expiresAt);
    const scopes = k.scopes ? KEY_SCOPES.filter((s) => k.scopes!.includes(s)) : [...KEY_SCOPES];
    if (scopes.length === 0)
      throw validationError("scopes: name at least one of sponsor, simulate, estimate, read", {
        field: "scopes",
        reason: "empty",
      });
    return this.insert(projectId, { environment: k.environment, label: k.label, scopes, expiresAt });
  }

  private async insert(
    projectId: string,
    k: { environment: KeyEnvironment; label: string | null; scopes: KeyScope[]; expiresAt: Date | null },
  ): Promise<CreatedKeyView> {
    const key = generateKey(k.environment);
    const hash = hashKey(key);
    const row = await this.deps.projects.createKey({
      id: crypto.randomUUID(),
      projectId,
      hash,
      prefix: keyPrefix(key),
      ...k,
    });
    this.cache.add(hash, row);
    return { ...keyView(row), key };
  }

  /**
   * A new key like the old one (environment, label, scopes; no expiry), the old one working `overlapSeconds` more
   * (or less, if it expires sooner already). The caller tells the other instances of the new key.
   */
  async rotate(
    projectId: string,
    keyId: string,
    overlapSeconds: number,
  ): Promise<{ created: CreatedKeyView; hash: string }> {
    const old = await this.deps.projects.liveKey(projectId, keyId);
    if (!old) throw notFound("key");
    const created = await this.insert(projectId, {
      environment: old.environment,
      label: old.label,
      scopes: old.scopes,
      expiresAt: null,
    });
    const ended = await this.deps.projects.expireKey(projectId, keyId, new Date(Date.now() + overlapSeconds * 1000));
    if (ended?.expiresAt) {
      this.cache.expire(keyId, ended.expiresAt);
      this.deps.expiring(keyId, ended.expiresAt);
      await this.deps.tell({ topic: "key-expiry", keyId, expiresAt: ended.expiresAt.toISOString() });
    }
    return { created, hash: hashKey(created.key) };
  }

  async list(projectId: string): Promise<KeyView[]> {
    await this.project(projectId);
    return (await this.deps.projects.keys(projectId)).map(keyView);
  }

  /** Another instance's notice. */
  apply(n: KeyNotice): void {
    this.cache.expire(n.keyId, new Date(n.expiresAt));
    this.deps.expiring(n.keyId, new Date(n.expiresAt));
  }
}

/** An expiresAt of a new key: ISO 8601, in the future. */
function futureTime(text: string): Date {
  const at = /^\d{4}-\d{2}-\d{2}T/.test(text) ? new Date(text) : new Date(Number.NaN);
  if (Number.isNaN(at.getTime()))
    throw validationError("expiresAt: must be an ISO 8601 time, e.g. 2027-01-31T00:00:00Z", {
      field: "expiresAt",
      reason: "not_a_time",
    });
  if (at.getTime() <= Date.now())
    throw validationError("expiresAt: must be in the future", { field: "expiresAt", reason: "in_the_past" });
  return at;
}
