/** The relay's environment, validated once at boot with a TypeBox schema. */
import { Type, type Static } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";

const NumberFromEnv = (def: number, min = 0) => Type.Number({ default: def, minimum: min });

export const ConfigSchema = Type.Object({
  PORT: NumberFromEnv(3000),
  DATA_DIR: Type.String({ default: "./.data" }),
  LEDGER_CLOSE_MS: NumberFromEnv(5000),
  LOCALNET_MAX_TX_SET_SIZE: NumberFromEnv(1000, 1),
  TESTNET_RPC_URL: Type.Optional(Type.String({ minLength: 1 })),
  MAINNET_RPC_URL: Type.Optional(Type.String({ minLength: 1 })),
});
export type Config = Static<typeof ConfigSchema>;

/** Parses `env` (strings) into a typed config; throws with every problem listed. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const raw = Object.fromEntries(Object.keys(ConfigSchema.properties).filter((k) => env[k] !== undefined && env[k] !== "").map((k) => [k, env[k]]));
  const value = Value.Default(ConfigSchema, Value.Convert(ConfigSchema, raw));
  const errors = [...Value.Errors(ConfigSchema, value)];
  if (errors.length) throw new Error(`invalid configuration: ${errors.map((e) => `${e.path.slice(1)} ${e.message}`).join("; ")}`);
  return value as Config;
}
