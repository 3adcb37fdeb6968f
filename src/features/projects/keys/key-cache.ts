/**
 * This instance's cache of API keys, by their hash: the live keys (filled at boot, a key created or
 * looked up is added), and the hashes recently found unknown (for NEGATIVE_CACHE_MS, so that a bad
 * key cannot buy a database lookup per request). A revoked key is forgotten at once, here and, by
 * a notice or the database's check (ProjectsService), on every instance. An expired key stays (its
 * lookup answers it, so that the caller learns it expired) but is not known as valid: its caller's IP
 * pays a rate-limit token first, as for a revoked one.
 */
import type { KeyRow, ProjectsRepo } from "../../../store/projects.repo.ts";

const NEGATIVE_CACHE_MS = 10_000;
const NEGATIVE_CACHE_MAX = 10_000;

export class KeyCache {
  /** Live keys by hash. */
  private readonly keys = new Map<string, KeyRow>();
  private readonly unknown = new Map<string, number>();
  /** Keys revoked: a lookup that read the row before the revocation must not cache it. */
  private readonly revoked = new Set<string>();

  constructor(private readonly projects: Pick<ProjectsRepo, "keyByHash">) {}

  /** Whether the key with this hash is known as valid (authenticating it needs no database lookup). */
  has(hash: string, now = Date.now()): boolean {
    const k = this.keys.get(hash);
    return k !== undefined && !expired(k, now);
  }

  /** A key's new expiry (a rotation's, here or on another instance): its cached row changes, if cached. */
  expire(keyId: string, at: Date): void {
    for (const [hash, k] of this.keys) if (k.id === keyId) this.keys.set(hash, { ...k, expiresAt: at });
  }

  /** A live key (created here, or read at boot). */
  add(hash: string, row: KeyRow): void {
    this.unknown.delete(hash);
    this.keys.set(hash, row);
  }

  /** A key created elsewhere: its hash is no longer known as unknown. */
  created(hash: string): void {
    this.unknown.delete(hash);
  }

  /** The key with this hash, not revoked (expired or not: see `expired`), from the cache, else the database; or null. */
  async lookup(hash: string): Promise<KeyRow | null> {
    const cached = this.keys.get(hash);
    if (cached) return cached;
    const miss = this.unknown.get(hash);
    if (miss !== undefined && miss > Date.now()) return null;
    const row = await this.projects.keyByHash(hash);
    if (row && !row.revokedAt && !this.revoked.has(row.id)) {
      this.keys.set(hash, row);
      return row;
    }
    if (this.unknown.size >= NEGATIVE_CACHE_MAX) this.unknown.clear();
    this.unknown.set(hash, Date.now() + NEGATIVE_CACHE_MS);
    return null;
  }

  /** Forgets a revoked key; answers whether it was cached. */
  forget(keyId: string): boolean {
    this.revoked.add(keyId);
    let found = false;
    for (const [hash, k] of this.keys)
      if (k.id === keyId) {
        this.keys.delete(hash);
        found = true;
      }
    return found;
  }
}

/** Whether a key's expiry has passed (each instance by its own clock). */
export const expired = (k: Pick<KeyRow, "expiresAt">, now = Date.now()): boolean =>
  k.expiresAt !== null && k.expiresAt.getTime() <= now;
