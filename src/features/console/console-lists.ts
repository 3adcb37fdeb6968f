/**
 * /console/assets/lists.js: the lists the operator console offers, written from the relay's own
 * constants (a native module the console's pages import), so that the console never repeats them.
 */
import { STATUSES } from "../../../actors/sponsor/submission.machine.ts";
import { KEY_SCOPES } from "../projects/keys/key.model.ts";
import { FEE_STRATEGIES } from "../tx/fee-strategy.ts";
import { PolicyPatch } from "../projects/rules/policy.ts";

/** Taken by the admin API but not shown by the console: superseded by allow.contracts (docs/api.md). */
const NOT_IN_CONSOLE = new Set(["allowedContractIds"]);

/** The lists, by the name the module exports them under. */
export const CONSOLE_LISTS = {
  /** A submission's statuses (the transactions filter). */
  STATUSES: [...STATUSES],
  /** The policy fields a project's policy form edits (the admin API's policy patch). */
  POLICY_FIELDS: Object.keys(PolicyPatch.properties).filter((name) => !NOT_IN_CONSOLE.has(name)),
  /** The fee strategies a policy may pick. */
  FEE_STRATEGIES: [...FEE_STRATEGIES],
  /** The scopes a key may be given. */
  KEY_SCOPES: [...KEY_SCOPES],
} as const;

/** The module's text: one `export const NAME = [...]` a list. */
export const CONSOLE_LISTS_JS = [
  "// Written by the relay (src/features/console/console-lists.ts) from its own constants: do not edit.",
  ...Object.entries(CONSOLE_LISTS).map(([name, list]) => `export const ${name} = ${JSON.stringify(list)};`),
  "",
].join("\n");
