/**
 * Hostile input, refused before any work with VALIDATION_ERROR (`details.reason`):
 * - /v1 bodies are JSON only (`Content-Type: application/json` or `application/*+json`): other
 *   types would reach the routes through Elysia's form and text parsers, unchecked;
 * - a body nesting deeper than MAX_JSON_DEPTH is refused by a linear scan BEFORE JSON.parse (deep
 *   nesting is cheap to send and costly to parse, validate and answer: 50,000 levels blocked the
 *   event loop for seconds); the relay's own bodies nest 3 levels;
 * - a control character (U+0000 to U+001F, U+007F) in a JSON string or in the URL: nothing the
 *   relay takes holds one, and Postgres refuses NUL in text (an error that named the SQL);
 * - a key naming a member of Object.prototype (`toString`, `valueOf`, `constructor`, `__proto__`…):
 *   no body of the relay has one, and `{"toString": ""}` makes the object unprintable (Elysia's
 *   validation message for it threw: a 500).
 * Registered after authentication, so that refused requests still take a rate-limit token.
 */
import { Elysia } from "elysia";
import { RelayError, validationError } from "../kernel/errors.ts";
import { payloadTooLarge } from "./errors.plugin.ts";
import { pathAndQuery } from "./request-path.ts";

/** Deepest nesting of arrays and objects in a /v1 body. */
export const MAX_JSON_DEPTH = 32;

const JSON_TYPE = /^application\/(?:[a-z0-9.+-]+\+)?json$/i;
/** A control character in a URL, raw or percent-encoded (%00-%1F, %7F). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is this pattern's purpose
const URL_CONTROL = /%(?:[01][0-9a-f]|7f)|[\u0000-\u001f\u007f]/i;
/** JSON escapes that stand for a control character: \b \f \n \r \t (\u is checked by value). */
const CONTROL_ESCAPES = new Set(["b", "f", "n", "r", "t"].map((c) => c.charCodeAt(0)));
const QUOTE = 0x22,
  BACKSLASH = 0x5c,
  U = 0x75;

const RESERVED_KEYS = new Set(Object.getOwnPropertyNames(Object.prototype));

const isControl = (code: number) => (code >= 0 && code <= 0x1f) || code === 0x7f;
const tooDeep = () =>
  validationError(`the request body nests deeper than ${MAX_JSON_DEPTH} levels`, {
    reason: "too_deep",
    limit: MAX_JSON_DEPTH,
  });
const controlCharacter = (where: string) =>
  validationError(`${where} holds a control character (U+0000 to U+001F or U+007F)`, { reason: "control_character" });

/**
 * Throws VALIDATION_ERROR when a JSON text nests deeper than `maxDepth` or holds a control character
 * in a string (raw or escaped). One pass, no recursion; what is not valid JSON is left to JSON.parse.
 */
export function screenJson(text: string, maxDepth = MAX_JSON_DEPTH): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === QUOTE) inString = false;
      else if (isControl(c)) throw controlCharacter("a string of the request body");
      else if (c === BACKSLASH) {
        const e = text.charCodeAt(++i);
        // Number("0x....") is NaN unless the 4 characters are hex digits: then JSON.parse refuses the text
        const escaped = e === U ? Number(`0x${text.slice(i + 1, i + 5)}`) : -1;
        if (CONTROL_ESCAPES.has(e) || isControl(escaped)) throw controlCharacter("a string of the request body");
        if (e === U) i += 4;
      }
    } else if (c === QUOTE) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > maxDepth) throw tooDeep();
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
}

/** Reads the body as text, stopping (413) as soon as it is longer than `max` bytes: a huge body is never buffered. */
async function readAtMost(request: Request, max: number): Promise<string> {
  // a declared length was checked on arrival (bodyLimitPlugin) and bounds the body: read it at once
  // (Bun's own read; a stream reader costs 10 to 20 us more per request)
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) <= max) return await request.text();
  if (!request.body) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      void reader.cancel().catch(() => {});
      throw payloadTooLarge(max);
    }
    chunks.push(value);
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}

/** The body of a /v1 request: JSON within the size and depth limits, without control characters. */
async function parseBody(request: Request, contentType: string, maxBodyBytes: number): Promise<unknown> {
  // the declared length was checked on arrival; this catches a chunked body (no Content-Length), of any size
  const text = await readAtMost(request, maxBodyBytes);
  if (text.length === 0) return undefined; // no body (a DELETE, `Content-Length: 0`): the route's schema decides
  if (!JSON_TYPE.test(contentType)) {
    const message = "the request body must be JSON, sent with Content-Type: application/json";
    throw validationError(message, { reason: "unsupported_content_type" });
  }
  screenJson(text);
  try {
    return JSON.parse(text, refuseReservedKeys);
  } catch (e) {
    if (e instanceof RelayError) throw e;
    throw validationError("the request body is not valid JSON", { reason: "invalid_json" });
  }
}

/** JSON.parse's reviver: a key naming a member of Object.prototype is refused. */
function refuseReservedKeys(key: string, value: unknown): unknown {
  if (RESERVED_KEYS.has(key))
    throw validationError(`the request body has a key named ${key}`, { reason: "reserved_key", key });
  return value;
}

/** The relay's own API: /v1, and the other protocols it speaks (/compat: compat.routes.ts; /x402: features/x402). */
const isRelayPath = (path: string): boolean =>
  path.startsWith("/v1/") || path.startsWith("/compat/") || path.startsWith("/x402/");

/** A request that declares no body: a length of 0, or neither a length nor a chunked body. */
const emptyBody = (request: Request): boolean => {
  const length = request.headers.get("content-length");
  return length === "0" || (length === null && !request.headers.has("transfer-encoding"));
};

export function inputPlugin(opts: { maxBodyBytes: number }) {
  return (
    new Elysia({ name: "input" })
      .onRequest(({ request }) => {
        if (URL_CONTROL.test(pathAndQuery(request.url))) throw controlCharacter("the request URL");
      })
      // the embedded networks (/localnet/...) parse their own bodies: undefined leaves them to their parsers;
      // an empty body (the SDK's friendbot POST) is no body to parse, whatever its content type says
      .onParse({ as: "global" }, ({ request }, contentType) =>
        isRelayPath(pathAndQuery(request.url))
          ? parseBody(request, contentType, opts.maxBodyBytes)
          : emptyBody(request)
            ? ""
            : undefined,
      )
  );
}
