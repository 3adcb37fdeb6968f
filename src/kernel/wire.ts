/** TypeBox helpers every wire model uses (a leaf: TypeBox only). */
import { Type, type TSchema } from "@sinclair/typebox";

/**
 * A string of a fixed shape, and that shape in words (`x-expected`): what a validation message says
 * is allowed, never the pattern itself.
 */
export const shaped = (pattern: string, expected: string, options: Record<string, unknown> = {}) =>
  Type.String({ pattern, "x-expected": expected, ...options });

/** How the shapes the API takes read. */
export const EXPECTED = {
  stroops: 'a whole number of stroops written as a string of 1 to 18 digits, such as "1000000"',
  account: "an account (G...) or a contract (C...) address, 56 characters",
  contract: "a contract address (C..., 56 characters)",
  asset: '"native" or CODE:ISSUER (a code of 1 to 12 letters and digits, a colon, the issuer\'s G... address)',
  isoTime: 'an ISO 8601 date and time with a time zone, such as "2030-01-01T00:00:00Z"',
  functionName: "a function name: 1 to 32 letters, digits and _",
} as const;

/** A stroop amount: a decimal string (bigint on our side, never a float). */
export const stroops = (description: string) =>
  shaped("^[0-9]+$", "a whole number of stroops written as a string of digits", {
    description: `${description}, in stroops`,
  });
export const nullableString = () => Type.Union([Type.String(), Type.Null()]);
/** A field of a change: a value, or null for "back to the default". */
export const nullable = <T extends TSchema>(s: T) => Type.Optional(Type.Union([s, Type.Null()]));
