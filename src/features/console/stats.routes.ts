/** GET /v1/admin/stats: the operator console's overview figures (src/store/admin-stats.repo.ts). */
import { Elysia, t } from "elysia";
import { errorResponses } from "../../http/schemas.ts";
import { adminSecurity } from "../../http/openapi-refs.ts";
import type { AdminStatsRepo } from "../../store/admin-stats.repo.ts";

const AdminStats = t.Object(
  {
    minutes: t.Integer({ description: "The window: the last this many minutes" }),
    perMinute: t.Array(
      t.Object({
        minute: t.String({ description: "The minute's start (UTC)" }),
        network: t.String(),
        status: t.String({ description: "The submissions' status now" }),
        count: t.Integer(),
      }),
      {
        description:
          "Submissions created in the window, per minute, network and status (minutes without any are left out)",
      },
    ),
    creditsSpentToday: t.String({ description: "Stroops of fees charged to projects since 00:00 UTC" }),
  },
  { $id: "AdminStats" },
);

/** `written`: resolves once the outcomes answered so far are written (a charge answered is counted). */
export function statsRoutes(deps: { stats: AdminStatsRepo; written?: () => Promise<void> }) {
  return new Elysia({ name: "stats.routes", prefix: "/v1/admin" }).get(
    "/stats",
    async ({ query }) => {
      const minutes = query.minutes ?? 60;
      await deps.written?.();
      const [perMinute, spent] = await Promise.all([deps.stats.perMinute(minutes), deps.stats.spentToday()]);
      return { minutes, perMinute, creditsSpentToday: spent.toString() };
    },
    {
      query: t.Object(
        { minutes: t.Optional(t.Numeric({ minimum: 1, maximum: 1440, multipleOf: 1 })) },
        { additionalProperties: false },
      ),
      response: { 200: AdminStats, ...errorResponses(400, 401, 500) },
      detail: {
        summary: "Submissions per minute by status, and credits spent today (the console's overview)",
        tags: ["admin"],
        security: adminSecurity,
      },
    },
  );
}
