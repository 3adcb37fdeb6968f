/**
 * Elysia's validation errors (TypeBox's) as the relay's VALIDATION_ERROR: one message that names the
 * field, what it got and what is allowed, and a reason code (src/kernel/reasons.ts). Generic, never per
 * field: an unknown field comes first, at any depth (with the closest known name, common abbreviations
 * such as Tx understood), a `X | null` union reports its non-null branch's failure (a shape, a range,
 * a length, a list of words), and a list of words names them. A shape is said in words (a schema's
 * `x-expected`), never as its pattern.
 */
import type { ValidationError } from "elysia";
import { RelayError } from "../kernel/errors.ts";
import type { Reason } from "../kernel/reasons.ts";

interface Schema {
  type?: string;
  const?: unknown;
  anyOf?: Schema[];
  pattern?: string;
  "x-expected"?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  items?: Schema;
  properties?: Record<string, Schema>;
  description?: string;
  error?: unknown;
}
interface Failure {
  type: number;
  path: string;
  message: string;
  value?: unknown;
  schema: Schema;
  errors?: Iterable<Failure>[];
}

// TypeBox's ValueErrorType numbers (@sinclair/typebox/errors)
const ADDITIONAL_PROPERTY = 42;
const REQUIRED_PROPERTY = 45;
const UNION = 62;
const UNIQUE_ITEMS = 5;
const REASON_OF: Record<number, Reason> = {
  [UNIQUE_ITEMS]: "duplicate_items",
  2: "bad_length", // array max items
  4: "bad_length", // array min items
  51: "bad_length", // string max length
  52: "bad_length", // string min length
  53: "bad_format", // string pattern
  50: "bad_format", // string format
};
for (const t of [22, 23, 24, 25, 36, 37, 38, 39]) REASON_OF[t] = "out_of_range";

/** Edits (insertions, deletions, substitutions) from a to b: Levenshtein's distance, two rows. */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
}

/** Short forms people write in field names, as the words the API spells out. */
const ABBREVIATIONS: Record<string, string> = {
  tx: "transactions",
  txs: "transactions",
  txn: "transactions",
  txns: "transactions",
  op: "operations",
  ops: "operations",
  addr: "address",
  amt: "amount",
  dest: "destination",
  dests: "destinations",
  msg: "message",
  secs: "seconds",
  sec: "seconds",
};
/** `name` with its camelCase words' abbreviations spelled out (maxTxPerDay: maxtransactionsperday). */
const spelledOut = (name: string) =>
  name
    .split(/(?=[A-Z])|_/)
    .map((w) => ABBREVIATIONS[w.toLowerCase()] ?? w.toLowerCase())
    .join("");

/**
 * The known name closest to `name` (case-insensitive, abbreviations spelled out), if it is close
 * enough to be a misspelling of it.
 */
export function closest(name: string, known: readonly string[]): string | undefined {
  let best: { name: string; d: number } | undefined;
  const forms = [name.toLowerCase(), spelledOut(name)];
  for (const k of known) {
    const d = Math.min(...forms.map((f) => editDistance(f, k.toLowerCase())));
    if (!best || d < best.d) best = { name: k, d };
  }
  return best && best.d <= Math.max(2, Math.floor(name.length / 3)) ? best.name : undefined;
}

