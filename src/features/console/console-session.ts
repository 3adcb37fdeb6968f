/**
 * The operator console's sessions (src/features/console/static, GET /console): signing in with the admin token
 * (POST /v1/admin/session, `Authorization: Bearer <ADMIN_TOKEN>`) opens a session whose id travels
 * in an HttpOnly, SameSite=Strict cookie (Secure behind TLS) and expires; sign-out ends it at once.
 * A session authorizes the admin API like the token does, but a state-changing request with it
 * must carry the session's CSRF token in X-CSRF-Token (a header another site cannot set), and a
 * browser's cross-site request (Sec-Fetch-Site: cross-site) is refused outright.
 *
 * Sessions are kept where the checkpoints are (Redis with REDIS_URL: every instance sees them;
 * else in this process), under the SHA-256 of their id: the store never holds a usable cookie.
 * Each session is tied to the admin token that opened it: its record holds an HMAC of its id keyed
 * with the token (without the id, which the store never holds, it says nothing of the token), so a
 * relay started with another ADMIN_TOKEN refuses it. Each also records the store's session
 * generation: DELETE /v1/admin/sessions changes it, and every session opened before ends, on every
 * instance.
 * Wrong tokens at sign-in are limited per client IP (5 a minute, then 429 with Retry-After).
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { RelayError } from "../../kernel/errors.ts";
import { HttpError } from "../../http/errors.ts";
import { wrongAdminToken } from "../projects/admin-guesses.ts";

export const SESSION_COOKIE = "relay_console";
/** The cookie is sent to the admin API only. */
export const SESSION_COOKIE_PATH = "/v1/admin";
export const SESSION_PATH = "/v1/admin/session";
export const CSRF_HEADER = "x-csrf-token";
/** Default session lifetime: 8 h (ADMIN_SESSION_TTL_S). */
export const DEFAULT_SESSION_TTL_S = 8 * 3600;
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** Where sessions are kept: the checkpoint store's interface (src/store/checkpoints.ts). */
export interface SessionStore {
  get(key: string): Promise<unknown | null>;
  set(key: string, value: unknown, ttlSeconds?: number): Promise<void>;
}

interface SessionRecord {
  csrf: string;
  /** HMAC-SHA256 of the session id keyed with the admin token that opened it (hex). */
  token?: string;
  /** The store's session generation when it was opened (GENERATION_KEY; null: never changed). */
  generation?: string | null;
  /** Epoch ms. */
  expiresAt: number;
  /** Signed out: kept as a tombstone until it would have expired. */
  ended?: boolean;
}

export interface Session {
  id: string;
  csrfToken: string;
  expiresAt: number;
}

const sha256 = (s: string) => new Bun.CryptoHasher("sha256").update(s).digest();
const token = () => randomBytes(32).toString("base64url");
/** Where the session generation is kept: a new value ends every session opened before it. */
const GENERATION_KEY = "console-sessions:generation";
const sameSecret = (a: string, b: string) => {
  const [x, y] = [sha256(a), sha256(b)];
  return timingSafeEqual(x, y);
};

export class ConsoleSessions {
  /**
   * `adminToken`: the relay's ADMIN_TOKEN; sessions opened with another token are not found
   * (none at all without one).
   */
  constructor(
    private readonly store: SessionStore,
    private readonly adminToken: string | undefined,
    readonly ttlSeconds = DEFAULT_SESSION_TTL_S,
  ) {}

  private key(id: string): string {
    return `console-session:${sha256(id).toString("hex")}`;
  }

  /** The session's tie to the admin token: HMAC-SHA256(key: the token, message: the session id). */
  private fingerprint(id: string): string | null {
    return this.adminToken ? createHmac("sha256", this.adminToken).update(id).digest("hex") : null;
  }

  private async generation(): Promise<string | null> {
    const g = await this.store.get(GENERATION_KEY);
    return typeof g === "string" ? g : null;
  }

  async open(): Promise<Session> {
    const s: Session = { id: token(), csrfToken: token(), expiresAt: Date.now() + this.ttlSeconds * 1000 };
    const fingerprint = this.fingerprint(s.id);
    if (!fingerprint) throw new Error("console sessions need the admin token");
    const record: SessionRecord = {
      csrf: s.csrfToken,
      expiresAt: s.expiresAt,
      token: fingerprint,
      generation: await this.generation(),
    };
    await this.store.set(this.key(s.id), record, this.ttlSeconds);
    return s;
  }

  /**
   * The live session with this id, or null (unknown, expired, signed out, opened with another admin
   * token, or before every session was ended).
   */
  async find(id: string): Promise<Session | null> {
    if (!/^[A-Za-z0-9_-]{20,100}$/.test(id)) return null;
    const [stored, generation] = await Promise.all([this.store.get(this.key(id)), this.generation()]);
    const r = stored as SessionRecord | null;
    if (!r || r.ended || typeof r.csrf !== "string" || !(r.expiresAt > Date.now())) return null;
    const fingerprint = this.fingerprint(id);
    if (!fingerprint || typeof r.token !== "string" || !sameSecret(r.token, fingerprint)) return null;
    if ((r.generation ?? null) !== generation) return null;
    return { id, csrfToken: r.csrf, expiresAt: r.expiresAt };
  }

  /** Ends every session, on every instance that shares the store (a new generation). */
  async endAll(): Promise<void> {
    await this.store.set(GENERATION_KEY, token());
  }

