/**
 * Wire models of the admin API's projects beyond project.model.ts: the sponsorship rules
 * (allowlists, a time window, per end-user caps, approval) and the project policy's view with
 * `lowBalanceAlert` (the `Policy` and `Project` components). A leaf, as every model.
 */
import { type Static, Type } from "@sinclair/typebox";
import { PolicyView, ProjectView as BaseProjectView } from "./project.model.ts";
import { EXPECTED, shaped } from "../../kernel/wire.ts";

// ---- sponsorship rules: allowlists, a time window, per end-user caps (src/features/projects/rules/sponsorship-rules.ts) ---------------

const CONTRACT = "^C[A-Z2-7]{55}$";
const ADDRESS = "^[GC][A-Z2-7]{55}$";
const ASSET = "^(native|[A-Za-z0-9]{1,12}:G[A-Z2-7]{55})$";
const FUNCTION = "^[A-Za-z0-9_]{1,32}$";
const ISO_TIME = "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]+)?)?(Z|[+-][0-9]{2}:[0-9]{2})$";
const STROOPS = "^[0-9]{1,18}$";

const nullableRule = <T extends ReturnType<typeof Type.Object> | ReturnType<typeof Type.String>>(s: T) =>
  Type.Optional(Type.Union([s, Type.Null()]));

export const AllowSchema = Type.Object(
  {
    contracts: Type.Optional(
      Type.Array(
        Type.Object(
          {
            contract: shaped(CONTRACT, EXPECTED.contract, { description: "a contract (C...)" }),
            functions: Type.Optional(
              Type.Array(shaped(FUNCTION, EXPECTED.functionName), { uniqueItems: true, maxItems: 100 }),
            ),
          },
          { additionalProperties: false },
        ),
        { maxItems: 1000, description: "contracts (and, if given, their functions) invokeHostFunction may call" },
      ),
    ),
    destinations: Type.Optional(
      Type.Array(shaped(ADDRESS, EXPECTED.account), {
        uniqueItems: true,
        maxItems: 1000,
        description: "accounts (G...) or contracts (C...) that value may be sent to",
      }),
    ),
    assets: Type.Optional(
      Type.Array(shaped(ASSET, EXPECTED.asset), {
        uniqueItems: true,
        maxItems: 1000,
        description: '"native" or "CODE:ISSUER"',
      }),
    ),
  },
  { additionalProperties: false, description: "An absent list allows everything; a present one only what it lists" },
);

export const PerUserSchema = Type.Object(
  {
    maxTransactionsPerDay: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000_000 })),
    maxFeePerDay: Type.Optional(shaped(STROOPS, EXPECTED.stroops, { description: "stroops (decimal string)" })),
  },
  { additionalProperties: false, description: "Caps per end user (the inner transaction's source) per UTC day" },
);

const IsoTime = shaped(ISO_TIME, EXPECTED.isoTime, { description: "ISO 8601, with a time zone" });

export const ApprovalSchema = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048, description: "http(s) URL of the app's approval server" }),
    timeoutMs: Type.Optional(Type.Integer({ minimum: 1, maximum: 5000, description: "default 2000" })),
    onFailure: Type.Optional(
      Type.Union([Type.Literal("deny"), Type.Literal("approve")], {
        description: "on a timeout or a non-2xx answer (default deny)",
      }),
    ),
  },
  { additionalProperties: false, description: "Ask the app's server before sponsoring (a signed POST)" },
);

export const ApprovalView = Type.Object({
  url: Type.String(),
  timeoutMs: Type.Integer(),
  onFailure: Type.Union([Type.Literal("deny"), Type.Literal("approve")]),
  secret: Type.Optional(
    Type.String({ description: "whsec_…: in the answer that set the approval URL only (verify requests with it)" }),
  ),
});

/** The policy patch's fields for these rules (the admin API's). */
export const RULES_PATCH = {
  allow: nullableRule(AllowSchema),
  activeFrom: nullableRule(IsoTime),
  activeUntil: nullableRule(IsoTime),
  perUser: nullableRule(PerUserSchema),
  approval: nullableRule(ApprovalSchema),
};

/** The policy view's fields for these rules. */
export const RULES_VIEW = {
  allow: Type.Union([AllowSchema, Type.Null()], { description: "null: no allowlist" }),
  activeFrom: Type.Union([Type.String(), Type.Null()], { description: "ISO 8601; null: no start" }),
  activeUntil: Type.Union([Type.String(), Type.Null()], { description: "ISO 8601; null: no end" }),
  perUser: Type.Union([PerUserSchema, Type.Null()], { description: "null: no per-user caps" }),
  approval: Type.Union([ApprovalView, Type.Null()], { description: "null: no approval call" }),
};

/** A project's effective policy as the admin API answers it. */
export const ProjectPolicyView = Type.Object(
  {
    ...PolicyView.properties,
    lowBalanceAlert: Type.Union([Type.String({ pattern: "^[0-9]{1,18}$" }), Type.Null()], {
      description: "stroops: a credits.low webhook event when the mainnet balance falls below; null: no alert",
    }),
    ...RULES_VIEW,
  },
  { $id: "Policy", description: "The effective policy: the defaults and the project's overrides" },
);
export type ProjectPolicyView = Static<typeof ProjectPolicyView>;

export const ProjectView = Type.Object(
  { ...BaseProjectView.properties, policy: ProjectPolicyView },
  { $id: "Project" },
);
export type ProjectView = Static<typeof ProjectView>;
