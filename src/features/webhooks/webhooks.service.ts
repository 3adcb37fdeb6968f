/**
 * A project's webhooks as the admin API manages them: registration (the URL checked, a Standard
 * Webhooks secret made and shown once, sealed at rest), the list, deletion and the deliveries.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { RelayError, validationError } from "../../kernel/errors.ts";
import type { ProjectsRepo } from "../../store/projects.repo.ts";
import type { DeliveryRow, WebhookRow, WebhooksRepo } from "../../store/webhooks.repo.ts";
import {
  WEBHOOK_EVENT_TYPES,
  type CreatedWebhookView,
  type DeliveryView,
  type WebhookEventType,
  type WebhookView,
} from "./webhook.model.ts";
import { checkWebhookUrl, UrlRefused } from "./url-guard.ts";
import type { SecretBox } from "../../kernel/secret-box.ts";

/** The associated data a webhook's sealed secret is bound to (it cannot be moved to another row). */
const sealedFor = (webhookId: string) => `webhook:${webhookId}`;

/** A Standard Webhooks secret: whsec_ and the base64 of 32 random bytes (what the standardwebhooks library takes). */
export const generateWebhookSecret = (): string => `whsec_${randomBytes(32).toString("base64")}`;

/** Seals and opens webhook secrets with the relay's SecretBox (the channel keys' key). */
export class WebhookSecrets {
  constructor(private readonly box: SecretBox) {}
  seal(webhookId: string, secret: string): string {
    return this.box.seal(secret, sealedFor(webhookId));
  }
  open(webhookId: string, sealed: string): string {
    return this.box.open(sealed, sealedFor(webhookId));
  }
}

const notFound = (what: string) => new RelayError("NOT_FOUND", `${what} not found`);

const view = (w: WebhookRow): WebhookView => ({
  id: w.id,
  url: w.url,
  events: w.events as WebhookEventType[],
  description: w.description,
  createdAt: w.createdAt.toISOString(),
});

const deliveryView = (d: DeliveryRow): DeliveryView => ({
  id: d.id.toString(),
  eventId: d.eventId.toString(),
  type: d.type as WebhookEventType,
  state: d.state,
  attempts: d.attempts,
  responseStatus: d.responseStatus,
  lastError: d.lastError,
  attemptLog: d.attemptLog.map((a) => ({ at: a.at, status: a.status, error: a.error, durationMs: a.durationMs })),
  createdAt: d.createdAt.toISOString(),
  lastAttemptAt: d.attempts > 0 ? d.updatedAt.toISOString() : null,
  nextAttemptAt: d.state === "pending" && d.nextAt ? d.nextAt.toISOString() : null,
});

export class WebhooksService {
  constructor(
    private readonly deps: {
      webhooks: WebhooksRepo;
      projects: ProjectsRepo;
      secrets: WebhookSecrets;
      /** WEBHOOK_ALLOW_PRIVATE: URLs on loopback and private networks are allowed. */
      allowPrivate: boolean;
    },
  ) {}

  private async project(id: string): Promise<void> {
    if (!(await this.deps.projects.get(id))) throw notFound("project");
  }

  async create(
    projectId: string,
    body: { url: string; events?: WebhookEventType[]; description?: string },
  ): Promise<CreatedWebhookView> {
    await this.project(projectId);
    try {
      await checkWebhookUrl(body.url, this.deps.allowPrivate);
    } catch (e) {
      if (!(e instanceof UrlRefused)) throw e;
      throw validationError(e.message, { field: "url", reason: e.reason, ...e.details });
    }
    const events = body.events?.length ? [...new Set(body.events)] : [...WEBHOOK_EVENT_TYPES];
    const id = randomUUID();
    const secret = generateWebhookSecret();
    const row = await this.deps.webhooks.create({
      id,
      projectId,
      url: body.url,
      events,
      description: body.description ?? null,
      secret: this.deps.secrets.seal(id, secret),
    });
    return { ...view(row), secret };
  }

  async list(projectId: string): Promise<WebhookView[]> {
    await this.project(projectId);
    return (await this.deps.webhooks.list(projectId)).map(view);
  }

  async remove(projectId: string, webhookId: string): Promise<WebhookView> {
    await this.project(projectId);
    const row = await this.deps.webhooks.remove(projectId, webhookId);
    if (!row) throw notFound("webhook");
    return view(row);
  }

  async deliveries(projectId: string, webhookId: string, limit: number): Promise<DeliveryView[]> {
    await this.project(projectId);
    if (!(await this.deps.webhooks.get(projectId, webhookId))) throw notFound("webhook");
    return (await this.deps.webhooks.deliveries(webhookId, limit)).map(deliveryView);
  }
}
