/**
 * "Ask my server first" (a policy's `approval`): before sponsoring a new submission, the relay POSTs
 * a `sponsorship.requested` request to the project's approval URL, signed with the Standard Webhooks
 * headers (the standardwebhooks library, the project's whsec_ secret), and sponsors only on
 * `2xx {approved: true}`. `{approved: false, reason}` is 403 SPONSORSHIP_DENIED with that reason; a
 * timeout, an error or another answer follows `onFailure` (deny: reason `approval_unavailable`).
 *
 * The URL is checked as webhook URLs are (public addresses only unless WEBHOOK_ALLOW_PRIVATE), and
 * the request connects to an address it checked (url-guard.ts). It is made once the cheap checks
 * passed (key, rate limit, policy, credits): a caller refused by those costs the app's server nothing.
 */
import { Webhook } from "standardwebhooks";
import type { OpSummary } from "../../../../actors/projects/policy.ts";
import { RelayError } from "../../../kernel/errors.ts";
import type { Logger } from "../../../kernel/log.ts";
import type { SecretBox } from "../../../kernel/secret-box.ts";
import { pinnedRequest, resolveWebhookTarget, systemLookup, type Lookup } from "../../webhooks/url-guard.ts";

export interface ApprovalPolicy {
  url: string;
  timeoutMs: number;
  onFailure: "deny" | "approve";
  /** The whsec_ secret, sealed (secret-box.ts) for the project. */
  sealedSecret: string;
}

export const DEFAULT_APPROVAL_TIMEOUT_MS = 2000;
export const MAX_APPROVAL_TIMEOUT_MS = 5000;

/** What the app's server is asked about. */
export interface ApprovalRequest {
  project: string;
  network: string;
  innerHash: string;
  source: string | null;
  operations: OpSummary[];
  estimatedFee: string;
}

/** What an approval call measured, for the metrics. */
export interface ApprovalMetrics {
  approval(outcome: "approved" | "denied" | "unavailable", seconds: number): void;
}

/** The associated data a project's sealed approval secret is bound to. */
export const approvalSealedFor = (projectId: string) => `approval:${projectId}`;

export class Approvals {
  constructor(
    private readonly deps: {
      box: SecretBox;
      allowPrivate: boolean;
      log: Logger;
      metrics?: ApprovalMetrics;
      resolve?: Lookup;
    },
  ) {}

  /** Seals a project's approval secret for the policy (stored), bound to the project. */
  seal(projectId: string, secret: string): string {
    return this.deps.box.seal(secret, approvalSealedFor(projectId));
  }

  /** Asks the app's server; resolves when sponsoring may go on, throws 403 SPONSORSHIP_DENIED when not. */
  async ask(policy: ApprovalPolicy, req: ApprovalRequest): Promise<void> {
    const started = performance.now();
    // a connection's or a timeout's error text is for the log, not for the caller
    const verdict = await this.call(policy, req).catch((e: unknown) => ({
      approved: null as null,
      why: e instanceof Error ? e.message : String(e),
      unreached: true,
    }));
    const seconds = (performance.now() - started) / 1000;
    if (verdict.approved === true) {
      this.deps.metrics?.approval("approved", seconds);
      return;
    }
    if (verdict.approved === false) {
      this.deps.metrics?.approval("denied", seconds);
      throw denied(verdict.reason, "the project's approval server denied this sponsorship");
    }
    this.deps.metrics?.approval("unavailable", seconds);
    this.deps.log.warn({ project: req.project, why: verdict.why }, "the approval server did not answer usably");
    if (policy.onFailure === "approve") return;
    throw denied(
      "approval_unavailable",
      "unreached" in verdict
        ? `the project's approval server did not answer (within ${policy.timeoutMs} ms)`
        : `the project's approval server did not answer usably (${verdict.why})`,
    );
  }

  private async call(
    policy: ApprovalPolicy,
    req: ApprovalRequest,
  ): Promise<{ approved: true } | { approved: false; reason: string } | { approved: null; why: string }> {
    const target = await resolveWebhookTarget(policy.url, this.deps.allowPrivate, this.deps.resolve ?? systemLookup);
    const pinned = pinnedRequest(target);
    const now = new Date();
    const body = JSON.stringify({ type: "sponsorship.requested", timestamp: now.toISOString(), data: req });
    const id = `msg_${crypto.randomUUID()}`;
    const secret = this.deps.box.open(policy.sealedSecret, approvalSealedFor(req.project));
    const signature = new Webhook(secret).sign(id, now, body);
    const res = await fetch(pinned.url, {
      method: "POST",
      headers: {
        ...pinned.headers,
        "content-type": "application/json",
        "webhook-id": id,
        "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
        "webhook-signature": signature,
      },
      body,
      redirect: "manual",
      signal: AbortSignal.timeout(policy.timeoutMs),
      ...(pinned.tls ? { tls: pinned.tls } : {}),
    } as RequestInit);
    if (res.status < 200 || res.status > 299) return { approved: null, why: `HTTP ${res.status}` };
    const answer = (await res.json().catch(() => null)) as { approved?: unknown; reason?: unknown } | null;
    if (answer?.approved === true) return { approved: true };
    if (answer?.approved === false)
      return { approved: false, reason: typeof answer.reason === "string" ? answer.reason.slice(0, 500) : "denied" };
    return { approved: null, why: "the answer is not {approved: true | false}" };
  }
}

const denied = (reason: string, message: string) => new RelayError("SPONSORSHIP_DENIED", message, { reason });
