/**
 * The one submit loop: every transaction the relay sends (a client's fee-bump, a func+auth
 * transaction, the pool's own) is sent, watched and retried here, under one retry policy:
 *
 * - PENDING or DUPLICATE: wait for the ledger watcher. A fee-bump that waits `replaceAfterLedgers`
 *   ledgers (the submission's, from its fee strategy, else the policy's) is replaced by one bidding
 *   `replaceMultiplier` times its rate, up to the cap.
 * - TRY_AGAIN_LATER: send again after the next ledger or a back-off, until `tryAgainLaterMs` has passed
 *   with no ledger closing (each ledger starts it anew, within the deadline: the source account's
 *   transaction queued elsewhere is applied); a fee-bump is wrapped anew one stroop higher (a dropped
 *   one is banned by its hash).
 * - tx_insufficient_fee: double the rate, up to the cap.
 * - tx_bad_seq: re-read the source's sequence number (`resync`), up to `badSeqRetries` times.
 * - No usable answer (a timeout, a closed connection, garbage): the same envelope is sent again, up to
 *   `lostAnswerResends` times; whatever the network has of it by then, its answer says (DUPLICATE,
 *   or an error checked against its record). Then the submission is unknown.
 * - While anything of the submission may be queued or applied, an error from the network is not
 *   believed by itself: once the watcher has read the ledger the network judged against, the
 *   transaction is looked up; the network's record decides.
 *
 * It answers what the network did, or that it cannot be known yet; what that means for credits,
 * channels and the client is the caller's business. It never calls the caller: what it needs from it
 * (an envelope at a bid, the intent recorded before a send, a re-read sequence number, a look-up
 * of the relay's own applied transaction) it asks for as a step, and the caller answers each step
 * (`Steps` in submit-protocol.ts: an async generator the caller drives, src/features/tx/submit-steps.ts).
 */
import { RelayError } from "../kernel/errors.ts";
import type { Logger } from "../kernel/log.ts";
import { clientResultCodes } from "../stellar/result-codes.ts";
import type { Gateway, Sent } from "./gateway.ts";
import type { Confirmed } from "./ledger-watcher.ts";
import {
  RETRY_POLICY,
  type RetryPolicy,
  type Step,
  type StepAnswer,
  type Steps,
  type SendRequest,
  type Verdict,
} from "./submit-protocol.ts";
import type { Signed } from "../stellar/envelope.ts";

type Watch = { promise: Promise<Confirmed | null>; cancel(): void };

const TX_INSUFFICIENT_FEE = "tx_insufficient_fee";
const TX_BAD_SEQ = "tx_bad_seq";
const TX_TOO_LATE = "tx_too_late";
/** The submission's bounds have passed (see `SendLoop.expiry`). */
const EXPIRED = Symbol("expired");
const min = (a: bigint, b: bigint) => (a < b ? a : b);

/** Whether a failed send may still have reached the network (no answer in time, or an unusable one). */
function mayHaveLanded(e: unknown): boolean {
  const reason = e instanceof RelayError ? e.details?.reason : undefined;
  return reason === "timeout" || reason === "bad_answer";
}

export class Submitter {
  constructor(
    private readonly gw: Gateway,
    private readonly log: Logger,
    private readonly policy: RetryPolicy = RETRY_POLICY,
  ) {}

  /**
   * Sends until the network decides, or the deadline passes, asking the caller for what it needs
   * (`Step`). Throws when nothing of it can have been sent.
   */
  steps(s: SendRequest): Steps {
    return new SendLoop(this.gw, this.log, this.policy, s).go();
  }
}

/** One submission's state: its bid, its last hash, and whether anything of it may be queued. */
class SendLoop {
  private rate: bigint;
  private hash: string;
  private mayBeQueued: boolean;
  private accepted = false;
  private capped = false;
  /** A fee-bump is watched once, by its inner hash: whichever of its wrappings lands answers. */
  private readonly inner: Watch | null;
  /** Resolves EXPIRED once a ledger past the submission's bounds is read; never without bounds. */
  private readonly pastBounds: { promise: Promise<typeof EXPIRED>; cancel(): void };

  constructor(
    private readonly gw: Gateway,
    private readonly log: Logger,
    private readonly policy: RetryPolicy,
    private readonly s: SendRequest,
  ) {
    this.rate = min(s.rate, s.cap);
    this.hash = s.resumed?.hash ?? "";
    this.mayBeQueued = s.resumed !== undefined;
    this.inner = s.innerHash ? gw.watcher.watch(s.innerHash, this.left()) : null;
    this.pastBounds = this.expiry();
  }

  private left(): number {
    return Math.max(1, this.s.deadline - Date.now());
  }

  async *go(): Steps {
    try {
      return yield* this.loop();
    } finally {
      this.inner?.cancel();
      this.pastBounds.cancel();
    }
  }

