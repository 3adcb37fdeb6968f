/**
 * Order flow for one network: a client's transactions are sent one per source account, in sequence
 * order, each once its predecessor is applied (the network queues one transaction per source account
 * and refuses a sequence number that is not the account's next). An account's actor
 * (actors/sponsor/account.machine.ts) decides; this gate does what it decides: it lets a transaction go,
 * holds it, refuses it, reads the account's sequence number from the network when the chain must say
 * (a predecessor sent by another instance, or outside the relay: read once per ledger while one waits).
 *
 * A held transaction waits until its own maxTime at most (then it is expired: tx_too_late), and at most
 * SEQUENCE_HOLD_MS without progress on its account (a gap never filled: refused as tx_bad_seq naming
 * the number it waited for). Holds count per paying project (or client IP) and per account, with limits (429 past
 * them; holds.ts). A transaction is written as a pending submission before it is held (`beforeHold`):
 * after a crash, recovery sends it (held-rows.ts).
 */
import { createActor, type Actor } from "xstate";
import { accountMachine, type AccountEvent, type HeldTx, idle } from "../../../../actors/sponsor/account.machine.ts";
import { unavailable } from "../../../kernel/errors.ts";
import { neverCame, passedWhileHeld, predecessorRejected } from "./refusals.ts";
import { type HeldView, Holds, type OrderLimits, type OrderedTx, type Waiter } from "./holds.ts";
import type { Logger } from "../../../kernel/log.ts";
import type { AccountState } from "../../../network/gateway.ts";
import type { NetworkName } from "../../../stellar/networks.ts";

export interface OrderDeps {
  network: NetworkName;
  /** Sequence numbers of accounts, read from the network. */
  accounts(publicKeys: string[]): Promise<Map<string, AccountState>>;
  /** Resolves when a ledger after the one read now has been read (false: timed out or stopped). */
  nextLedger(timeoutMs: number): Promise<boolean>;
  limits: OrderLimits;
  log: Logger;
}

export { DEFAULT_ORDER_LIMITS, type HeldView, type OrderLimits, type OrderedTx } from "./holds.ts";

/** How a sent transaction ended, for its successors. */
export type OrderResult = "applied" | "rejected" | "unknown" | "out_of_order";

/** After a sent transaction's end: its outcome stands, it is sent again, or why it never may be. */
export type AfterEnd = "stands" | "again" | Error;

type AccountActor = Actor<typeof accountMachine>;

export class SequenceGate {
  private readonly accounts = new Map<string, AccountActor>();
  private readonly holds: Holds;
  /**
   * Accounts with one transaction sent and nothing else here (most): no actor, no hold, no timer. The
   * actor is made when a second one arrives, or when this one ends otherwise than applied.
   */
  private readonly lone = new Map<string, HeldTx>();
  /** Accounts with transactions held and none sent here: their sequence is read after each ledger (follow). */
  private readonly stalled = new Set<string>();
  private reading = false;
  private stopped = false;

  constructor(private readonly deps: OrderDeps) {
    this.holds = new Holds(deps.limits, (w) => this.timedOut(w));
  }

  /** Transactions held now (waiting for a predecessor). */
  get held(): number {
    return this.holds.size;
  }

  /** What a held transaction waits for, by its inner hash (a look-up's `waitingFor`); null if not held here. */
  waiting(id: string): HeldView | null {
    return this.holds.view(id);
  }

  /**
   * Lets `tx` go at once when its account has nothing here (it is then counted as the account's lone
   * transaction: what a new account's actor would decide, without one) or the gate is stopped: true. False:
   * it goes through `enter`. Asked before `enter`, so that a lone transaction costs no promise.
   */
  passesAlone(tx: OrderedTx): boolean {
    if (this.stopped) return true;
    if (this.accounts.has(tx.account) || this.lone.has(tx.account)) return false;
    this.lone.set(tx.account, { id: tx.id, seq: tx.seq });
    return true;
  }