  /** Ends a session (server-side: its cookie no longer authorizes anything, on any instance). */
  async end(s: Session): Promise<void> {
    const left = Math.max(1, Math.ceil((s.expiresAt - Date.now()) / 1000));
    await this.store.set(this.key(s.id), { csrf: "", expiresAt: 0, ended: true }, left);
  }
}

/** Failed sign-ins per client IP: `limit` a window, then 429 until the window ends. Bounded in size. */
export class SignInLimiter {
  private readonly failures = new Map<string, { count: number; resetAt: number }>();

  constructor(
    readonly limit = 5,
    readonly windowMs = 60_000,
    private readonly maxEntries = 10_000,
  ) {}

  /** Seconds until `ip` may try again; 0: it may now. */
  waitSeconds(ip: string, now = Date.now()): number {
    const f = this.failures.get(ip);
    if (!f || f.resetAt <= now) return 0;
    return f.count >= this.limit ? Math.max(1, Math.ceil((f.resetAt - now) / 1000)) : 0;
  }

  failed(ip: string, now = Date.now()): void {
    const f = this.failures.get(ip);
    if (f && f.resetAt > now) {
      f.count++;
      return;
    }
    this.failures.delete(ip);
    this.failures.set(ip, { count: 1, resetAt: now + this.windowMs });
    for (const oldest of this.failures.keys()) {
      if (this.failures.size <= this.maxEntries) break;
      this.failures.delete(oldest);
    }
  }
}

/** How an admin request was authorized: the bearer token, or a console session. */
export type AdminAuth = { by: "token" } | { by: "session"; session: Session };

/** A cookie's value from the Cookie header, or null. */
export function readCookie(request: Request, name: string): string | null {
  for (const part of (request.headers.get("cookie") ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

/** Whether the request reached the relay over TLS (its URL, or X-Forwarded-Proto from a trusted proxy). */
export function overTls(request: Request, trustProxy: boolean): boolean {
  if (request.url.startsWith("https:")) return true;
  const forwarded = request.headers.get("x-forwarded-proto")?.split(",").at(-1)?.trim().toLowerCase();
  return trustProxy && forwarded === "https";
}

/** The Set-Cookie value of a session (or, without one, of its removal). */
export function sessionCookie(s: Session | null, secure: boolean): string {
  const value = s ? s.id : "";
  // rounded up: a session made a millisecond ago still has its whole lifetime (28800, not 28799);
  // the server checks expiresAt itself, so a cookie that outlives it by under a second admits nothing
  const maxAge = s ? Math.max(0, Math.ceil((s.expiresAt - Date.now()) / 1000)) : 0;
  return [
    `${SESSION_COOKIE}=${value}`,
    `Path=${SESSION_COOKIE_PATH}`,
    `Max-Age=${maxAge}`,
    "HttpOnly",
    "SameSite=Strict",
    ...(secure ? ["Secure"] : []),
  ].join("; ");
}

const unauthorized = (message: string) => new HttpError("UNAUTHORIZED", message, { "WWW-Authenticate": "Bearer" });

/**
 * The admin API's check (the auth plugin calls it for /v1/admin requests): the bearer token,
 * compared in constant time, else a console session (with its CSRF token when the method changes
 * state). Sign-in (POST /v1/admin/session) needs the token. Wrong tokens, on any admin route, are
 * counted per IP: past the limit they are 429 (the right token still passes: no lock-out of the
 * operator by whoever shares the address).
 */
export function adminAuthenticator(deps: { adminToken: string; sessions?: ConsoleSessions; limiter?: SignInLimiter }) {
  const admin = sha256(deps.adminToken);
  const limiter = deps.limiter ?? new SignInLimiter();
  return async (request: Request, path: string, ip: string): Promise<AdminAuth> => {
    const signIn = path === SESSION_PATH && request.method === "POST";
    const authorization = request.headers.get("authorization");
    if (authorization !== null || signIn || !deps.sessions) {
      const m = /^Bearer (.+)$/.exec(authorization ?? "");
      if (m && timingSafeEqual(sha256(m[1]!), admin)) return { by: "token" };
      wrongAdminToken(limiter, ip, authorization !== null || signIn, "admin tokens");
      throw unauthorized("the admin API needs Authorization: Bearer <ADMIN_TOKEN>");
    }
    const id = readCookie(request, SESSION_COOKIE);
    if (!id) throw unauthorized("the admin API needs Authorization: Bearer <ADMIN_TOKEN> or a console session");
    const session = await deps.sessions.find(id);
    if (!session) throw unauthorized("the console session has ended or expired: sign in again");
    if (!SAFE_METHODS.has(request.method)) {
      if (request.headers.get("sec-fetch-site") === "cross-site")
        throw new RelayError("FORBIDDEN", "a cross-site request cannot use the console session", {
          reason: "cross_site",
        });
      const csrf = request.headers.get(CSRF_HEADER);
      if (!csrf || !sameSecret(csrf, session.csrfToken))
        throw new RelayError("FORBIDDEN", "a change with the console session needs its X-CSRF-Token header", {
          reason: "csrf_token",
        });
    }
    return { by: "session", session };
  };
}

/** What the auth plugin's onRequest puts on the context of an admin request: how it was authorized. */
export interface AdminContext {
  adminAuth: AdminAuth;
}