  private async *loop(): Steps {
    const { gw, s, policy } = this;
    let tryAgainUntil = Date.now() + policy.tryAgainLaterMs;
    let tryAgainLedger = gw.watcher.latestLedger;
    let next = s.resumed?.envelope;
    // bounds that have passed already: no ledger can take it, and the network would ban the envelope
    // (nothing of this run was sent, and once() looked an earlier run up: no look-up is needed)
    if (!s.resumed && s.validUntil && gw.watcher.past(s.validUntil)) return this.expiredResult();
    for (let attempt = 0, badSeq = 0, lost = 0; ; attempt++) {
      const envelope = next ?? (yield* this.build(this.rate));
      next = undefined;
      yield* this.beforeSend(envelope);
      const watch = this.inner ?? gw.watcher.watch(this.hash, this.left());
      let sent: Sent;
      try {
        sent = await gw.send(envelope.xdr);
      } catch (e) {
        if (!this.inner) watch.cancel();
        if (mayHaveLanded(e) && lost++ < policy.lostAnswerResends && Date.now() < s.deadline) {
          // the answer may be what was lost, not the transaction: the same bytes again make the network say
          this.mayBeQueued = true;
          next = envelope;
          continue;
        }
        if (this.mayBeQueued || mayHaveLanded(e)) return this.unknown("network_unavailable");
        throw e;
      }
      if (sent.status === "PENDING" || sent.status === "DUPLICATE") {
        this.mayBeQueued = true;
        this.accepted = true;
        yield { kind: "accepted", hash: this.hash, answer: sent.status };
        const c = yield* this.confirm(watch, sent.latestLedger);
        if (c === EXPIRED) return yield* this.expired();
        return c ? { kind: "applied", confirmed: c } : this.unknown(this.capped ? "fee_cap_reached" : undefined);
      }
      if (!this.inner) watch.cancel();
      if (sent.status === "TRY_AGAIN_LATER") {
        // a ledger closed since: the queue moved (a transaction of the same account, queued elsewhere, was
        // applied), so the time to try again starts anew, within the submission's deadline
        if (sent.latestLedger > tryAgainLedger) {
          tryAgainLedger = sent.latestLedger;
          tryAgainUntil = Math.min(s.deadline, Date.now() + policy.tryAgainLaterMs);
        }
        if (Date.now() + 250 > tryAgainUntil)
          return this.mayBeQueued ? yield* this.queued() : { kind: "busy", hash: this.hash };
        // again after the next ledger (what is queued for the account then is applied), or a back-off
        const backOff = Math.min(250 * 2 ** Math.min(attempt, 3), Math.max(0, tryAgainUntil - Date.now()));
        const seen = Math.max(sent.latestLedger, gw.watcher.latestLedger);
        await Promise.race([Bun.sleep(backOff), gw.watcher.passed(seen, backOff)]);
        // a fee-bump banned by its hash (dropped from a queue) is wrapped anew: one stroop more is another hash
        if (this.inner && this.rate < s.cap) this.rate += 1n;
        continue;
      }
      const resultXdr = sent.errorResultXdr!;
      const codes = clientResultCodes(resultXdr);
      if (this.mayBeQueued) {
        // a wrapping may be queued or applied already: the network's record decides, not this error
        const c = yield* this.applied(sent.latestLedger);
        if (c === "unknown") return this.unknown("network_unavailable");
        if (c) return { kind: "applied", confirmed: c };
        // a queued wrapping refuses a replacement that does not bid 10x: wait for it
        if (codes.network === TX_INSUFFICIENT_FEE && this.inner) return yield* this.queued();
        // its sequence number is spent by another transaction, or its time bounds passed: nothing of it can be queued
        if (codes.transaction === TX_BAD_SEQ || codes.transaction === TX_TOO_LATE) this.mayBeQueued = false;
        if (this.inner) return this.rejected(resultXdr);
      }
      if (codes.network === TX_INSUFFICIENT_FEE && this.rate < s.cap) {
        this.rate = min(this.rate * 2n, s.cap);
        continue;
      }
      // the source's sequence number was stale (another transaction moved it): re-read it and retry
      if (codes.network === TX_BAD_SEQ && s.resyncable && badSeq++ < policy.badSeqRetries) {
        yield { kind: "resync" };
        continue;
      }
      return this.rejected(resultXdr);
    }
  }

  /** The envelope bidding `rate`, from the caller. */
  private async *build(rate: bigint): AsyncGenerator<Step, Signed, StepAnswer> {
    return (yield { kind: "build", rate }) as Signed;
  }

  /** Before each send: the caller records the envelope (its intent) first. */
  private async *beforeSend(envelope: Signed): AsyncGenerator<Step, void, StepAnswer> {
    this.hash = envelope.hash.toString("hex");
    yield { kind: "record", envelope, hash: this.hash, rate: this.rate };
  }

  /** The relay's own applied transaction with this hash, from the caller (a failed look-up throws). */
  private async *lookup(hash: string): AsyncGenerator<Step, Confirmed | null, StepAnswer> {
    return ((yield { kind: "lookup", hash }) as Confirmed | null) ?? null;
  }