const fieldOf = (path: string) => path.replace(/^\//, "").replace(/\//g, ".");
const shown = (v: unknown) => {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
};
const isNull = (s: Schema) => s.type === "null";
/** The words of a union of constants (`testnet | mainnet`), else undefined. */
const wordsOf = (s: Schema): string[] | undefined =>
  s.anyOf?.length && s.anyOf.every((b) => typeof b.const === "string")
    ? s.anyOf.map((b) => b.const as string)
    : undefined;

/** What a schema allows, in words (the non-null branch of a `X | null`). */
function allowedText(s: Schema): string {
  // a numeric query parameter (Elysia's Numeric: a numeric string or a number) is a number with the union's bounds
  if (s.anyOf?.some((b) => (b as { format?: string }).format === "numeric"))
    return allowedText({ ...s, anyOf: undefined, type: "number" });
  const words = wordsOf(s);
  if (words) return `one of: ${words.join(", ")}`;
  const range = (lo?: number, hi?: number, xlo?: number, xhi?: number) =>
    [
      lo !== undefined ? `>= ${lo}` : xlo !== undefined ? `> ${xlo}` : "",
      hi !== undefined ? `<= ${hi}` : xhi !== undefined ? `< ${xhi}` : "",
    ]
      .filter(Boolean)
      .join(" and ");
  switch (s.type) {
    case "string": {
      if (s["x-expected"]) return s["x-expected"];
      if (s.pattern) return "a string in the documented shape";
      const { minLength: lo, maxLength: hi } = s;
      if (lo !== undefined && hi !== undefined) return `a string of ${lo} to ${hi} characters`;
      if (hi !== undefined) return `a string of at most ${hi} characters`;
      return lo !== undefined ? `a string of at least ${lo} character${lo === 1 ? "" : "s"}` : "a string";
    }
    case "integer":
    case "number": {
      const r = range(s.minimum, s.maximum, s.exclusiveMinimum, s.exclusiveMaximum);
      return `${s.type === "integer" ? "an integer" : "a number"}${r ? ` ${r}` : ""}`;
    }
    case "array": {
      const items = s.items ? wordsOf(s.items) : undefined;
      return items ? `a list of: ${items.join(", ")}` : "a list";
    }
    case "object":
      return "an object";
    case "boolean":
      return "true or false";
    default:
      return "a valid value";
  }
}

/** A union's branch failures, read once (TypeBox hands them over as iterators). */
function branches(f: Failure): Failure[][] {
  const read = f as Failure & { read?: Failure[][] };
  read.read ??= (f.errors ?? []).map((b) => [...b]);
  return read.read;
}

/** The first failure of `type`, in the list or inside any union's branches (a misspelled field in a nested object). */
function deepest(all: Failure[], type: number): Failure | undefined {
  for (const f of all) {
    if (f.type === type) return f;
    for (const b of branches(f)) {
      const inner = deepest(b, type);
      if (inner) return inner;
    }
  }
  return undefined;
}

/** The failure to report: for a union, its non-null branch's own (deepest first), or the union itself. */
function innermost(f: Failure): { failure: Failure; nullable: boolean } {
  if (f.type !== UNION || !f.schema.anyOf) return { failure: f, nullable: false };
  const arms = f.schema.anyOf;
  const others = arms.map((b, i) => ({ b, i })).filter(({ b }) => !isNull(b));
  const nullable = others.length < arms.length;
  if (others.length !== 1 || !f.errors) return { failure: f, nullable };
  const inner = branches(f)[others[0]!.i]?.[0];
  if (!inner) return { failure: f, nullable };
  // a union nested in the branch (its words): the branch itself describes it best
  const deeper = innermost(inner);
  return { failure: deeper.failure, nullable: nullable || deeper.nullable };
}

function message(
  f: Failure,
  nullable: boolean,
  whole: string,
): { message: string; reason: Reason; allowed?: string[] } {
  const field = fieldOf(f.path) || whole;
  const words = wordsOf(f.schema);
  const orNull = nullable ? ", or null" : "";
  const got = ` (got ${shown(f.value)})`;
  if (words) {
    const hint = typeof f.value === "string" ? closest(f.value, words) : undefined;
    const mean = hint ? `; did you mean ${hint}?` : "";
    return {
      message: `${field} must be one of: ${words.join(", ")}${orNull}${got}${mean}`,
      reason: "not_allowed",
      allowed: words,
    };
  }
  const reason = REASON_OF[f.type] ?? (f.type === REQUIRED_PROPERTY ? "missing_field" : "wrong_type");
  if (reason === "missing_field")
    return { message: `${field} is missing: it must be ${allowedText(f.schema)}`, reason };
  if (reason === "duplicate_items") return { message: `${field} must not name an item twice${got}`, reason };
  // a string's own words add what its shape means; a number's range says it all
  const custom = typeof f.schema.error === "string" && f.schema.type === "string" ? `: ${f.schema.error}` : "";
  if (f.value === "" && f.schema.type === "string")
    return { message: `${field} must not be empty: it must be ${allowedText(f.schema)}`, reason };
  return { message: `${field} must be ${allowedText(f.schema)}${orNull}${got}${custom}`, reason };
}

/**
 * A validation error as VALIDATION_ERROR. `query`: the request's query parameters, to name the one a
 * per-parameter check (a numeric query parameter: Elysia checks it alone, without its name) refused.
 */
export function fromValidation(e: ValidationError, query?: URLSearchParams): RelayError {
  const all = e.all as unknown as Failure[];
  const unknown = deepest(all, ADDITIONAL_PROPERTY);
  if (unknown) {
    const field = fieldOf(unknown.path);
    const name = field.split(".").pop()!;
    const known = Object.keys(unknown.schema.properties ?? {});
    const hint = closest(name, known);
    const mean = hint ? `: did you mean ${hint}?` : known.length ? ` (it takes ${known.join(", ")})` : "";
    return new RelayError("VALIDATION_ERROR", `unknown field ${field}: not one this request takes${mean}`, {
      field,
      reason: "unknown_field" satisfies Reason,
      ...(hint ? { suggestion: hint } : {}),
    });
  }
  const first = all[0];
  if (!first) return new RelayError("VALIDATION_ERROR", "the request is invalid", { reason: "invalid" });
  const { failure, nullable } = innermost(first);
  let f = failure;
  if (!f.path && (e as { type?: string }).type === "property" && query) {
    // which query parameter: the one whose text is the refused value
    const name = [...query.entries()].find(([, v]) => v === String(f.value) || Number(v) === f.value)?.[0];
    if (name) f = { ...f, path: `/${name}` };
  }
  const m = message(f, nullable, `the ${(e as { type?: string }).type === "body" ? "request body" : "value"}`);
  const field = fieldOf(f.path);
  return new RelayError("VALIDATION_ERROR", m.message, {
    ...(field ? { field } : {}),
    reason: m.reason,
    ...(m.allowed ? { allowed: m.allowed } : {}),
  });
}
