/**
 * Settlement, the one place where credits are settled, outcomes written and what a send took is closed:
 * the network's verdict is recorded (its status through the lifecycle machine) and the project's actor
 * told what the journal released and charged, for this request's reservation or for the project whose
 * submission it resumed; a send's channel lease ends (or, past a 504, is parked until its submission is
 * resolved); a transaction's slot in its account's order ends with its outcome; a refusal before
 * anything was sent is kept as a rejected submission, and its account's order learns it.
 */
import type { Gateway } from "../../network/gateway.ts";
import { type NetworkName, chargesCredits } from "../../stellar/networks.ts";
import type { Confirmed } from "../../network/ledger-watcher.ts";
import type { Logger } from "../../kernel/log.ts";
import type { SponsorMetrics } from "../../kernel/metrics.ts";
import type { Outcome, SettledCredits, SubmissionRecord, SubmissionStore } from "../../store/types.ts";
import type { Networks } from "../networks/networks.ts";
import type { Reservation } from "./admission.ts";
import { outcomeOf, sequenceUse, submissionFailed } from "./outcomes.ts";
import type { FeeLease } from "../pool/channel-pool.ts";
import type { UserCaps } from "../projects/rules/user-caps.ts";
import type { Payer } from "../projects/principal.ts";
import type { Attempt } from "./attempt.ts";
import { isRetryable } from "../../kernel/errors.ts";
import type { Verdict } from "../../network/submit-protocol.ts";
import type { Sender } from "./jobs.ts";
import type { Ordering } from "./order/ordering.ts";
import type { AfterEnd, OrderedTx } from "./order/sequence-gate.ts";

export interface SettlementDeps {
  submissions: SubmissionStore;
  networks: Networks;
  /** Applies a settlement to another project's actor (a resumed submission of that project). */
  projects: { settleJournaled(projectId: string, s: SettledCredits): void };
  metrics?: SponsorMetrics;
  /** Several instances share the database: outcomes are written before they are answered. */
  shared: boolean;
  log: Logger;
  /** End users' days (the policy's perUser caps). */
  userCaps?: UserCaps;
  /** The accounts' orders (order flow), one per network. */
  ordering: Ordering;
}

export class Settlement {
  /** Outcomes answered and still being written. */
  private readonly writes = new Set<Promise<void>>();

  constructor(
    private readonly deps: SettlementDeps,
    private readonly parked: ParkedLeases,
  ) {}