  private unknown(reason?: "fee_cap_reached" | "network_unavailable"): Verdict {
    return {
      kind: "unknown",
      hash: this.hash,
      rate: this.rate,
      accepted: this.accepted,
      ...(reason ? { reason } : {}),
    };
  }

  private rejected(resultXdr: string): Verdict {
    return { kind: "rejected", hash: this.hash, resultXdr, accepted: this.accepted };
  }

  /**
   * Waits for the watcher's confirmation. A fee-bump not included within `replaceAfterLedgers`
   * ledgers is replaced by one bidding `replaceMultiplier` times as much, as long as the cap
   * allows; past that, `capped` says why it still waits.
   */
  private async *confirm(
    watch: Watch,
    sentLedger: number,
  ): AsyncGenerator<Step, Confirmed | null | typeof EXPIRED, StepAnswer> {
    const { gw, s, policy } = this;
    const expiry = this.pastBounds.promise;
    let since = sentLedger;
    for (;;) {
      if (!this.inner || this.capped) return await Promise.race([watch.promise, expiry]);
      const after = s.replaceAfterLedgers ?? policy.replaceAfterLedgers;
      const waited = gw.watcher.passed(since + after - 1, this.left()).then(() => undefined);
      const c = await Promise.race([watch.promise, expiry, waited]);
      if (c === EXPIRED) return c;
      if (c !== undefined || Date.now() >= s.deadline) return c ?? (await Promise.race([watch.promise, expiry]));
      const bid = this.rate * policy.replaceMultiplier;
      if (bid > s.cap) {
        this.capped = true;
        continue;
      }
      const before = this.rate;
      this.rate = bid;
      const replacement = yield* this.build(bid);
      yield* this.beforeSend(replacement);
      const sent = await gw.send(replacement.xdr).catch(() => null);
      since = sent?.latestLedger ?? gw.watcher.latestLedger;
      if (sent?.status === "PENDING" || sent?.status === "DUPLICATE")
        yield { kind: "accepted", hash: this.hash, answer: sent.status };
      else {
        // not taken: the queued one stands, and stays the one a resumed submission sends again
        this.rate = before;
        yield* this.beforeSend(yield* this.build(before));
      }
      this.log.info(
        {
          network: gw.name,
          innerHash: s.innerHash,
          hash: this.hash,
          rate: bid.toString(),
          was: before.toString(),
          status: sent?.status,
        },
        "fee-bump replaced by fee",
      );
    }
  }

  /**
   * After an error for a submission that may have been applied: waits until the watcher has read
   * the ledger the network judged against (or the inner hash is confirmed), then looks it up.
   * "unknown" when the network cannot say now: not known yet, rather than a guess.
   */
  private async *applied(judgedAt: number): AsyncGenerator<Step, Confirmed | null | "unknown", StepAnswer> {
    const caughtUp = this.gw.watcher.passed(judgedAt, this.left()).then(() => null);
    const c = await Promise.race(this.inner ? [this.inner.promise, caughtUp] : [caughtUp]);
    if (c) return c;
    try {
      return yield* this.lookup(this.hash);
    } catch {
      return "unknown";
    }
  }

  /** Waits for a queued wrapping until the deadline (or its bounds pass). */
  private async *queued(): Steps {
    const c = this.inner ? await Promise.race([this.inner.promise, this.pastBounds.promise]) : null;
    if (c === EXPIRED) return yield* this.expired();
    return c ? { kind: "applied", confirmed: c } : this.unknown();
  }

  /**
   * EXPIRED once the watcher has read a ledger past the submission's bounds: a watch resolved by a
   * ledger up to that one was resolved first, and wins a race with it.
   */
  private expiry(): { promise: Promise<typeof EXPIRED>; cancel(): void } {
    const never = new Promise<typeof EXPIRED>(() => {});
    if (!this.s.validUntil) return { promise: never, cancel: () => {} };
    // marked before anything is sent: a ledger skipped after that may hold it
    const w = this.gw.watcher.beyond(this.s.validUntil, this.gw.watcher.readMark(), this.left());
    return { promise: w.promise.then((past) => (past ? EXPIRED : never)), cancel: w.cancel };
  }

  /**
   * Its bounds passed: expired, unless the network's record has it (a ledger the watcher passed over
   * unread); unknown when the network cannot be asked.
   */
  private async *expired(): Steps {
    let c: Confirmed | null;
    try {
      c = yield* this.lookup(this.hash);
    } catch {
      return this.unknown("network_unavailable");
    }
    if (c) return { kind: "applied", confirmed: c };
    return this.expiredResult();
  }

  private expiredResult(): Verdict {
    const hash = this.hash || this.s.innerHash!; // nothing sent yet: known by its inner hash
    const ledger = this.gw.watcher.latestLedger;
    return { kind: "expired", hash, rate: this.rate, accepted: this.accepted, ledger };
  }
}
