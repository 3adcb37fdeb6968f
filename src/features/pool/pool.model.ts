/**
 * The wire models of the admin API's channel accounts (TypeBox): each is the one source of its TypeScript type (`Static<typeof Model>`, exported
 * under the same name) and of its OpenAPI schema (a schema with a `$id` is one component of the
 * document). A model is a leaf: it imports TypeBox, the kernel's wire helpers, the protocol's
 * constants and other models only, so services and the store may use it.
 *
 * TypeBox's Integer, not Elysia's t.Integer: that one also takes (and converts) a numeric string.
 */
import { Type, type Static, type TSchema } from "@sinclair/typebox";

const poolStroops = Type.String({ description: "stroops" });
const inFlight = () => Type.Object({ count: Type.Number(), fees: poolStroops });

const unknownElsewhere = <T extends TSchema>(s: T) =>
  Type.Union([s, Type.Null()], { description: "null: held by another instance, which alone knows it" });

export const ChannelView = Type.Object(
  {
    publicKey: Type.String(),
    state: Type.String({ description: "creating, active or draining" }),
    balance: Type.Union([poolStroops, Type.Null()], {
      description: "stroops (another instance's channel: read from the network; null if it did not answer)",
    }),
    available: unknownElsewhere(
      Type.String({ description: "stroops it can still pay: balance less its reserve and the fees in flight" }),
    ),
    sequence: Type.Union([Type.String(), Type.Null()]),
    inFlight: unknownElsewhere(inFlight()),
    holder: Type.Union([Type.String(), Type.Null()], {
      description: "the instance holding the channel (several instances); null: the only instance, or none right now",
    }),
    signer: Type.Union([Type.Literal("sealed"), Type.Literal("pkcs11")], {
      description: "where its key is: sealed in the database, or in the PKCS#11 token (CHANNEL_SIGNER)",
    }),
  },
  { $id: "Channel" },
);
export type ChannelView = Static<typeof ChannelView>;

export const PoolView = Type.Object(
  {
    network: Type.String(),
    instance: Type.Union([Type.String(), Type.Null()], {
      description: "the answering instance (any instance lists every channel, with its holder); null: the only one",
    }),
    funder: Type.Object({
      publicKey: Type.String(),
      balance: poolStroops,
      signer: Type.Union([Type.Literal("seed"), Type.Literal("pkcs11")], {
        description: "where its key is: its seed in the settings, or a PKCS#11 token (*_FUNDER_SIGNER)",
      }),
    }),
    target: Type.Number({ description: "the channel count asked for (the operator's, and more while requests wait)" }),
    max: Type.Optional(Type.Number({ description: "the most channels demand may grow the pool to" })),
    waiting: Type.Optional(Type.Number({ description: "requests waiting for a channel now (this instance)" })),
    current: Type.Number({ description: "channels creating or active (draining ones excluded)" }),
    channels: Type.Array(ChannelView),
    totals: Type.Object({
      count: Type.Number(),
      active: Type.Number(),
      creating: Type.Number(),
      draining: Type.Number(),
      balance: poolStroops,
      inFlight: inFlight(),
    }),
    lastError: Type.Union([Type.String(), Type.Null()], {
      description: "the last failure of the pool's upkeep (creating, merging, topping up), until it succeeds",
    }),
  },
  { $id: "ChannelPool" },
);
export type PoolView = Static<typeof PoolView>;