  /** Resolves once the outcomes answered so far are written (before shutdown, or a read of the balances). */
  async written(): Promise<void> {
    await Promise.all(this.writes);
  }
  /** The outcome of a recorded submission the network applied (recorded and settled now), or null. */
  async resolved(gw: Gateway, r: SubmissionRecord, reservation?: Reservation): Promise<Outcome | null> {
    const found = await this.found(gw, r.innerHash, r.hash);
    return found ? this.settle(gw.name, r.id, found, reservation) : null;
  }
  /**
   * The relay's own applied transaction for an inner hash (any wrapping) or an envelope hash (an
   * own transaction), or null. A wrapping whose fee another account paid is not the relay's.
   */
  async found(gw: Gateway, innerHash: string, hash: string): Promise<Confirmed | null> {
    const f = (await gw.find(innerHash)) ?? (hash !== innerHash ? await gw.find(hash) : null);
    return f && this.deps.networks.find(gw.name)?.pool?.isRelayAccount(f.feeSource) ? f : null;
  }
  /**
   * Records the network's verdict and settles its project's credits (this request's reservation, if
   * any). A submission this request started (`fresh`: no other run or project has journaled
   * anything for it) is answered as soon as the verdict is known: its reservation is settled at
   * once as the journal will settle it (the reserve released, the fee charged), and the outcome is
   * written after (`reservation.writing`). The intent is durable, so if the relay stops before that
   * write, a retry or recovery finds the transaction on the network and settles it the same way.
   * With several instances the outcome is written before the answer (another instance's views
   * cannot wait for this one's writes).
   */
  async settle(
    network: NetworkName,
    id: string,
    c: Confirmed,
    reservation?: Reservation,
    fresh = false,
  ): Promise<Outcome> {
    const outcome: Outcome = c.successful
      ? {
          kind: "success",
          result: { hash: c.hash, feePaid: c.feeCharged.toString(), ledger: c.ledger, resultXdr: c.resultXdr },
        }
      : outcomeOf(submissionFailed(c.hash, c.resultXdr, { ledger: c.ledger, feePaid: c.feeCharged }));
    this.deps.metrics?.feePaid(network, c.feeCharged);
    const written = this.deps.submissions.recordOutcome(id, outcome, c.feeCharged, chargesCredits(network));
    this.parked.unpark(id, c);
    this.settleUserHold(id, c.feeCharged, reservation);
    // several instances: written first, so that every instance's views show it once it is answered
    if (!reservation || !fresh || this.deps.shared) {
      this.applySettlement(network, reservation, await written, c.feeCharged);
      return outcome;
    }
    const told = expectedSettlement(network, reservation, c.feeCharged);
    this.applySettlement(network, reservation, told, c.feeCharged);
    const writing = written.then(
      (s) => this.correct(network, id, told, s),
      (e) => {
        const err = e instanceof Error ? e.message : String(e);
        this.deps.log.warn(
          { network, submission: id, err },
          "an answered outcome was not recorded; recovery settles it",
        );
        this.correct(network, id, told, null);
      },
    );
    reservation.writing = writing;
    this.writes.add(writing);
    void writing.finally(() => this.writes.delete(writing));
    return outcome;
  }
  /**
   * A request's failure that stands (not worth retrying): recorded (the submission is rejected) and
   * its reservation settled as the journal did.
   */
  async reject(network: NetworkName, reservation: Reservation, id: string, o: Outcome): Promise<void> {
    const s = await this.deps.submissions.recordOutcome(id, o, null, chargesCredits(network));
    this.settleUserHold(id, 0n, reservation);
    this.applySettlement(network, reservation, s, 0n);
  }

  /**
   * A transaction refused before anything of it was sent (by the relay's rules, its approval server, its
   * account's order) or expired before it was sent is kept as a rejected (or expired) submission, to be
   * looked up by its inner hash like any other; nothing of it was journaled. Answered as it was.
   */
  async refused(network: NetworkName, innerHash: string, payer: Payer, outcome: Outcome): Promise<Outcome> {
    const details = outcome.kind === "failure" ? (outcome.error.details as { status?: string } | undefined) : null;
    const expired = details?.status === "expired";
    const { scope: caller, projectId } = payer;
    await this.deps.submissions
      .recordRefusal({ network, innerHash, caller, projectId, outcome, expired })
      .catch((e) => this.deps.log.warn({ network, innerHash, err: String(e) }, "recording a refusal failed"));
    return outcome;
  }

  /**
   * Records an outcome the send ended with and settlement has not recorded: a refusal before anything
   * was written (`fresh`, and still no row) is kept as a rejected submission; a failure that stands (not
   * worth retrying) is recorded and its reservation settled; a retryable one leaves the intent for a retry
   * or recovery (the reservation stays journaled), a held one answered 504 no longer held.
   */
  async close(a: Attempt, fresh: boolean, o: Outcome): Promise<Outcome> {
    const { network, job, reservation } = a;
    if (fresh && !(await this.deps.submissions.byInnerHash(network.name, job.innerHash)))
      return await this.refused(network.name, job.innerHash, reservation.payer, o);
    if (o.kind === "success" || !isRetryable(o.error.code)) await this.reject(network.name, reservation, a.row.id, o);
    // a held one answered 504 is owed no more than any submission answered so: recovery resolves it as one
    else if (o.error.code === "SUBMISSION_TIMEOUT" && job.order) await this.deps.submissions.clearHeld(a.row.id);
    return o;
  }

