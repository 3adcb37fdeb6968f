/**
 * The webhook worker of one relay instance: every `pollMs` it fans new events out into deliveries
 * (src/store/webhooks.repo.ts) and sends the due ones, signed with the standardwebhooks library.
 * All its state is in the database, so a kill -9 loses nothing: a delivery leased by a dead
 * instance is due again when its lease ends. Each webhook has at most CONCURRENCY requests in
 * flight, and nothing waits on another webhook's requests (nor does any request of the relay's
 * API wait on this worker). A worker error is logged; the next pass tries again.
 *
 * Each attempt resolves the webhook's host once, checks the addresses and sends the request to one of
 * them (url-guard.ts): fetch never resolves the name itself, so DNS cannot answer it differently.
 */
import { Webhook } from "standardwebhooks";
import type { Logger } from "../../kernel/log.ts";
import type { ClaimedDelivery, WebhooksRepo } from "../../store/webhooks.repo.ts";
import type { WebhookSecrets } from "./webhooks.service.ts";
import { type Lookup, type PinnedRequest, pinnedRequest, resolveWebhookTarget, UrlRefused } from "./url-guard.ts";

/** Addresses of a host tried in turn when the connection is refused or unroutable. */
const MAX_ADDRESSES = 4;
/** fetch's error codes for a connection that never opened (nothing of the request was received). */
const CONNECT_FAILURES = new Set([
  "ECONNREFUSED",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
  "FailedToOpenSocket",
]);
/** Requests in flight per webhook. */
const CONCURRENCY = 4;
/** Events read per webhook and pass. */
const FAN_OUT_BATCH = 1000;
/** Events written longer ago than this are taken as all visible: the cursor moves past them. */
const SETTLE_MS = 5000;
/** The retry delays in units of the base (5 s: 5 s, 30 s, 2 min, 10 min, 30 min, 1 h), then every 3 h. */
const BACKOFF = [1, 6, 24, 120, 360, 720];
const BACKOFF_AFTER = 2160;
/** Retries end this many bases after the delivery was created (5 s: 24 h). */
const GIVE_UP_BASES = 17_280;
const MAX_ERROR_CHARS = 500;
/** A lease is the request's timeout and this: the URL's DNS look-up (at most 5 s) and recording the attempt. */
const LEASE_MARGIN_MS = 10_000;

export interface DeliveryConfig {
  pollMs: number;
  /** The first retry's delay; the others are multiples (BACKOFF). */
  retryBaseMs: number;
  /** A request without an answer within this long fails (and is retried). */
  timeoutMs: number;
  allowPrivate: boolean;
}

/** The delay before the retry that follows `attempts` failed attempts. */
export const retryDelayMs = (attempts: number, baseMs: number): number =>
  (BACKOFF[attempts - 1] ?? BACKOFF_AFTER) * baseMs;

/** The body of a delivery: the event's type, when it happened and its data. */
export const deliveryBody = (d: Pick<ClaimedDelivery, "type" | "eventAtMs" | "data">): string =>
  `{"type":${JSON.stringify(d.type)},"timestamp":${JSON.stringify(new Date(d.eventAtMs).toISOString())},"data":${d.data}}`;

export class WebhookWorker {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;
  private readonly stopping = new AbortController();
  /** Requests in flight per webhook id. */
  private readonly inFlight = new Map<string, number>();
  private readonly sends = new Set<Promise<void>>();

  constructor(
    private readonly deps: {
      repo: WebhooksRepo;
      secrets: WebhookSecrets;
      log: Logger;
      config: DeliveryConfig;
      /** The lease of a claimed delivery: longer than a request may take. */
      leaseMs?: number;
      /** How webhook hosts are resolved (default node:dns); tests script it. */
      lookup?: Lookup;
      /** Certificates trusted for https webhooks, instead of the system's (tests: a self-signed receiver). */
      ca?: string[];
    },
  ) {}

