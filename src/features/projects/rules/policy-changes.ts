/**
 * A project's policy change as the admin API makes it: the patch merged into the stored overrides, a
 * time window that cannot be refused, and an approval URL checked (as webhook URLs are) with its
 * whsec_ secret made (shown once, sealed at rest; the same URL again keeps the secret the app has).
 */
import { validationError } from "../../../kernel/errors.ts";
import type { ProjectView } from "../admin.model.ts";
import type { Approvals } from "./approval.ts";
import { effectivePolicy, mergeOverrides, type Policy, type PolicyOverrides, type PolicyPatch } from "./policy.ts";
import { windowProblem } from "./sponsorship-rules.ts";
import { checkWebhookUrl, UrlRefused } from "../../webhooks/url-guard.ts";
import { generateWebhookSecret } from "../../webhooks/webhooks.service.ts";

export class PolicyChanges {
  constructor(
    private readonly defaults: Policy,
    private readonly approvals: Approvals | undefined,
    private readonly allowPrivate: boolean,
  ) {}

  /** The overrides after `patch`, and the approval secret it made (null: none). */
  async apply(
    projectId: string,
    current: PolicyOverrides,
    patch: PolicyPatch,
  ): Promise<{ policy: PolicyOverrides; secret: string | null }> {
    const approval = await this.approval(projectId, current, patch);
    const policy = mergeOverrides(current, approval.patch);
    this.checkWindow(policy);
    return { policy, secret: approval.secret };
  }

  /**
   * An approval URL in a patch: checked as webhook URLs are, and its whsec_ secret made (shown once,
   * sealed at rest); the same URL again keeps the secret the app's server has.
   */
  private async approval(
    projectId: string,
    current: PolicyOverrides,
    patch: PolicyPatch,
  ): Promise<{ patch: PolicyPatch; secret: string | null }> {
    if (!patch.approval) return { patch, secret: null };
    const approvals = this.approvals;
    if (!approvals)
      throw validationError("policy.approval: not available here", {
        field: "policy.approval",
        reason: "not_available",
      });
    try {
      await checkWebhookUrl(patch.approval.url, this.allowPrivate);
    } catch (e) {
      if (!(e instanceof UrlRefused)) throw e;
      throw validationError(`policy.approval.${e.message}`, {
        field: "policy.approval.url",
        reason: e.reason,
        ...e.details,
      });
    }
    const before = current.approval;
    const secret = before && before.url === patch.approval.url ? null : generateWebhookSecret();
    const sealedSecret = secret ? approvals.seal(projectId, secret) : before!.sealedSecret;
    return { patch: { ...patch, approval: { ...patch.approval, sealedSecret } as PolicyPatch["approval"] }, secret };
  }

  /** A time window that cannot be: 400 naming the field. */
  private checkWindow(o: PolicyOverrides): void {
    const { activeFrom, activeUntil } = effectivePolicy(this.defaults, o);
    const problem = windowProblem(activeFrom, activeUntil);
    if (problem) {
      const field = problem.startsWith("activeUntil") ? "policy.activeUntil" : "policy.activeFrom";
      throw validationError(`${field}: ${problem}`, { field, reason: "bad_time_window" });
    }
  }
}

/** The answer to the change that set an approval URL carries its secret, once. */
export function withSecret(view: ProjectView, secret: string | null): ProjectView {
  if (!secret || !view.policy.approval) return view;
  return { ...view, policy: { ...view.policy, approval: { ...view.policy.approval, secret } } };
}
