/**
 * Look-ups that wait for a transaction to settle (GET /v1/transactions/{hash}?wait): how many may
 * wait at once per project, or per client IP for anonymous callers (on this instance), and the
 * wake-up a waiter sleeps on (the event feed's transaction.status events of its hash).
 */
import { RelayError } from "../../kernel/errors.ts";

/** Retry-After of a look-up refused at the cap: waits end within MAX_WAIT_SECONDS, most much sooner. */
const CAP_RETRY_AFTER_S = 1;

/** Counts the look-ups waiting per scope (`project:<id>`, `ip:<address>`), each scope kind with its cap. */
export class WaiterSlots {
  private readonly waiting = new Map<string, number>();

  constructor(private readonly caps: { perProject: number; perIp: number }) {}

  /** Takes a slot for `scope` (429 RATE_LIMIT_EXCEEDED at the cap); answers its release (idempotent). */
  take(scope: { projectId: string | null; ip?: string }): () => void {
    const project = scope.projectId !== null;
    const key = project ? `project:${scope.projectId}` : `ip:${scope.ip ?? ""}`;
    const max = project ? this.caps.perProject : this.caps.perIp;
    const n = this.waiting.get(key) ?? 0;
    if (n >= max)
      throw new RelayError(
        "RATE_LIMIT_EXCEEDED",
        `${max} look-ups with ?wait are already waiting for this ${project ? "project" : "client IP"} on this instance: retry, or look up without wait`,
        { limit: project ? "WAITERS_PER_PROJECT" : "WAITERS_PER_IP", max },
        { retryAfter: CAP_RETRY_AFTER_S },
      );
    this.waiting.set(key, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.waiting.get(key) ?? 1) - 1;
      if (left > 0) this.waiting.set(key, left);
      else this.waiting.delete(key);
    };
  }
}

/** A wake-up that remembers one that came while nobody slept on it. */
export class Waker {
  private woken = false;
  private resolve: (() => void) | null = null;

  /** Wakes the sleeper (or the next sleep, at once). */
  wake = (): void => {
    this.woken = true;
    this.resolve?.();
  };

  /**
   * Sleeps until woken (a wake since the last sleep counts), `ms` pass, or `stop()` says so (checked
   * every `checkMs`, without I/O). Answers whether it was woken.
   */
  async sleep(ms: number, stop: () => boolean, checkMs = 200): Promise<boolean> {
    const until = Date.now() + ms;
    while (!this.woken && !stop() && Date.now() < until) {
      const woke = new Promise<void>((r) => (this.resolve = r));
      await Promise.race([woke, Bun.sleep(Math.max(1, Math.min(checkMs, until - Date.now())))]);
      this.resolve = null;
    }
    const woken = this.woken;
    this.woken = false;
    return woken;
  }
}