  start(): void {
    if (this.deps.config.allowPrivate)
      this.deps.log.warn(
        { webhookAllowPrivate: true },
        "WEBHOOK_ALLOW_PRIVATE=true: webhooks may call loopback, private and link-local addresses " +
          "(the relay's own network, cloud metadata): for tests and local receivers only, never in production",
      );
    this.schedule(0);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.pass()
        .catch((e) => this.deps.log.error({ err: e instanceof Error ? e.message : String(e) }, "webhook worker failed"))
        .finally(() => {
          this.running = null;
          this.schedule(this.deps.config.pollMs);
        });
    }, ms);
  }

  /** One pass: fan out, then claim and send what is due (the sends go on after the pass). */
  async pass(): Promise<void> {
    const { repo } = this.deps;
    await repo.fanOut(FAN_OUT_BATCH, SETTLE_MS);
    const busy = [...this.inFlight].filter(([, n]) => n >= CONCURRENCY).map(([id]) => id);
    for (const webhookId of await repo.dueWebhooks(busy)) {
      if (this.stopped) return;
      const room = CONCURRENCY - (this.inFlight.get(webhookId) ?? 0);
      if (room <= 0) continue;
      const claimed = await repo.claim(webhookId, room, this.leaseMs());
      for (const d of claimed) this.track(d);
    }
  }

  /** Longer than sending may take (a DNS look-up, the request, recording it); after a kill -9, the wait. */
  private leaseMs(): number {
    return this.deps.leaseMs ?? this.deps.config.timeoutMs + LEASE_MARGIN_MS;
  }

  private track(d: ClaimedDelivery): void {
    this.inFlight.set(d.webhookId, (this.inFlight.get(d.webhookId) ?? 0) + 1);
    const p: Promise<void> = this.deliver(d)
      .catch((e) =>
        this.deps.log.error(
          { webhookId: d.webhookId, eventId: d.eventId.toString(), err: e instanceof Error ? e.message : String(e) },
          "recording a webhook delivery failed",
        ),
      )
      .finally(() => {
        const n = (this.inFlight.get(d.webhookId) ?? 1) - 1;
        if (n > 0) this.inFlight.set(d.webhookId, n);
        else this.inFlight.delete(d.webhookId);
        this.sends.delete(p);
      });
    this.sends.add(p);
  }

  /** Sends one delivery and records the attempt. */
  private async deliver(d: ClaimedDelivery): Promise<void> {
    const { repo, config } = this.deps;
    const startedAt = new Date();
    const started = performance.now();
    const outcome = await this.send(d);
    const durationMs = performance.now() - started;
    if (this.stopped && outcome.aborted) return await repo.release(d.id); // due again, for the next start
    const attempts = d.attempts + 1;
    const delivered = outcome.status !== null && outcome.status >= 200 && outcome.status < 300;
    const giveUp = !delivered && (d.data === null || Date.now() - d.createdAtMs >= GIVE_UP_BASES * config.retryBaseMs);
    const nextAt = delivered || giveUp ? null : new Date(Date.now() + retryDelayMs(attempts, config.retryBaseMs));
    await repo.attempted(d.id, {
      delivered,
      responseStatus: outcome.status,
      error: delivered ? null : (outcome.error ?? `HTTP ${outcome.status}`).slice(0, MAX_ERROR_CHARS),
      nextAt,
      startedAt,
      durationMs,
    });
    const fields = { webhookId: d.webhookId, eventId: d.eventId.toString(), attempts, status: outcome.status };
    if (delivered) this.deps.log.debug(fields, "webhook delivered");
    else
      this.deps.log.warn(
        { ...fields, err: outcome.error, retryAt: nextAt?.toISOString() ?? null },
        giveUp ? "webhook delivery failed: given up" : "webhook delivery failed: will retry",
      );
  }

  private async send(d: ClaimedDelivery): Promise<{ status: number | null; error?: string; aborted?: boolean }> {
    const { config } = this.deps;
    if (d.data === null) return { status: null, error: "the event is no longer kept" };
    let targets: PinnedRequest[];
    try {
      // checked again (the host may point elsewhere now), and the request goes to an address checked
      const found = await resolveWebhookTarget(d.url, config.allowPrivate, this.deps.lookup);
      const addresses = (found.addresses ?? [found.address]).slice(0, MAX_ADDRESSES);
      targets = addresses.map((address) => pinnedRequest({ ...found, address }));
    } catch (e) {
      return { status: null, error: e instanceof UrlRefused ? `${e.reason}: ${e.message}` : String(e) };
    }
    const msgId = `evt_${d.eventId}`;
    const now = new Date();
    const body = deliveryBody(d);
    let signature: string;
    try {
      signature = new Webhook(this.deps.secrets.open(d.webhookId, d.secret)).sign(msgId, now, body);
    } catch (e) {
      return { status: null, error: `cannot sign: ${e instanceof Error ? e.message : String(e)}` };
    }
    let result: { status: number | null; error?: string; aborted?: boolean; connect?: boolean } = { status: null };
    for (const target of targets) {
      result = await this.post(target, msgId, now, body, signature);
      // a connection refused or unroutable (nothing was received): the host's next address
      if (result.status !== null || result.aborted || !result.connect) break;
    }
    return { status: result.status, error: result.error, aborted: result.aborted };
  }

  /** One POST of a delivery to one checked address. `connect`: it failed before any byte was sent. */
  private async post(
    target: PinnedRequest,
    msgId: string,
    now: Date,
    body: string,
    signature: string,
  ): Promise<{ status: number | null; error?: string; aborted?: boolean; connect?: boolean }> {
    const { config } = this.deps;
    try {
      const res = await fetch(target.url, {
        method: "POST",
        headers: {
          ...target.headers,
          "content-type": "application/json",
          "user-agent": "stellar-sponsor-relay-webhooks",
          "webhook-id": msgId,
          "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
          "webhook-signature": signature,
        },
        body,
        redirect: "manual", // a redirect is not followed (it could point anywhere): not a 2xx, retried
        // https: the TCP connection goes to the address, but SNI and the certificate check use the host name
        ...(target.tls ? { tls: { ...target.tls, ...(this.deps.ca ? { ca: this.deps.ca } : {}) } } : {}),
        signal: AbortSignal.any([AbortSignal.timeout(config.timeoutMs), this.stopping.signal]),
      });
      await res.body?.cancel().catch(() => {});
      return { status: res.status };
    } catch (e) {
      const aborted = this.stopping.signal.aborted;
      const timedOut = e instanceof Error && e.name === "TimeoutError";
      const connect = CONNECT_FAILURES.has(String((e as { code?: unknown })?.code));
      return {
        status: null,
        aborted,
        connect,
        error: timedOut ? `no answer within ${config.timeoutMs} ms` : e instanceof Error ? e.message : String(e),
      };
    }
  }

  /** Stops the passes and aborts the requests in flight (their deliveries are due again at once). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.stopping.abort();
    await this.running?.catch(() => {});
    await Promise.all([...this.sends]);
  }
}