  /**
   * Resolves when `tx` may be sent (at once when its account has nothing before it): with null, or with
   * why it never may (a gap never filled, a rejected predecessor, too many held, the relay stopping, its
   * row not written). `beforeHold`: run before it is held (its row written), once it is known that it will wait.
   */
  async enter(tx: OrderedTx, beforeHold?: () => Promise<void>): Promise<Error | null> {
    if (this.passesAlone(tx)) return null;
    const tooMany = this.holds.check(tx);
    if (tooMany) return tooMany;
    // counted (and its time running) from now; its account's actor learns of it once it is written
    const held = this.holds.hold(tx);
    const w = beforeHold ? await this.write(tx, beforeHold) : "held";
    if (w === "gone") return await held;
    if (w !== "held") {
      this.refusedBefore(tx.account, tx.seq); // not held: what waits after it learns it
      return w.error;
    }
    this.send(tx.account, { type: "ARRIVE", id: tx.id, seq: tx.seq });
    return await held;
  }

  /**
   * Writes a held transaction's row (`beforeHold`): "held"; "gone" when it was given up on meanwhile
   * (stopped, or its time ran out: its promise has the refusal); or the error, and then it is not held.
   */
  private async write(tx: OrderedTx, beforeHold: () => Promise<void>): Promise<"held" | "gone" | { error: Error }> {
    try {
      await beforeHold();
    } catch (e) {
      this.holds.release(tx.id);
      return { error: e instanceof Error ? e : new Error(String(e)) };
    }
    return this.holds.has(tx.id) ? "held" : "gone";
  }

  /**
   * A sent transaction's end, told to its account's order: "stands" (what it ended with is its
   * outcome), or, for `out_of_order` (tx_bad_seq before any ledger), the account's number is read and a
   * transaction ahead of it is held again (`beforeHold` runs first): "again" when it may be sent again,
   * else why it never may (as `enter`); one really behind the chain stands rejected.
   */
  async ended(tx: OrderedTx, result: OrderResult, beforeHold?: () => Promise<void>): Promise<AfterEnd> {
    if (this.stopped) return "stands";
    // a lone transaction applied: its account has nothing else here (any other outcome goes to an actor)
    if (result === "applied" && this.lone.get(tx.account)?.id === tx.id) {
      this.lone.delete(tx.account);
      return "stands";
    }
    switch (result) {
      case "applied":
        this.send(tx.account, { type: "APPLIED", id: tx.id, seq: tx.seq });
        return "stands";
      case "rejected":
        this.send(tx.account, { type: "REJECTED", id: tx.id, seq: tx.seq });
        return "stands";
      case "unknown":
        this.send(tx.account, { type: "UNKNOWN", id: tx.id, seq: tx.seq });
        return "stands";
      case "out_of_order":
        return await this.outOfOrder(tx, beforeHold);
      default:
        return result satisfies never;
    }
  }

  /** A transaction refused as out of order: held again if the chain is behind it, else its rejection stands. */
  private async outOfOrder(tx: OrderedTx, beforeHold?: () => Promise<void>): Promise<AfterEnd> {
    let chainSeq: bigint | undefined;
    try {
      chainSeq = (await this.deps.accounts([tx.account])).get(tx.account)?.seq;
    } catch (e) {
      this.deps.log.warn(
        { network: this.deps.network, account: tx.account, err: String(e) },
        "reading a sequence failed",
      );
    }
    if (chainSeq === undefined || tx.seq <= chainSeq + 1n) {
      this.send(tx.account, { type: "LEAVE", id: tx.id });
      return "stands";
    }
    const tooMany = this.holds.check(tx);
    if (tooMany) {
      this.send(tx.account, { type: "LEAVE", id: tx.id }); // not held: its account's order goes on without it
      return tooMany;
    }
    const again = this.holds.hold(tx);
    const w = beforeHold ? await this.write(tx, beforeHold) : "held";
    if (w === "gone") return (await again) ?? "again";
    if (w !== "held") {
      this.deps.log.warn({ network: this.deps.network, id: tx.id, err: String(w.error) }, "writing a hold failed");
      this.send(tx.account, { type: "LEAVE", id: tx.id });
      return "stands"; // not held: its rejection stands
    }
    this.send(tx.account, { type: "GAP", id: tx.id, seq: tx.seq, chainSeq });
    return (await again) ?? "again";
  }