  /**
   * A send's channel lease let go: ended with what the network charged (and whether the channel's number
   * was used), or, when the verdict is not known yet and an intent of it was written, parked past the 504
   * while an envelope of it may be queued: it ends when its submission is resolved (`unpark`).
   */
  endLease(id: string, sender: Sender, r: Verdict | null, written: boolean): void {
    const end = senderEnd(r);
    if (end.unresolved && sender.lease && written) this.parked.park(id, sender.lease);
    else sender.end(end.charged, end.consumed);
  }

  /**
   * A sent transaction's slot in its account's order, ended with its outcome: "stands"; or, refused as
   * out of order while its predecessor is still to come, held again (`hold` writes it first): "again"
   * once it may be sent, else why it never may.
   */
  async endOrder(network: Attempt["network"], tx: OrderedTx, o: Outcome, hold: () => Promise<void>): Promise<AfterEnd> {
    return await this.deps.ordering.gate(network.gateway).ended(tx, sequenceUse(o), hold);
  }

  /** A transaction of an account's order refused before it was sent: what waits after it in that order learns it. */
  refusedInOrder(network: NetworkName, order: { account: string; seq: bigint }): void {
    this.deps.ordering.refusedBefore(network, order.account, order.seq);
  }

  /** The network accepted none of a request's attempts: its reservation is given back now. */
  async giveBack(reservation: Reservation, id: string): Promise<void> {
    this.settleUserHold(id, 0n, reservation);
    if (reservation.journaled) this.endReservation(reservation, await this.deps.submissions.release(id));
  }

  /**
   * Recovery: a submission none of whose envelopes can be queued any more (and in no ledger) expires,
   * and its reservation is given back. A request that sent it again meanwhile changed sent_ledger:
   * then this does nothing.
   */
  async expire(r: SubmissionRecord): Promise<void> {
    const s = await this.deps.submissions.release(r.id, r.sentLedger);
    if (s.projectId && s.released > 0n) this.deps.projects.settleJournaled(s.projectId, s);
    if (s.projectId) this.settleUserHold(r.id, 0n); // released: none of it can land, the user's count goes back
    this.parked.unpark(r.id, null);
  }

  /**
   * After an answered outcome's write: the project's actor is told the difference between what it
   * was told and what the journal did (`s`; null: nothing was written, recovery settles it later).
   */
  private correct(network: NetworkName, id: string, told: SettledCredits, s: SettledCredits | null): void {
    if (!chargesCredits(network) || !told.projectId) return;
    const released = (s?.released ?? 0n) - told.released;
    const charged = (s?.charged ?? 0n) - told.charged;
    if (released === 0n && charged === 0n) return;
    if (s) this.deps.log.error({ network, submission: id }, "the journal settled an answered outcome otherwise");
    this.deps.projects.settleJournaled(told.projectId, { projectId: told.projectId, released, charged });
  }
  /**
   * Gives the journal's settlement to the project it belongs to (the submission's, whose
   * reservation was outstanding): this request's reservation, or another project's actor when this
   * request (or recovery) resumed that project's submission (this request's own reservation is then dropped).
   */
  private applySettlement(
    network: NetworkName,
    reservation: Reservation | undefined,
    s: SettledCredits,
    feeCharged: bigint,
  ): void {
    const owner = s.projectId ?? null;
    if (reservation && !chargesCredits(network))
      this.endReservation(
        reservation,
        { released: 0n, charged: owner === reservation.payer.projectId ? feeCharged : 0n },
        feeCharged,
      );
    else if (reservation && owner === reservation.payer.projectId) this.endReservation(reservation, s, feeCharged);
    else if (owner && chargesCredits(network)) this.deps.projects.settleJournaled(owner, s);
  }
  /**
   * The end user's hold a submission carries (perUser caps), settled once with what the network charged
   * (0: it is not counted) when its outcome is known: by the request that learns it, if its hold is the
   * row's, or by recovery (no reservation).
   */
  private settleUserHold(id: string, charged: bigint, reservation?: Reservation): void {
    const caps = this.deps.userCaps;
    if (!caps || (reservation && !reservation.userOnRow)) return;
    void this.deps.submissions
      .takeUserHold(id)
      .then(
        (h) =>
          h &&
          caps.settle({ key: { projectId: h.projectId, account: h.account, day: h.day }, grant: h.grant }, charged),
      )
      .catch((e) => this.deps.log.warn({ submission: id, err: String(e) }, "settling an end user's hold failed"));
  }

