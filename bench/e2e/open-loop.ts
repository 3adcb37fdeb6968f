/**
 * An open-loop phase: requests are sent at fixed instants (request i at i / rate seconds), whether
 * or not earlier ones were answered. Each request needs an idle account (one pending transaction
 * per source account): at its instant the phase takes the account idle the longest; with none
 * idle the request is counted as not sent. Answered 200, the account is idle again with its next
 * pre-signed transaction; any other answer makes it dirty (its sequence number is unknown) and
 * takes it out of the phase.
 *
 * `prepare` builds and signs every body first (pool × per-account transactions), so the clock
 * measures only sending and answers. With `relayUrls` (several relay instances, no load balancer)
 * request i goes to relayUrls[i mod n], and each answer records which one it came from (`via`).
 */
import type { Accounts } from "./accounts.ts";
import type { EnvelopeFactory } from "./envelopes.ts";
import type { PrepareReply, RelayTarget, RunReply } from "./protocol.ts";
import { callSponsor, sponsorBody } from "./sponsor-call.ts";

/** Seconds of requests the account pool covers: enough while the relay answers within that (PrepareCmd.poolSeconds). */
const POOL_SECONDS = 3;

export class OpenLoopPhase {
  private pool: number[] = [];
  private bodies: string[][] = [];

  constructor(
    private readonly accounts: Accounts,
    private readonly factory: EnvelopeFactory,
    private readonly target: RelayTarget & { poolSeconds?: number },
    private readonly rate: number,
    private readonly seconds: number,
  ) {}

  get total(): number {
    return Math.round(this.rate * this.seconds);
  }

  prepare(): PrepareReply {
    const t0 = performance.now();
    const clean = this.accounts.clean();
    const poolSeconds = this.target.poolSeconds ?? POOL_SECONDS;
    this.pool = clean.slice(0, Math.min(clean.length, Math.ceil(this.rate * poolSeconds)));
    const perAccount = Math.ceil(this.total / Math.max(1, this.pool.length)) + 1;
    this.bodies = this.pool.map((a) =>
      Array.from({ length: perAccount }, (_, j) =>
        sponsorBody(this.factory.build(this.accounts.keys[a]!, this.accounts.seq[a]! + BigInt(j + 1))),
      ),
    );
    return { pool: this.pool.length, perAccount, bodies: this.pool.length * perAccount, ms: performance.now() - t0 };
  }

  async run(capMs: number): Promise<RunReply> {
    const { accounts, target, rate } = this;
    const total = this.total;
    // idle accounts, as positions in the pool, oldest first
    const idle: number[] = this.pool.map((_, p) => p);
    let head = 0;
    const used = new Int32Array(this.pool.length);
    const out: RunReply = {
      scheduled: total,
      sent: 0,
      notSent: 0,
      unanswered: 0,
      status: [],
      code: [],
      latencyMs: [],
      answeredAt: [],
      ledger: [],
      lagP99Ms: 0,
      lagMaxMs: 0,
      elapsedMs: 0,
    };
    const lags: number[] = [];
    // one target per relay instance when there are several
    const targets = target.relayUrls?.length ? target.relayUrls.map((relayUrl) => ({ ...target, relayUrl })) : null;
    if (targets) out.via = [];
    const abort = new AbortController();
    const pending = new Set<number>();
    let allAnswered: () => void = () => {};
    const send = (p: number) => {
      const a = this.pool[p]!;
      const body = this.bodies[p]![used[p]++]!;
      pending.add(p);
      const to = targets ? out.sent % targets.length : 0;
      out.sent++;
      const sentAt = performance.now();
      void callSponsor(targets ? targets[to]! : target, body, abort.signal).then((r) => {
        if (abort.signal.aborted) return;
        out.via?.push(to);
        out.latencyMs.push(performance.now() - sentAt);
        out.answeredAt.push(Date.now());
        out.status.push(r.status);
        out.code.push(r.code);
        out.ledger.push(r.ledger);
        pending.delete(p);
        if (r.status === 200) {
          accounts.seq[a]! += 1n;
          if (used[p]! < this.bodies[p]!.length) idle.push(p);
        } else accounts.dirty[a] = true;
        if (pending.size === 0 && out.sent + out.notSent === total) allAnswered();
      });
    };

    const t0 = performance.now();
    let i = 0;
    while (i < total) {
      const due = Math.min(total, Math.floor(((performance.now() - t0) * rate) / 1000) + 1);
      for (; i < due; i++) {
        lags.push(performance.now() - (t0 + (i * 1000) / rate));
        if (head < idle.length) send(idle[head++]!);
        else out.notSent++;
      }
      await Bun.sleep(1);
    }
    if (pending.size > 0) {
      const done = new Promise<void>((resolve) => {
        allAnswered = resolve;
      });
      await Promise.race([done, Bun.sleep(capMs)]);
    }
    out.elapsedMs = performance.now() - t0;
    out.unanswered = pending.size;
    for (const p of pending) accounts.dirty[this.pool[p]!] = true;
    abort.abort();
    lags.sort((x, y) => x - y);
    out.lagP99Ms = lags[Math.floor(lags.length * 0.99)] ?? 0;
    out.lagMaxMs = lags[lags.length - 1] ?? 0;
    this.bodies = [];
    return out;
  }
}
