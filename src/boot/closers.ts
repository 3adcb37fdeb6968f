/**
 * One stack of what a relay's start opened: closed newest first, each once, whether the start
 * failed half-way or the relay stops. A step that fails to close is logged; the others still close.
 */
import type { Logger } from "../kernel/log.ts";

export class Closers {
  private readonly stack: { what: string; close: () => unknown }[] = [];

  constructor(private readonly log: Logger) {}

  /** `close` runs at stop, before everything pushed earlier. */
  push(what: string, close: () => unknown): void {
    this.stack.push({ what, close });
  }

  async close(): Promise<void> {
    for (let c = this.stack.pop(); c; c = this.stack.pop()) {
      try {
        await c.close();
      } catch (e) {
        this.log.warn({ step: c.what, err: e instanceof Error ? e.message : String(e) }, "closing failed");
      }
    }
  }
}
