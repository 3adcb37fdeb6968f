/**
 * What a route's OpenAPI `detail` names (src/server/openapi.ts builds the document and defines the
 * components these point at): security schemes, shared parameters, the event stream's media type.
 */
/** `detail.security` of the relay's /v1 routes: a project's X-API-Key, or none (the anonymous testnet relay). */
export const apiKeySecurity: Record<string, string[]>[] = [{ ApiKey: [] }, {}];
/** `detail.security` of the admin API: the bearer token, or the operator console's session cookie. */
export const adminSecurity: Record<string, string[]>[] = [{ AdminToken: [] }, { ConsoleSession: [] }];
/** `detail.security` of signing in to the console: the bearer token only. */
export const adminTokenSecurity: Record<string, string[]>[] = [{ AdminToken: [] }];
/** A `detail.parameters` entry: the route takes X-Idempotency-Key. */
export const idempotencyKeyParameter = { $ref: "#/components/parameters/IdempotencyKey" };
/** A `detail.parameters` entry: the route takes Last-Event-ID (the event stream). */
export const lastEventIdParameter = { $ref: "#/components/parameters/LastEventId" };
/**
 * The media type of the event stream. A string response whose schema names its `contentMediaType` is documented as
 * that type (the generator calls every string text/plain).
 */
export const EVENT_STREAM = "text/event-stream";