  /** A transaction of the account refused by the relay itself before it was sent (policy, credits). */
  refusedBefore(account: string, seq: bigint): void {
    if (this.accounts.has(account) || this.lone.has(account)) this.send(account, { type: "REJECTED", id: null, seq });
  }

  stop(): void {
    this.stopped = true;
    this.holds.refuseAll(stopping);
    for (const a of this.accounts.values()) a.stop();
    this.accounts.clear();
    this.lone.clear();
    this.stalled.clear();
  }

  /** Sends an account's actor an event (started on a first arrival) and carries out its decisions. */
  private send(account: string, event: AccountEvent): void {
    let actor = this.accounts.get(account);
    if (!actor) {
      const inFlight = this.lone.get(account);
      if (!inFlight && event.type !== "ARRIVE") return; // nothing is held or sent for it: nothing to decide
      this.lone.delete(account);
      actor = createActor(accountMachine, { input: { account, ...(inFlight ? { inFlight } : {}) } }).start();
      this.accounts.set(account, actor);
    }
    const before = actor.getSnapshot().context.chainSeq;
    actor.send(event);
    const snap = actor.getSnapshot();
    if (snap.context.chainSeq !== before) this.holds.progressed(account);
    for (const tx of snap.context.go) this.holds.release(tx.id)?.go();
    for (const r of snap.context.refused) this.holds.release(r.id)?.refuse(predecessorRejected(account, r.rejected));
    if (idle(snap.context)) {
      this.accounts.delete(account);
      this.stalled.delete(account);
      actor.stop();
    } else if (snap.context.inFlight === null && snap.context.held.length > 0) {
      // stalled as of now: known here, not found by a scan of every account
      this.stalled.add(account);
      this.follow();
    } else this.stalled.delete(account);
  }

  private timedOut(w: Waiter): void {
    const { tx } = w;
    const actor = this.accounts.get(tx.account);
    const chain = actor?.getSnapshot().context.chainSeq ?? null;
    this.send(tx.account, { type: "LEAVE", id: tx.id });
    // its own maxTime is what ended the hold: it is expired, whatever its predecessor does
    const passed = tx.maxTime > 0n && Date.now() >= Number(tx.maxTime) * 1000 - 5; // a timer's ms rounding
    w.refuse(passed ? passedWhileHeld(tx) : neverCame(tx, chain, this.deps.limits.holdMs));
  }

  /**
   * While an account's next number is not in flight here (sent by another instance, or outside the
   * relay), its sequence number is read from the network after each ledger: all such accounts in one call.
   */
  private follow(): void {
    if (this.reading || this.stopped || !this.stalled.size) return;
    const stalled = () => [...this.stalled];
    this.reading = true;
    void (async () => {
      try {
        while (!this.stopped) {
          await this.deps.nextLedger(this.deps.limits.holdMs);
          const list = stalled();
          if (!list.length || this.stopped) return;
          const read = await this.deps.accounts(list).catch((e) => {
            this.deps.log.warn({ network: this.deps.network, err: String(e) }, "reading held accounts failed");
            return new Map<string, AccountState>();
          });
          for (const [pk, a] of read) this.send(pk, { type: "CHAIN", seq: a.seq });
        }
      } finally {
        this.reading = false;
      }
    })();
  }
}

/** 503 to a held transaction's request when the relay stops: its row stays, and it is sent when the relay resumes. */
const stopping = () =>
  unavailable(
    "the relay is stopping: this transaction was held for its predecessor and not sent yet; it is kept, and sent " +
      "in order when the relay (or another instance) resumes: look it up by its inner hash",
    { reason: "stopping" },
    1,
  );
