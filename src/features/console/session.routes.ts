/**
 * The operator console's session (console-session.ts): POST /v1/admin/session signs in with the
 * admin token (bearer) and sets the session cookie, GET answers the session's CSRF token and
 * expiry (the page asks for it after a reload), DELETE signs out (the session ends server-side).
 * DELETE /v1/admin/sessions ends every console session, on every instance.
 */
import { Elysia, t } from "elysia";
import { errorResponses } from "../../http/schemas.ts";
import { adminSecurity, adminTokenSecurity } from "../../http/openapi-refs.ts";
import type { AdminContext } from "./console-session.ts";
import { type ConsoleSessions, overTls, sessionCookie } from "./console-session.ts";
import { RelayError } from "../../kernel/errors.ts";

const SessionView = t.Object(
  {
    authenticatedBy: t.Union([t.Literal("session"), t.Literal("token")], {
      description: "session: the console's cookie; token: Authorization: Bearer",
    }),
    csrfToken: t.Union([t.String(), t.Null()], {
      description: "Send it as X-CSRF-Token with every change made with the session (null: no session)",
    }),
    expiresAt: t.Union([t.String(), t.Null()], { description: "When the session ends (ISO 8601)" }),
  },
  { $id: "AdminSession" },
);

/** How the admin request was authorized (put on the context by the auth plugin). */
const adminContext = new Elysia({ name: "admin-context" }).resolve({ as: "scoped" }, (context) => {
  const { adminAuth } = context as typeof context & Partial<AdminContext>;
  if (!adminAuth) throw new Error("no adminAuth: the auth plugin did not run for this route");
  return { adminAuth };
});

const detail = (summary: string, description: string, security = adminSecurity) => ({
  summary,
  description,
  tags: ["admin"],
  security,
});

export function sessionRoutes(deps: { sessions: ConsoleSessions; trustProxy: boolean }) {
  return new Elysia({ name: "session.routes", prefix: "/v1/admin" })
    .use(adminContext)
    .post(
      "/session",
      async ({ adminAuth, request, set }) => {
        if (adminAuth.by !== "token")
          throw new RelayError("UNAUTHORIZED", "signing in needs Authorization: Bearer <ADMIN_TOKEN>");
        const s = await deps.sessions.open();
        set.status = 201;
        set.headers["set-cookie"] = sessionCookie(s, overTls(request, deps.trustProxy));
        set.headers["cache-control"] = "no-store";
        return { authenticatedBy: "session" as const, csrfToken: s.csrfToken, expiresAt: iso(s.expiresAt) };
      },
      {
        response: { 201: SessionView, ...errorResponses(401, 429, 500) },
        detail: detail(
          "Sign in to the operator console",
          "Send the admin token as Authorization: Bearer. The answer sets the session cookie (HttpOnly, " +
            "SameSite=Strict, Secure over TLS, expiring after ADMIN_SESSION_TTL_S) that authorizes the admin API; " +
            "a change made with it needs X-CSRF-Token. Wrong tokens: 5 a minute per client IP, then 429.",
          adminTokenSecurity,
        ),
      },
    )
    .get(
      "/session",
      ({ adminAuth, set }) => {
        set.headers["cache-control"] = "no-store";
        return adminAuth.by === "session"
          ? {
              authenticatedBy: "session" as const,
              csrfToken: adminAuth.session.csrfToken,
              expiresAt: iso(adminAuth.session.expiresAt),
            }
          : { authenticatedBy: "token" as const, csrfToken: null, expiresAt: null };
      },
      {
        response: { 200: SessionView, ...errorResponses(401, 500) },
        detail: detail(
          "The console session: its CSRF token and expiry",
          "401 when the session cookie is missing, expired or signed out.",
        ),
      },
    )
    .delete(
      "/session",
      async ({ adminAuth, request, set }) => {
        if (adminAuth.by === "session") await deps.sessions.end(adminAuth.session);
        set.headers["set-cookie"] = sessionCookie(null, overTls(request, deps.trustProxy));
        return { ended: adminAuth.by === "session" };
      },
      {
        response: { 200: t.Object({ ended: t.Boolean() }), ...errorResponses(401, 403, 500) },
        detail: detail(
          "Sign out of the operator console",
          "Ends the session at once on every instance and clears the cookie; needs X-CSRF-Token.",
        ),
      },
    )
    .delete(
      "/sessions",
      async ({ adminAuth, request, set }) => {
        await deps.sessions.endAll();
        if (adminAuth.by === "session")
          set.headers["set-cookie"] = sessionCookie(null, overTls(request, deps.trustProxy));
        return { ended: "all" as const };
      },
      {
        response: { 200: t.Object({ ended: t.Literal("all") }), ...errorResponses(401, 403, 500) },
        detail: detail(
          "Sign out everywhere: end every console session",
          "Ends every open console session (every browser, on every instance sharing the session store), " +
            "this one too: each must sign in again with the admin token. The bearer token keeps working. " +
            "With a session, needs X-CSRF-Token. (Sessions also end when the relay starts with another ADMIN_TOKEN.)",
        ),
      },
    );
}

const iso = (ms: number) => new Date(ms).toISOString();
