/** GET /v1/admin/projects/{id}/users/{account}: an end user's usage today, against the policy's perUser caps. */
import { Elysia, t } from "elysia";
import { EXPECTED, shaped } from "../../kernel/wire.ts";
import { errorResponses } from "../../http/schemas.ts";
import { adminSecurity } from "../../http/openapi-refs.ts";
import type { ProjectsService } from "./projects.service.ts";
import type { UserCaps } from "./rules/user-caps.ts";

const UserDayView = t.Object(
  {
    account: t.String({ description: "the end user: an inner transaction's source, or a func+auth call's signer" }),
    day: t.String({ description: "the UTC day (YYYY-MM-DD)" }),
    transactions: t.Integer({ description: "transactions sponsored for it today (in flight included)" }),
    feeCharged: t.String({ description: "stroops the network charged for them today" }),
  },
  { $id: "UserDay" },
);

export function userRoutes(deps: { projects: ProjectsService; userCaps: UserCaps }) {
  return new Elysia({ name: "users.routes", prefix: "/v1/admin" }).get(
    "/projects/:id/users/:account",
    async ({ params }) => {
      await deps.projects.get(params.id); // 404 for an unknown project
      return deps.userCaps.today(params.id, params.account);
    },
    {
      params: t.Object({ id: t.String(), account: shaped("^[GC][A-Z2-7]{55}$", EXPECTED.account) }),
      response: { 200: UserDayView, ...errorResponses(400, 401, 404, 500) },
      detail: {
        summary: "An end user's usage today, from what its submissions record (whether or not perUser caps it)",
        tags: ["admin"],
        security: adminSecurity,
      },
    },
  );
}
