/**
 * GET /v1/events: a project's events as Server-Sent Events (text/event-stream). It needs an API key
 * (the project's; its events on the key's network only: credits.low, a mainnet event, on live keys'
 * streams only); each event is `event: <type>`, `id: <id>` (increasing) and `data: <JSON>` on one
 * line; `Last-Event-ID` resumes after that event; a comment line (`: heartbeat`) comes every
 * `heartbeatMs`. The stream ends when the client goes, when it reads too slowly (it resumes with its
 * last id), when its key is revoked or expires (a rotation's end too) or its project suspended (on every instance: ProjectsService's
 * cutOff) or when the relay stops (which closes every stream, so that shutdown never waits on one).
 */
import { Elysia, t } from "elysia";
import { V1_ERRORS, errorResponses } from "../../../http/schemas.ts";
import { EVENT_STREAM, lastEventIdParameter } from "../../../http/openapi-refs.ts";
import { callerContext } from "../../projects/caller.ts";
import { requestContext } from "../../../http/errors.plugin.ts";
import { RelayError, validationError } from "../../../kernel/errors.ts";
import type { EndReason, EventFeed, FeedEvent, Subscription } from "./event-feed.ts";
import { defaultNetwork } from "../../projects/principal.ts";

const encoder = new TextEncoder();

/** One event as SSE: its type, its id, its data as one line of JSON. */
export const sseEvent = (e: FeedEvent): string => `event: ${e.type}\nid: ${e.id}\ndata: ${JSON.stringify(e.data)}\n\n`;

const HEARTBEAT = encoder.encode(": heartbeat\n\n");
/** The first bytes: the client has the answer's headers at once, not with the first event. */
const OPENING = encoder.encode(": connected\n\n");

/** The last comment of a stream whose access ended. */
const ACCESS_ENDED: Partial<Record<EndReason, string>> = {
  revoked: "ended: the API key was revoked",
  expired: "ended: the API key expired",
  suspended: "ended: the project is suspended",
  deleted: "ended: the project no longer exists",
};

/** Last-Event-ID: an event id (digits), or none. */
function lastEventId(header: string | null): bigint | null {
  if (header === null || header.trim() === "") return null;
  const value = header.trim();
  if (!/^[0-9]{1,19}$/.test(value))
    throw validationError("Last-Event-ID must be the id of an event (digits)", {
      field: "Last-Event-ID",
      reason: "not_an_event_id",
    });
  return BigInt(value);
}

/** The SSE body of a subscription: its events as they come, heartbeats meanwhile; cancelled, it unsubscribes. */
export function sseStream(sub: Subscription, heartbeatMs: number, signal: AbortSignal): ReadableStream<Uint8Array> {
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  let open = true;
  /** Ends the stream once: the subscription and the heartbeat stop, then `last` (close or error) runs. */
  const finish = (last?: () => void) => {
    if (!open) return;
    open = false;
    clearInterval(heartbeat);
    sub.close();
    try {
      last?.();
    } catch {
      /* the stream was closed meanwhile */
    }
  };
  signal.addEventListener("abort", () => finish(), { once: true });
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        controller.enqueue(OPENING);
        // a client too slow to read is disconnected, reading or not (it resumes with its last id); a
        // revoked key's stream, or a suspended project's, ends at once with a last comment saying why
        void sub.whenEnded.then((reason) => {
          if (reason === "overflow") finish(() => controller.error(new Error("the client reads too slowly")));
          const why = ACCESS_ENDED[reason];
          if (why)
            finish(() => {
              controller.enqueue(encoder.encode(`: ${why}\n\n`));
              controller.close();
            });
        });
        heartbeat = setInterval(() => {
          try {
            controller.enqueue(HEARTBEAT);
          } catch {
            finish(); // closed meanwhile
          }
        }, heartbeatMs);
      },
      // called when the client has read what was queued (Bun stops pulling while the socket is full: the
      // subscription's own buffer then fills, and a client that never catches up is ended)
      async pull(controller) {
        let events: FeedEvent[] | null;
        try {
          events = await sub.next();
        } catch (e) {
          finish(() => controller.error(e)); // the client resumes with its last id
          return;
        }
        if (events === null) finish(() => controller.close());
        else if (open) controller.enqueue(encoder.encode(events.map(sseEvent).join("")));
      },
      cancel() {
        finish();
      },
    },
    { highWaterMark: 0 },
  );
}

export function eventsRoutes(deps: { events: EventFeed; heartbeatMs: number }) {
  return new Elysia({ name: "events.routes" })
    .use(requestContext)
    .use(callerContext)
    .get(
      "/v1/events",
      ({ request, principal, annotate }) => {
        if (principal.projectId === null)
          throw new RelayError("UNAUTHORIZED", "the event stream needs a project's API key: send X-API-Key");
        const after = lastEventId(request.headers.get("last-event-id"));
        annotate({ projectId: principal.projectId, ...(after !== null ? { lastEventId: String(after) } : {}) });
        const sub = deps.events.subscribe(
          {
            projectId: principal.projectId,
            network: defaultNetwork(principal),
            keyId: principal.keyId,
            expiresAt: principal.expiresAt,
          },
          after,
        );
        // its key was revoked between the authentication and now
        if (sub.endedBy === "revoked") throw new RelayError("UNAUTHORIZED", "unknown or revoked API key");
        return new Response(sseStream(sub, deps.heartbeatMs, request.signal), {
          headers: { "content-type": EVENT_STREAM, "cache-control": "no-store", "x-accel-buffering": "no" },
        });
      },
      {
        response: {
          200: t.String({
            contentMediaType: EVENT_STREAM,
            description:
              "Server-Sent Events: per event `event: <type>` (transaction.status, credits.low), `id: <id>` (increasing) " +
              "and `data: <the event's JSON>` on one line; a `: heartbeat` comment line at least every 15 s. " +
              "The stream ends (after a last `: ended: …` comment) when its key is revoked or expires, or its project " +
              "is suspended",
          }),
          ...V1_ERRORS,
          ...errorResponses(503),
        },
        detail: {
          summary:
            "Stream the project's events on the key's network (Server-Sent Events); Last-Event-ID resumes after an event (kept at least 24 h)",
          description:
            "An sr_test_ key's stream carries the project's testnet events, an sr_live_ key's its mainnet events " +
            "(credits.low, about mainnet credits, included); the Last-Event-ID backlog too. At most " +
            "EVENTS_STREAMS_PER_PROJECT (10) streams per project per instance: one more is 429 RATE_LIMIT_EXCEEDED " +
            "(details.limit, Retry-After).",
          tags: ["relay"],
          security: [{ ApiKey: [] }],
          parameters: [lastEventIdParameter],
        },
      },
    );
}
