/** The admin API (/v1/admin, bearer token checked by the auth plugin): projects, policies, keys and credits. */
import { Elysia, t } from "elysia";
import { shaped } from "../../kernel/wire.ts";
import { CloneType, Type } from "@sinclair/typebox";
import { errorResponses } from "../../http/schemas.ts";
import { adminSecurity } from "../../http/openapi-refs.ts";
import { PolicyPatch as PolicyPatchSchema } from "./rules/policy.ts";
import { CreatedKeyView, KeyScope, KeyView } from "./keys/key.model.ts";
import { CreditBalance, CreditJournal, X402Settings } from "./project.model.ts";
import { ProjectView } from "./admin.model.ts";
import type { ProjectsService } from "./projects.service.ts";

const PolicyPatch = CloneType(PolicyPatchSchema, { $id: "PolicyPatch" });
const name = t.String({ minLength: 1, maxLength: 200 });
const params = t.Object({ id: t.String() });
/** The longest a rotated key may keep working. */
const MAX_OVERLAP_SECONDS = 30 * 86_400;
/** Any admin route: bad input (400), no or a wrong token (401), an unknown project or key (404), a bug (500). */
const errors = errorResponses(400, 401, 404, 500);
/** A route with a body: also too large (413). */
const bodyErrors = { ...errors, ...errorResponses(413) };
const detail = (summary: string, description?: string) => ({
  summary,
  ...(description ? { description } : {}),
  tags: ["admin"],
  security: adminSecurity,
});

