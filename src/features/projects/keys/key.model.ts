/**
 * API keys as the admin API shows them (a leaf, as every model): never the key itself (but once, at
 * creation or rotation: CreatedKeyView).
 */
import { Type, type Static } from "@sinclair/typebox";
import { KEY_SCOPES, type KeyScope as Scope } from "../../../kernel/scopes.ts";

export { KEY_SCOPES };
export const KeyScope = Type.Union(
  [Type.Literal("sponsor"), Type.Literal("simulate"), Type.Literal("estimate"), Type.Literal("read")],
  { $id: "KeyScope" },
);
export type KeyScope = Scope;

const nullableString = (description: string) => Type.Union([Type.String(), Type.Null()], { description });

export const KeyView = Type.Object(
  {
    id: Type.String(),
    prefix: Type.String(),
    environment: Type.Union([Type.Literal("test"), Type.Literal("live")]),
    label: Type.Union([Type.String(), Type.Null()]),
    scopes: Type.Array(KeyScope, { description: "What the key may call" }),
    createdAt: Type.String(),
    expiresAt: nullableString("When the key stops working (ISO 8601, then 401 KEY_EXPIRED); null: never"),
    lastUsedAt: nullableString(
      "The last authenticated request with it, written at most once a minute per key (and instance): up to a minute old",
    ),
    revokedAt: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: "ApiKey" },
);
export type KeyView = Static<typeof KeyView>;

export const CreatedKeyView = Type.Composite(
  [KeyView, Type.Object({ key: Type.String({ description: "The key itself: shown this once" }) })],
  { $id: "CreatedApiKey" },
);
export type CreatedKeyView = Static<typeof CreatedKeyView>;
