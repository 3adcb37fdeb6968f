/** In-process stores with the durable stores' behaviour (tests, and the checkpoint store's default). */
import type { IdempotencyRecord, IdempotencyStore, Outcome, SubmissionIntent, SubmissionRecord, SubmissionStore } from "./types.ts";

export class MemorySubmissionStore implements SubmissionStore {
  private readonly byId = new Map<string, SubmissionRecord>();
  private readonly byInner = new Map<string, string>();
  async recordIntent(s: SubmissionIntent): Promise<void> {
    const prev = this.byId.get(s.id);
    this.byId.set(s.id, { ...s, outcome: prev?.outcome ?? null, feeCharged: prev?.feeCharged ?? null });
    this.byInner.set(`${s.network}:${s.innerHash}`, s.id);
  }
  async recordOutcome(id: string, outcome: Outcome, feeCharged: bigint | null): Promise<void> {
    const r = this.byId.get(id);
    if (r) this.byId.set(id, { ...r, outcome, feeCharged });
  }
  async byInnerHash(network: string, innerHash: string): Promise<SubmissionRecord | null> {
    const id = this.byInner.get(`${network}:${innerHash}`);
    return id ? this.byId.get(id) ?? null : null;
  }
}

export class MemoryIdempotencyStore implements IdempotencyStore {
  private readonly records = new Map<string, IdempotencyRecord & { expiresAt: number }>();
  async claim(scope: string, key: string, bodyHash: string, ttlMs: number): Promise<IdempotencyRecord | null> {
    const id = `${scope}\u0000${key}`;
    const r = this.records.get(id);
    if (r && r.expiresAt > Date.now()) return { bodyHash: r.bodyHash, outcome: r.outcome };
    this.records.set(id, { bodyHash, outcome: null, expiresAt: Date.now() + ttlMs });
    return null;
  }
  async complete(scope: string, key: string, outcome: Outcome): Promise<void> {
    const r = this.records.get(`${scope}\u0000${key}`);
    if (r) r.outcome = outcome;
  }
  async release(scope: string, key: string): Promise<void> {
    this.records.delete(`${scope}\u0000${key}`);
  }
}