export function adminRoutes(deps: { projects: ProjectsService }) {
  const p = deps.projects;
  return new Elysia({ name: "admin.routes", prefix: "/v1/admin" })
    .post(
      "/projects",
      async ({ body, set }) => {
        set.status = 201;
        return p.create(body.name, body.policy);
      },
      {
        body: t.Object({ name, policy: t.Optional(PolicyPatch) }, { additionalProperties: false }),
        response: { 201: ProjectView, ...bodyErrors },
        detail: detail("Create a project"),
      },
    )
    .get("/projects", async () => ({ projects: await p.list() }), {
      response: { 200: t.Object({ projects: t.Array(ProjectView) }), ...errors },
      detail: detail("List projects"),
    })
    .get("/projects/:id", ({ params }) => p.get(params.id), {
      params,
      response: { 200: ProjectView, ...errors },
      detail: detail("A project with its balance and effective policy"),
    })
    .patch("/projects/:id", ({ params, body }) => p.update(params.id, body), {
      params,
      body: t.Object(
        {
          name: t.Optional(name),
          policy: t.Optional(PolicyPatch),
          status: t.Optional(t.Union([t.Literal("active"), t.Literal("suspended")])),
          x402: t.Optional(X402Settings),
        },
        { additionalProperties: false },
      ),
      response: { 200: ProjectView, ...bodyErrors },
      detail: detail(
        "Rename, change policy fields (null: back to the default), suspend a project, or set the addresses it accepts " +
          "x402 payments to (x402.payTo, the whole list)",
      ),
    })
    .post(
      "/projects/:id/keys",
      async ({ params, body, set }) => {
        const k = await p.createKey(params.id, { ...body, label: body.label ?? null });
        set.status = 201;
        return k;
      },
      {
        params,
        body: t.Object(
          {
            environment: t.Union([t.Literal("test"), t.Literal("live")], { error: "environment must be test or live" }),
            label: t.Optional(t.String({ maxLength: 200 })),
            expiresAt: t.Optional(
              t.String({ description: "ISO 8601, in the future: from then on the key is refused (401 KEY_EXPIRED)" }),
            ),
            scopes: t.Optional(
              t.Array(KeyScope, {
                minItems: 1,
                uniqueItems: true,
                description: "What the key may call (default: all); a call outside them is 403 SCOPE_REQUIRED",
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: {
          201: CreatedKeyView,
          ...bodyErrors,
        },
        detail: detail(
          "Create an API key (sr_test_ for testnet, sr_live_ for mainnet); the key is shown once",
          "scopes: sponsor (POST /v1/sponsor and submitting through /compat/channels), simulate (POST /v1/simulate), " +
            "estimate (POST /v1/estimate), read (GET /v1/transactions/*, lists, GET /v1/events, the compat " +
            "endpoint's getTransaction); default all. expiresAt: the key stops working then (401 KEY_EXPIRED) on " +
            "every instance, each by its own clock.",
        ),
      },
    )
    .post(
      "/projects/:id/keys/:keyId/rotate",
      async ({ params, body, set }) => {
        const k = await p.rotateKey(params.id, params.keyId, body.overlapSeconds);
        set.status = 201;
        return k;
      },
      {
        params: t.Object({ id: t.String(), keyId: t.String() }),
        body: t.Object(
          {
            // TypeBox's own Integer: Elysia's t.Integer would also take a number written as a string
            overlapSeconds: Type.Integer({
              minimum: 0,
              maximum: MAX_OVERLAP_SECONDS,
              description: "How long the old key keeps working, in seconds, at most 30 days (then 401 KEY_EXPIRED)",
            }),
          },
          { additionalProperties: false },
        ),
        response: { 201: CreatedKeyView, ...bodyErrors },
        detail: detail(
          "Rotate a key: a new one (shown once) with the same environment, label and scopes",
          "The old key keeps working overlapSeconds more (sooner if it expired sooner already), then is refused " +
            "with 401 KEY_EXPIRED on every instance (its new expiry is told to the other instances at once). " +
            "The new key has no expiry. A revoked or unknown key is 404.",
        ),
      },
    )
    .get("/projects/:id/keys", async ({ params }) => ({ keys: await p.listKeys(params.id) }), {
      params,
      response: { 200: t.Object({ keys: t.Array(KeyView) }), ...errors },
      detail: detail(
        "List a project's keys (no secrets)",
        "With their scopes, expiresAt and lastUsedAt; lastUsedAt is written at most once a minute per key (and " +
          "instance), off the request's path, so it may be up to a minute old.",
      ),
    })
    .delete("/projects/:id/keys/:keyId", ({ params }) => p.revokeKey(params.id, params.keyId), {
      params: t.Object({ id: t.String(), keyId: t.String() }),
      response: { 200: KeyView, ...errors },
      detail: detail("Revoke a key (at once)"),
    })
    .post(
      "/projects/:id/credits",
      ({ params, body }) => p.addCredits(params.id, BigInt(body.amount), body.reference ?? null, body.reason ?? null),
      {
        params,
        body: t.Object(
          {
            amount: shaped(
              "^-?[1-9][0-9]{0,17}$",
              'a non-zero whole number of stroops written as a string of up to 18 digits, such as "1000000" ' +
                '(negative, such as "-500", to take credits back)',
              { description: "stroops; negative for an adjustment (needs reason)" },
            ),
            reference: t.Optional(t.String({ maxLength: 200 })),
            reason: t.Optional(t.String({ minLength: 1, maxLength: 500 })),
          },
          { additionalProperties: false },
        ),
        response: { 200: CreditBalance, ...bodyErrors, ...errorResponses(402) },
        detail: detail(
          "Top up (or adjust) a project's credits",
          "A balance holds at most 9223372036854775807 stroops: a top-up past it is 400 (field amount, reason out_of_range).",
        ),
      },
    )
    .get(
      "/projects/:id/credits",
      ({ params, query }) =>
        p.journal(params.id, query.limit ?? 50, query.cursor !== undefined ? BigInt(query.cursor) : undefined),
      {
        params,
        query: t.Object({
          limit: t.Optional(t.Integer({ minimum: 1, maximum: 500 })),
          cursor: t.Optional(shaped("^[0-9]{1,18}$", "the nextCursor of the page before (digits)")),
        }),
        response: { 200: CreditJournal, ...errors },
        detail: detail("The credit journal, newest first"),
      },
    );
}
