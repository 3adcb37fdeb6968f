/** TypeBox helpers every wire model uses (a leaf: TypeBox only). */
import { Type, type TSchema } from "@sinclair/typebox";

/** A stroop amount: a decimal string (bigint on our side, never a float). */
export const stroops = (description: string) =>
  Type.String({ pattern: "^[0-9]+$", description: `${description}, in stroops` });
export const nullableString = () => Type.Union([Type.String(), Type.Null()]);
/** A field of a change: a value, or null for "back to the default". */
export const nullable = <T extends TSchema>(s: T) => Type.Optional(Type.Union([s, Type.Null()]));