  /** Drops what is left of a request's reservation once its outcome's write (if any) has ended. */
  finish(reservation: Reservation): void {
    const drop = () => this.endReservation(reservation, { released: 0n, charged: 0n });
    if (reservation.writing) void reservation.writing.finally(drop);
    else drop();
  }
  /**
   * Ends a reservation once: the journal's release and charge (credits) or the fee paid (for the daily
   * spend); `fee`, what the network charged for its transaction (its end user's day counts it).
   */
  endReservation(reservation: Reservation, s: SettledCredits, fee = s.charged): void {
    if (reservation.done) return;
    reservation.done = true;
    reservation.payer.settle(reservation.id, { ...s, journaled: reservation.journaled });
    const user = reservation.user;
    // a hold the submission carries is settled where its outcome is recorded (settleUserHold), or stays (504)
    if (user && this.deps.userCaps && !reservation.userOnRow)
      void this.deps.userCaps
        .settle(user, fee)
        .catch((e) => this.deps.log.warn({ err: String(e), user: user.key.account }, "settling a user's day failed"));
  }
}

/**
 * What the fee source keeps of a submission once it ends: the fee charged, whether its room and
 * sequence number were used (after a timeout it may still be included: they stay counted), and
 * whether it is unresolved (504: still perhaps queued).
 */
function senderEnd(r: Verdict | null): { charged: bigint; consumed: boolean; unresolved: boolean } {
  if (!r) return { charged: 0n, consumed: false, unresolved: false };
  return {
    charged: r.kind === "applied" ? r.confirmed.feeCharged : 0n,
    consumed: r.kind === "applied" || (r.kind !== "busy" && r.accepted),
    unresolved: r.kind === "unknown",
  };
}

/**
 * What the journal settles for a submission only this request journaled for: its reserve released
 * and the fee charged (credits), or nothing (another network: the fee counts toward the daily spend).
 */
function expectedSettlement(network: NetworkName, r: Reservation, feeCharged: bigint): SettledCredits {
  const journal = chargesCredits(network) && r.journaled;
  return {
    projectId: r.payer.projectId,
    released: journal ? r.grant : 0n,
    charged: journal ? feeCharged : 0n,
  };
}

/**
 * Fee-source leases of submissions answered 504 whose fee-bump may still be queued, by submission
 * id: the channel keeps the hold until the submission is settled (a retry takes the lease back).
 */
export class ParkedLeases {
  private readonly leases = new Map<string, FeeLease>();

  /** Keeps a fee-bump's lease past a 504 (one per submission). */
  park(id: string, lease: FeeLease): void {
    this.leases.get(id)?.end(0n);
    this.leases.set(id, lease);
  }
  /** Ends a parked lease once its submission is resolved: with the fee, if its channel paid it. */
  unpark(id: string, found: Confirmed | null): void {
    const lease = this.leases.get(id);
    if (!lease) return;
    this.leases.delete(id);
    const paid = found && (!("feeSource" in found) || found.feeSource === lease.publicKey);
    lease.end(paid ? found.feeCharged : 0n);
  }
  /** Takes a submission's parked lease (a retry sends with it), or null. */
  take(id: string): FeeLease | null {
    const lease = this.leases.get(id) ?? null;
    this.leases.delete(id);
    return lease;
  }

  /** Puts back a lease `take` gave, when the retry could not use it. */
  putBack(id: string, lease: FeeLease): void {
    this.leases.set(id, lease);
  }
}
