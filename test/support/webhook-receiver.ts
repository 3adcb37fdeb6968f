/**
 * A webhook receiver for tests: Bun.serve on a random port that verifies every delivery with the
 * standardwebhooks library (Webhook.verify, the secret given once the webhook is registered) and
 * keeps it; `answer` decides each response (default 200), and may never resolve (a dead endpoint).
 */
import { Webhook } from "standardwebhooks";

export interface Received {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  /** The payload as Webhook.verify answered it; null when the verification threw (see `error`). */
  verified: { type: string; timestamp: string; data: Record<string, unknown> } | null;
  error: string | null;
  contentType: string | null;
  at: number;
}

export interface Receiver {
  url: string;
  secret: string | null;
  received: Received[];
  /** The n-th request (0-based) is answered with what this gives (default 200). */
  answer: (n: number, r: Received) => Response | Promise<Response>;
  stop(): void;
}

export function startReceiver(path = "/hook"): Receiver {
  const r: Receiver = {
    url: "",
    secret: null,
    received: [],
    answer: () => new Response("ok"),
    stop: () => server.stop(true),
  };
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    async fetch(req) {
      const body = await req.text();
      const headers = {
        "webhook-id": req.headers.get("webhook-id") ?? "",
        "webhook-timestamp": req.headers.get("webhook-timestamp") ?? "",
        "webhook-signature": req.headers.get("webhook-signature") ?? "",
      };
      let verified: Received["verified"] = null;
      let error: string | null = null;
      try {
        if (!r.secret) throw new Error("no secret yet");
        verified = new Webhook(r.secret).verify(body, headers) as Received["verified"];
      } catch (e) {
        error = e instanceof Error ? e.message : String(e);
      }
      const got: Received = {
        id: headers["webhook-id"],
        timestamp: headers["webhook-timestamp"],
        signature: headers["webhook-signature"],
        body,
        verified,
        error,
        contentType: req.headers.get("content-type"),
        at: Date.now(),
      };
      r.received.push(got);
      return r.answer(r.received.length - 1, got);
    },
  });
  r.url = `http://127.0.0.1:${server.port}${path}`;
  return r;
}
