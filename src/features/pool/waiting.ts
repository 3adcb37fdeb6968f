/**
 * Requests waiting for a channel account, served first come first served within a payer (a project,
 * or an anonymous client IP) and in turns across payers: one payer's burst cannot starve another's
 * single request. Plain data: the leases (leases.ts) try each head in turn when a channel frees.
 */

export interface Waiter {
  /** Who pays (Payer.scope): turns are taken per scope. */
  scope: string;
  /** Tries to take a channel; its key, or null when none fits now. */
  pick(): Promise<string | null>;
  resolve(publicKey: string): void;
  reject(e: Error): void;
  /** Refuses it with what is short (its deadline passed). */
  refuse(): void;
  timer: ReturnType<typeof setTimeout>;
  /** A pick is under way: its deadline waits for its answer (a channel it took must not be lost). */
  picking?: boolean;
  /** Its deadline passed while it was picking. */
  expired?: boolean;
}

export class Waiting {
  /** In arrival order. */
  private readonly queue: Waiter[] = [];
  /** The scope served last: the next round starts after it. */
  private last: string | null = null;

  get size(): number {
    return this.queue.length;
  }

  push(w: Waiter): void {
    this.queue.push(w);
  }

  remove(w: Waiter): boolean {
    const i = this.queue.indexOf(w);
    if (i < 0) return false;
    this.queue.splice(i, 1);
    return true;
  }

  served(w: Waiter): void {
    this.remove(w);
    this.last = w.scope;
  }

  /**
   * One round: the first waiter of each scope, scopes in the order their first waiter arrived,
   * starting after the scope served last.
   */
  round(): Waiter[] {
    const heads: Waiter[] = [];
    const seen = new Set<string>();
    for (const w of this.queue) {
      if (seen.has(w.scope)) continue;
      seen.add(w.scope);
      heads.push(w);
    }
    const after = heads.findIndex((w) => w.scope === this.last);
    return after < 0 ? heads : [...heads.slice(after + 1), ...heads.slice(0, after + 1)];
  }
}
