/**
 * Leases on channel accounts for sponsor requests: a fee-bump's fee source (`assign`: the channel
 * that can best afford the fee), the channel that signed an earlier fee-bump (`keep`), or a
 * channel's next sequence number for a transaction it is the source of (`acquire`). A request
 * waits for a channel that can pay until its own deadline, in turn with the others (waiting.ts);
 * each lease ends with what the network charged. The fee sources asked for while the event loop's
 * jobs run (a turn's requests go on together) are picked by one ASSIGN when they have run: one event
 * for the pool actor and one HOLD for each channel it chose, not one of each per request (a KEEP or
 * an ACQUIRE sent meanwhile is taken first).
 */
import type { Keypair } from "@stellar/stellar-sdk";
import DataLoader from "dataloader";
import type { AcquireReply, AssignReply, PoolEvent } from "../../../actors/pool/pool.machine.ts";
import type { ChannelEvent, FeeEnd, FeeHold } from "../../../actors/pool/channel.machine.ts";
import { ask } from "../../../actors/ask.ts";
import { unavailable } from "../../kernel/errors.ts";
import type { NetworkName } from "../../stellar/networks.ts";
import type { AccountSync } from "./account-sync.ts";
import type { Channels } from "./channels.ts";
import { type Waiter, Waiting } from "./waiting.ts";

/** A fee-bump's fee source: end it with what the network charged (0 if the fee-bump reached no ledger). */
export interface FeeLease {
  keypair: Keypair;
  /** The channel's address (the keypair's, which the SDK encodes anew on every publicKey() call). */
  publicKey: string;
  end(charged: bigint): void;
}

/** A channel's next sequence number, for one transaction whose source is the channel. */
export interface OwnLease {
  keypair: Keypair;
  /** The channel's address. */
  publicKey: string;
  seq: bigint;
  /** After tx_bad_seq: re-reads the sequence number from the network and takes the next one. */
  resync(): Promise<void>;
  end(charged: bigint, consumed: boolean): void;
}

export interface LeaseOptions {
  network: NetworkName;
  /** The most a channel can pay (its starting balance less its reserve). */
  most: bigint;
  waitMs: number;
  /** A lease ended on a channel that now needs upkeep (draining, or low). */
  upkeep(pk: string): void;
  stopped(): boolean;
  /** A request found no channel that could pay its fee in time (it is answered 503). */
  exhausted(fee: bigint): void;
  /** What is short when a request of `fee` found no channel in time (`own`: one for its own transaction). */
  shortage(fee: bigint, own: boolean, waiting: number): Error;
  /** A request now waits for a channel (`waiting` in all): the pool may grow. */
  waited?(waiting: number): void;
  /** A request that waited was served or refused after `ms`. */
  waitEnded?(outcome: "served" | "refused", ms: number): void;
}

/** How long and for whom a request waits for a channel. */
export interface ChannelWait {
  /** Until then (epoch ms); default: `waitMs` from now. */
  until?: number;
  /** Who pays (turns are taken per payer). */
  scope?: string;
}

export class Leases {
  /** Leases ended this turn, not yet told to their channels (see `end`). */
  private ended: [string, FeeEnd | ChannelEvent][] = [];
  private readonly waiting = new Waiting();
  private serving = false;
  /** The fee sources asked for meanwhile, picked together (their channels, or null where none can pay now). */
  private readonly picks = new DataLoader<FeeHold, string | null>(
    async (fees) => {
      this.sendEnded(); // a pick sees every lease ended so far
      const event = { type: "ASSIGN", id: crypto.randomUUID(), fees: [...fees] } satisfies PoolEvent;
      const r = await ask<AssignReply>(this.channels.pool, event);
      return r.publicKeys;
    },
    { cache: false },
  );

  constructor(
    private readonly channels: Channels,
    private readonly sync: AccountSync,
    private readonly opts: LeaseOptions,
  ) {}

  /** The fee source for a fee-bump of up to `fee` stroops: the channel that can best afford it. */
  async assign(fee: bigint, wait: ChannelWait = {}): Promise<FeeLease> {
    const id = crypto.randomUUID();
    const pk = await this.until(fee, () => this.picks.load({ id, fee }), wait, false);
    return { keypair: this.channels.keys.get(pk)!, publicKey: pk, end: (charged) => this.end(pk, { id, charged }) };
  }

  /** A lease on the channel that signed an earlier fee-bump (to send it again); null when that channel is gone. */
  keep(publicKey: string, fee: bigint): FeeLease | null {
    const keypair = this.channels.keys.get(publicKey);
    if (!keypair || !this.channels.channel(publicKey)) return null;
    const id = crypto.randomUUID();
    this.sendEnded();
    this.channels.send(publicKey, { type: "KEEP", id, fee });
    return { keypair, publicKey, end: (charged) => this.end(publicKey, { id, charged }) };
  }

  /** A channel's next sequence number, for a transaction of fee up to `fee` with the channel as its source. */
  async acquire(fee: bigint, wait: ChannelWait = {}): Promise<OwnLease> {
    const id = crypto.randomUUID();
    let seq = 0n;
    const pick = async () => {
      const r = await ask<AcquireReply>(this.channels.pool, { type: "ACQUIRE", id, fee });
      if (r.publicKey) seq = r.seq!;
      return r.publicKey;
    };
    const pk = await this.until(fee, pick, wait, true);
    let badSeq = 0;
    const ref = this.channels.refs()[pk]!;
    const lease: OwnLease = {
      keypair: this.channels.keys.get(pk)!,
      publicKey: pk,
      seq,
      resync: async () => {
        lease.seq = await this.sync.reseq(ref, id, badSeq++ > 0);
      },
      end: (charged, consumed) => this.end(pk, { type: "DONE", id, charged, consumed }),
    };
    return lease;
  }

  /**
   * Tries `pick` at once when no request waits; else waits its turn (waiting.ts) until its deadline
   * (`wait.until`, else `waitMs` from now), and is refused with what is really short.
   */
  private async until(
    fee: bigint,
    pick: () => Promise<string | null>,
    wait: ChannelWait,
    own: boolean,
  ): Promise<string> {
    const { network, most } = this.opts;
    if (fee > most)
      throw unavailable(
        `a fee of ${fee} stroops is more than a channel account holds (${most}); raise CHANNEL_STARTING_BALANCE`,
        { network, fee: fee.toString(), reason: "fee_exceeds_channel_balance" },
        2,
      );
    if (!this.waiting.size) {
      this.sendEnded(); // a pick sees every lease ended so far
      const pk = await pick();
      if (pk) return pk;
    }
    const deadline = wait.until ?? Date.now() + this.opts.waitMs;
    const since = Date.now();
    return await new Promise<string>((resolve, reject) => {
      const w: Waiter = {
        scope: wait.scope ?? "",
        pick,
        resolve: (pk) => {
          this.opts.waitEnded?.("served", Date.now() - since);
          resolve(pk);
        },
        reject: (e) => {
          this.opts.waitEnded?.("refused", Date.now() - since);
          reject(e);
        },
        refuse: () => this.refuse(w, fee, own),
        timer: setTimeout(
          () => {
            if (w.picking) w.expired = true;
            else if (this.waiting.remove(w)) this.refuse(w, fee, own);
          },
          Math.max(0, deadline - Date.now()),
        ),
      };
      this.waiting.push(w);
      this.opts.waited?.(this.waiting.size);
      void this.serve();
    });
  }

  private refuse(w: Waiter, fee: bigint, own: boolean): void {
    if (!this.opts.stopped()) this.opts.exhausted(fee);
    w.reject(this.opts.shortage(fee, own, this.waiting.size + 1));
  }

  /** Requests waiting for a channel now. */
  get waitingCount(): number {
    return this.waiting.size;
  }

  /** Serves the waiting requests in turns while channels free up (one loop at a time). */
  private async serve(): Promise<void> {
    if (this.serving) return;
    this.serving = true;
    try {
      while (this.waiting.size && !this.opts.stopped()) {
        let served = false;
        for (const w of this.waiting.round()) {
          this.sendEnded(); // a pick sees every lease ended so far
          w.picking = true;
          const pk = await w.pick().catch((e: unknown) => this.pickFailed(w, e));
          w.picking = false;
          if (pk) {
            clearTimeout(w.timer);
            this.waiting.served(w);
            w.resolve(pk); // taken, even if its deadline passed meanwhile
            served = true;
          } else if (w.expired && this.waiting.remove(w)) w.refuse();
        }
        if (!served) await this.channels.changed(1000);
      }
    } finally {
      this.serving = false;
    }
  }

  /** A waiting request whose pick failed (the pool actor did not answer): it fails, not the loop. */
  private pickFailed(w: Waiter, e: unknown): null {
    if (!this.waiting.remove(w)) return null;
    clearTimeout(w.timer);
    w.reject(e instanceof Error ? e : new Error(String(e)));
    return null;
  }

  /**
   * Ends a lease (a fee-bump's, or an own transaction's DONE): its channel is told with the turn's other
   * ends once the turn's answers are out (a burst of confirmations is answered first), or before the
   * next pick, whichever is first; a channel's fee-bumps in one RELEASE.
   */
  private end(pk: string, e: FeeEnd | ChannelEvent): void {
    this.ended.push([pk, e]);
    if (this.ended.length === 1) setImmediate(() => this.sendEnded());
  }

  private sendEnded(): void {
    if (!this.ended.length) return;
    const ended = this.ended;
    this.ended = [];
    const releases = new Map<string, FeeEnd[]>();
    for (const [pk, e] of ended)
      if (!("type" in e)) releases.get(pk)?.push(e) ?? releases.set(pk, [e]);
      else this.channels.send(pk, e);
    for (const [pk, ends] of releases) this.channels.send(pk, { type: "RELEASE", ends });
    for (const pk of new Set(ended.map(([pk]) => pk))) this.opts.upkeep(pk);
  }
}
