/**
 * The channel-account pool of one network: the pool actor and its channel actors, the funder's
 * actor, the channels' keys (sealed at rest) and the transactions that change the pool, run by a
 * reconciler: create channels up to the target (createAccount from the funder, batched), drain and
 * merge channels beyond it (accountMerge into the funder), top up channels that run low (payments
 * from the funder). Sponsor requests lease a fee source (`assign`) or a channel's next sequence
 * number (`acquire`) and end the lease with what the network charged.
 */
import {
  Account,
  Asset,
  Keypair,
  Operation,
  TransactionBuilder,
  type xdr,
  type Transaction,
} from "@stellar/stellar-sdk";
import { createActor, type Actor } from "xstate";
import { poolMachine, type ChannelRef, type PoolReply } from "../../actors/pool.machine.ts";
import { available, channelMachine, type ChannelEvent, type ChannelReply } from "../../actors/channel.machine.ts";
import { ask } from "../../actors/ask.ts";
import { RelayError } from "../errors.ts";
import { BASE_RESERVE, type Gateway, type FeePercentile, type NetworkName } from "../network/gateway.ts";
import type { Confirmed } from "../network/ledger-watcher.ts";
import type { ChannelsRepo } from "../store/channels.repo.ts";
import type { Logger } from "../log.ts";
import type { SecretBox } from "./secret-box.ts";
import { BASE_FEE } from "./fee-bump.ts";
import { MAX_OPS_PER_TX } from "./decode.ts";
import { formatXlm } from "../stellar/amount.ts";
import { clientResultCodes } from "./outcome.ts";

const ACCOUNT_RESERVE = 2n * BASE_RESERVE;
const RECONCILE_EVERY_MS = 5_000;
const INTERNAL_TIMEOUT_MS = 60_000;

export interface PoolConfig {
  /** The channel count of a new pool (the operator's target, once set, is kept in Postgres). */
  channels: number;
  startingBalance: bigint;
  /** A channel whose balance falls under this is topped up to the starting balance. */
  topUpThreshold: bigint;
  /** How long a request waits for a channel that can pay before 503. */
  waitMs: number;
  feePercentile: FeePercentile;
}

export interface PoolDeps {
  network: NetworkName;
  gateway: Gateway;
  funder: Keypair;
  repo: ChannelsRepo;
  box: SecretBox;
  config: PoolConfig;
  log: Logger;
}

/** A fee-bump's fee source: end it with what the network charged (0 if the fee-bump reached no ledger). */
export interface FeeLease {
  keypair: Keypair;
  end(charged: bigint): void;
}

/** A channel's next sequence number, for one transaction whose source is the channel. */
export interface OwnLease {
  keypair: Keypair;
  seq: bigint;
  /** After tx_bad_seq: re-reads the sequence number from the network and takes the next one. */
  resync(): Promise<void>;
  end(charged: bigint, consumed: boolean): void;
}

export interface ChannelView {
  publicKey: string;
  state: string;
  balance: string;
  available: string;
  sequence: string;
  inFlight: { count: number; fees: string };
}

type AnyChannel = ChannelRef | Actor<typeof channelMachine>;

export interface PoolView {
  network: NetworkName;
  funder: { publicKey: string; balance: string };
  target: number;
  current: number;
  channels: ChannelView[];
  totals: {
    count: number;
    active: number;
    creating: number;
    draining: number;
    balance: string;
    inFlight: { count: number; fees: string };
  };
  lastError: string | null;
}

const sum = (xs: bigint[]) => xs.reduce((a, b) => a + b, 0n);
const unavailable = (message: string, details: Record<string, unknown>) =>
  new RelayError("NETWORK_UNAVAILABLE", message, details, { retryAfter: 2 });

export class ChannelPool {
  readonly network: NetworkName;
  private readonly pool = createActor(poolMachine);
  private funderActor: Actor<typeof channelMachine> | null = null;
  /** Channels merged into the funder (their earlier fees are the relay's: recovery must recognise them). */
  private readonly merged = new Set<string>();
  private readonly keys = new Map<string, Keypair>();
  private target = 0;
  private readonly waiters = new Set<() => void>();
  private reconciling: Promise<void> | null = null;
  private again = false;
  private readonly merging = new Set<string>();
  /** Channels whose createAccount has not confirmed yet (a retired one is merged only after). */
  private readonly unconfirmed = new Set<string>();
  private timer: ReturnType<typeof setInterval> | null = null;
  stopped = false;
  /** Loaded and reconciled once: it can take requests. */
  ready = false;
  /** The last reconcile failure, shown to operators. */
  lastError: string | null = null;

  constructor(private readonly deps: PoolDeps) {
    this.network = deps.network;
    this.pool.start();
  }

  get funder(): string {
    return this.deps.funder.publicKey();
  }

  /** Whether `address` (G...) is one of the relay's own accounts on this network. */
  isRelayAccount(address: string): boolean {
    return address === this.funder || this.keys.has(address) || this.merged.has(address);
  }

  /** An account to simulate a func+auth transaction from: an active channel (the funder while there is none). */
  simulationSource(): string {
    const active = Object.entries(this.pool.getSnapshot().context.channels).find(
      ([, r]) => r.getSnapshot().value === "active",
    );
    return active ? active[0] : this.funder;
  }

  /**
   * Loads the pool from Postgres and the network (balances, sequence numbers), then reconciles
   * once (creating the channels of a new pool) and every few seconds after.
   */
  async start(): Promise<void> {
    const { repo, box, network, log } = this.deps;
    this.target = (await repo.target(network)) ?? this.deps.config.channels;
    const rows = await repo.live(network);
    for (const pk of await repo.merged(network)) this.merged.add(pk);
    for (const r of rows) {
      try {
        this.keys.set(r.publicKey, Keypair.fromSecret(box.open(r.secret, `${network}:${r.publicKey}`)));
      } catch {
        throw new Error(
          `the ${network} channel ${r.publicKey} cannot be decrypted: CHANNEL_ENCRYPTION_KEY is not the key it was sealed with`,
        );
      }
    }
    const accounts = await this.deps.gateway.accounts([this.funder, ...rows.map((r) => r.publicKey)]);
    const funder = accounts.get(this.funder);
    if (!funder)
      throw new Error(`the ${network} funder account ${this.funder} does not exist on the network: fund it first`);
    this.funderActor = createActor(channelMachine, {
      input: {
        publicKey: this.funder,
        balance: funder.balance,
        reserve: funder.reserve,
        seq: funder.seq,
        state: "active",
      },
    }).start();
    const missing = { creating: [] as string[], lost: [] as string[] };
    for (const r of rows) {
      const a = accounts.get(r.publicKey);
      if (!a) {
        (r.state === "creating" ? missing.creating : missing.lost).push(r.publicKey);
        continue;
      }
      this.pool.send({
        type: "ADD",
        channel: {
          publicKey: r.publicKey,
          balance: a.balance,
          reserve: a.reserve,
          seq: a.seq,
          state: r.state === "draining" ? "draining" : "active",
        },
      });
      if (r.state === "creating") await repo.setState(network, [r.publicKey], "active");
    }
    if (missing.creating.length) await repo.remove(network, missing.creating);
    if (missing.lost.length) {
      log.warn({ network, channels: missing.lost }, "channel accounts no longer exist on the network: marked merged");
      await repo.setState(network, missing.lost, "merged");
    }
    for (const pk of [...missing.creating, ...missing.lost]) this.keys.delete(pk);
    this.timer = setInterval(() => this.kick(), RECONCILE_EVERY_MS);
    await this.kick();
    this.ready = true;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    for (const w of this.waiters) w();
  }

  /** The fee source for a fee-bump of up to `fee` stroops: the channel that can best afford it. */
  async assign(fee: bigint): Promise<FeeLease> {
    const id = crypto.randomUUID();
    const pk = await this.until(
      fee,
      async () => (await ask<PoolReply>(this.pool, { type: "ASSIGN", id, fee } as never)).publicKey,
    );
    return {
      keypair: this.keys.get(pk)!,
      end: (charged) => this.toChannel(pk, { type: "RELEASE", id, charged }),
    };
  }

  /** A lease on the channel that signed an earlier fee-bump (to send it again); null when that channel is gone. */
  keep(publicKey: string, fee: bigint): FeeLease | null {
    const keypair = this.keys.get(publicKey);
    if (!keypair || !this.channel(publicKey)) return null;
    const id = crypto.randomUUID();
    this.toChannel(publicKey, { type: "KEEP", id, fee });
    return { keypair, end: (charged) => this.toChannel(publicKey, { type: "RELEASE", id, charged }) };
  }

  /** A channel's next sequence number, for a transaction of fee up to `fee` with the channel as its source. */
  async acquire(fee: bigint): Promise<OwnLease> {
    const id = crypto.randomUUID();
    let seq = 0n;
    const pk = await this.until(fee, async () => {
      const r = await ask<PoolReply>(this.pool, { type: "ACQUIRE", id, fee } as never);
      if (r.publicKey) seq = r.seq!;
      return r.publicKey;
    });
    let badSeq = 0;
    const ref = this.pool.getSnapshot().context.channels[pk]!;
    const lease: OwnLease = {
      keypair: this.keys.get(pk)!,
      seq,
      resync: async () => {
        lease.seq = await this.reseq(ref, id, badSeq++ > 0);
      },
      end: (charged, consumed) => this.toChannel(pk, { type: "DONE", id, charged, consumed }),
    };
    return lease;
  }

  /** Sets the channel count; the reconciler creates or retires channels to reach it. */
  async resize(count: number): Promise<{ current: number; target: number }> {
    await this.deps.repo.setTarget(this.network, count);
    this.target = count;
    void this.kick();
    return { current: this.liveCount(), target: count };
  }

  /** Retires one channel (drain, then merge into the funder); the target drops by one. */
  async retire(publicKey: string): Promise<boolean> {
    const s = this.channel(publicKey);
    if (!s || s.value === "draining") return false;
    this.target = Math.max(0, this.target - 1);
    await this.deps.repo.setTarget(this.network, this.target);
    await this.startDraining([publicKey]);
    void this.kick();
    return true;
  }

  list(): PoolView {
    const channels = Object.entries(this.pool.getSnapshot().context.channels).map(([pk, ref]) => view(pk, ref));
    const count = (state: string) => channels.filter((c) => c.state === state).length;
    return {
      network: this.network,
      funder: { publicKey: this.funder, balance: (this.funderActor?.getSnapshot().context.balance ?? 0n).toString() },
      target: this.target,
      current: this.liveCount(),
      channels,
      totals: {
        count: channels.length,
        active: count("active"),
        creating: count("creating"),
        draining: count("draining"),
        balance: sum(channels.map((c) => BigInt(c.balance))).toString(),
        inFlight: {
          count: channels.reduce((a, c) => a + c.inFlight.count, 0),
          fees: sum(channels.map((c) => BigInt(c.inFlight.fees))).toString(),
        },
      },
      lastError: this.lastError,
    };
  }

  // ---- leases ---------------------------------------------------------------------------------

  /** Tries `pick` until it finds a channel, waiting for changes in the pool up to `waitMs`. */
  private async until(fee: bigint, pick: () => Promise<string | null>): Promise<string> {
    const most = this.deps.config.startingBalance - ACCOUNT_RESERVE;
    if (fee > most)
      throw unavailable(
        `a fee of ${fee} stroops is more than a channel account holds (${most}); raise CHANNEL_STARTING_BALANCE`,
        { network: this.network, fee: fee.toString(), reason: "fee_exceeds_channel_balance" },
      );
    const deadline = Date.now() + this.deps.config.waitMs;
    for (;;) {
      const pk = await pick();
      if (pk) return pk;
      if (this.stopped || Date.now() >= deadline) {
        throw unavailable(`no ${this.network} channel account can pay a fee of ${fee} stroops now`, {
          network: this.network,
          fee: fee.toString(),
          reason: "no_channel_available",
        });
      }
      await this.changed(deadline - Date.now());
    }
  }

  /** Resolves at the next change that may free a channel (or after `ms`). */
  private changed(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(t);
        this.waiters.delete(done);
        resolve();
      };
      const t = setTimeout(done, ms);
      this.waiters.add(done);
    });
  }

  private notify(): void {
    for (const w of [...this.waiters]) w();
  }

  private toChannel(pk: string, event: ChannelEvent): void {
    this.pool.send({ type: "TO", publicKey: pk, event });
    this.notify();
    const s = this.channel(pk);
    if (s && (s.value === "draining" || s.context.balance < this.deps.config.topUpThreshold)) void this.kick();
  }

  private channel(pk: string) {
    return this.pool.getSnapshot().context.channels[pk]?.getSnapshot();
  }

  private liveCount(): number {
    return Object.values(this.pool.getSnapshot().context.channels).filter((r) => r.getSnapshot().value !== "draining")
      .length;
  }

  // ---- reconciler -----------------------------------------------------------------------------

  /** Runs the reconciler (once at a time; a kick during a run runs it again after). */
  kick(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.reconciling) {
      this.again = true;
      return this.reconciling;
    }
    this.reconciling = (async () => {
      do {
        this.again = false;
        try {
          await this.reconcile();
          this.lastError = null;
        } catch (e) {
          this.lastError = e instanceof Error ? e.message : String(e);
          this.deps.log.error({ network: this.network, err: this.lastError }, "channel pool upkeep failed; retrying");
        }
      } while (this.again && !this.stopped);
    })().finally(() => {
      this.reconciling = null;
    });
    return this.reconciling;
  }

  private async reconcile(): Promise<void> {
    const channels = this.pool.getSnapshot().context.channels;
    const snaps = Object.entries(channels).map(([pk, ref]) => ({ pk, s: ref.getSnapshot() }));
    const live = snaps.filter((c) => c.s.value === "active" || c.s.value === "creating");
    if (live.length > this.target) {
      // retire the channels with the least in flight first
      const retire = live
        .filter((c) => c.s.value === "active")
        .sort((a, b) => Object.keys(a.s.context.holds).length - Object.keys(b.s.context.holds).length);
      await this.startDraining(retire.slice(0, live.length - this.target).map((c) => c.pk));
      this.again = true; // the next pass merges those that are idle already
    }
    for (const c of snaps) {
      if (
        c.s.value === "draining" &&
        c.s.context.own === null &&
        Object.keys(c.s.context.holds).length === 0 &&
        !this.merging.has(c.pk) &&
        !this.unconfirmed.has(c.pk)
      ) {
        this.merging.add(c.pk);
        void this.merge(c.pk).finally(() => this.merging.delete(c.pk));
      }
    }
    if (live.length < this.target) await this.create(this.target - live.length);
    const low = snaps.filter((c) => c.s.value === "active" && c.s.context.balance < this.deps.config.topUpThreshold);
    if (low.length) await this.topUp(low.map((c) => c.pk));
  }

  private async startDraining(pks: string[]): Promise<void> {
    if (!pks.length) return;
    await this.deps.repo.setState(this.network, pks, "draining");
    for (const pk of pks) this.pool.send({ type: "TO", publicKey: pk, event: { type: "RETIRE" } });
  }

  /** Creates `n` channels: keys sealed in Postgres first (state creating), then createAccount from the funder, up to 100 per transaction. */
  private async create(n: number): Promise<void> {
    const { repo, box, network, config } = this.deps;
    for (let left = n; left > 0; left -= MAX_OPS_PER_TX) {
      const batch = Array.from({ length: Math.min(left, MAX_OPS_PER_TX) }, () => Keypair.random());
      await repo.insert(
        batch.map((kp) => ({
          network,
          publicKey: kp.publicKey(),
          secret: box.seal(kp.secret(), `${network}:${kp.publicKey()}`),
          state: "creating" as const,
        })),
      );
      for (const kp of batch) {
        this.keys.set(kp.publicKey(), kp);
        this.pool.send({
          type: "ADD",
          channel: { publicKey: kp.publicKey(), balance: 0n, reserve: ACCOUNT_RESERVE, seq: 0n, state: "creating" },
        });
      }
      const pks = batch.map((kp) => kp.publicKey());
      for (const pk of pks) this.unconfirmed.add(pk);
      let c: Confirmed;
      try {
        c = await this.runOwn(
          this.funderActor!,
          this.deps.funder,
          batch.map((kp) =>
            Operation.createAccount({
              destination: kp.publicKey(),
              startingBalance: formatXlm(config.startingBalance),
            }),
          ),
          "create channels",
        );
      } catch (e) {
        await repo.remove(network, pks);
        for (const pk of pks) {
          this.pool.send({ type: "REMOVE", publicKey: pk });
          this.keys.delete(pk);
          this.unconfirmed.delete(pk);
        }
        throw e;
      }
      // a channel retired while it was being created stays draining (and is merged next)
      await repo.setState(
        network,
        pks.filter((pk) => this.channel(pk)?.value === "creating"),
        "active",
      );
      await this.resync(this.funder);
      // a new account's sequence number is the creating ledger's sequence << 32
      for (const pk of pks) {
        this.pool.send({
          type: "TO",
          publicKey: pk,
          event: { type: "ACTIVATE", balance: config.startingBalance, seq: BigInt(c.ledger) << 32n },
        });
        this.unconfirmed.delete(pk);
      }
      this.deps.log.info({ network, created: pks.length, ledger: c.ledger }, "channel accounts created");
      this.notify();
    }
  }

  /** Merges a drained channel into the funder. */
  private async merge(pk: string): Promise<void> {
    const ref = this.pool.getSnapshot().context.channels[pk];
    if (!ref) return;
    try {
      await this.runOwn(
        ref,
        this.keys.get(pk)!,
        [Operation.accountMerge({ destination: this.funder })],
        "merge a channel",
        true,
      );
    } catch (e) {
      // merged already (by an earlier run whose answer was lost)?
      if ((await this.deps.gateway.accounts([pk])).has(pk)) {
        this.lastError = e instanceof Error ? e.message : String(e);
        this.deps.log.error(
          { network: this.network, channel: pk, err: this.lastError },
          "merging a channel failed; retrying",
        );
        return;
      }
    }
    await this.deps.repo.setState(this.network, [pk], "merged");
    this.pool.send({ type: "REMOVE", publicKey: pk });
    this.keys.delete(pk);
    this.merged.add(pk);
    await this.resync(this.funder);
    this.deps.log.info({ network: this.network, channel: pk }, "channel merged into the funder");
  }

  /** Tops up low channels to the starting balance, one funder transaction for up to 100 channels. */
  private async topUp(pks: string[]): Promise<void> {
    for (let i = 0; i < pks.length; i += MAX_OPS_PER_TX) {
      const batch = pks
        .slice(i, i + MAX_OPS_PER_TX)
        .map((pk) => ({ pk, amount: this.deps.config.startingBalance - this.channel(pk)!.context.balance }))
        .filter((b) => b.amount > 0n);
      if (!batch.length) continue;
      await this.runOwn(
        this.funderActor!,
        this.deps.funder,
        batch.map((b) => Operation.payment({ destination: b.pk, asset: Asset.native(), amount: formatXlm(b.amount) })),
        "top up channels",
      );
      for (const b of batch) this.toChannel(b.pk, { type: "CREDIT", amount: b.amount });
      await this.resync(this.funder);
      this.deps.log.info({ network: this.network, channels: batch.length }, "channel accounts topped up");
    }
  }

  // ---- own transactions -----------------------------------------------------------------------

  /**
   * Runs a transaction whose source is the actor's account: takes its next sequence number (one
   * pending transaction per source: waits while another runs), sends, waits for the ledger,
   * recovers from tx_bad_seq by re-reading the sequence number, raises the fee on tx_insufficient_fee.
   */
  private async runOwn(
    actor: AnyChannel,
    kp: Keypair,
    ops: xdr.Operation[],
    what: string,
    internal = false,
  ): Promise<Confirmed> {
    const gw = this.deps.gateway;
    let rate = await gw.feeRate(this.deps.config.feePercentile, false).catch(() => BASE_FEE);
    if (rate < BASE_FEE) rate = BASE_FEE;
    const maxRate = rate * 8n; // up to three doublings on tx_insufficient_fee
    const deadline = Date.now() + INTERNAL_TIMEOUT_MS;
    const id = crypto.randomUUID();
    const fee = maxRate * BigInt(ops.length);
    let seq: bigint;
    for (;;) {
      const r = await ask<ChannelReply>(actor, { type: "TAKE", id, fee, internal } as never);
      if (r.ok) {
        seq = r.seq!;
        break;
      }
      if (r.reason !== "busy" || Date.now() > deadline || this.stopped)
        throw new Error(`${what}: ${kp.publicKey()} cannot take a transaction (${r.reason})`);
      await this.changed(Math.max(1, deadline - Date.now()));
    }
    let charged = 0n;
    let consumed = false;
    let badSeq = 0;
    try {
      for (let attempt = 0; attempt < 8; attempt++) {
        const builder = new TransactionBuilder(new Account(kp.publicKey(), (seq - 1n).toString()), {
          fee: rate.toString(),
          networkPassphrase: gw.passphrase,
        });
        for (const op of ops) builder.addOperation(op);
        const tx: Transaction = builder.setTimeout(120).build();
        tx.sign(kp);
        const hash = Buffer.from(tx.hash()).toString("hex");
        const watch = gw.watcher.watch(hash, Math.max(1, deadline - Date.now()));
        const sent = await gw.send(tx).catch((e) => {
          watch.cancel();
          throw e;
        });
        if (sent.status === "PENDING" || sent.status === "DUPLICATE") {
          const c = await watch.promise;
          consumed = true; // unknown after a timeout: counted as spent (a later tx_bad_seq re-reads it)
          if (!c) throw new Error(`${what}: no confirmation of ${hash}`);
          charged = c.feeCharged;
          if (!c.successful)
            throw new Error(`${what}: the network rejected ${hash}: ${JSON.stringify(clientResultCodes(c.resultXdr))}`);
          return c;
        }
        watch.cancel();
        if (sent.status === "TRY_AGAIN_LATER") {
          await Bun.sleep(250);
          continue;
        }
        const codes = clientResultCodes(sent.errorResultXdr!);
        if (codes.network === "tx_bad_seq") {
          seq = await this.reseq(actor, id, badSeq++ > 0);
          continue;
        }
        if (codes.network === "tx_insufficient_fee" && rate < maxRate) {
          rate *= 2n;
          continue;
        }
        throw new Error(`${what}: the network rejected the transaction: ${JSON.stringify(codes)}`);
      }
      throw new Error(`${what}: gave up after repeated retries`);
    } finally {
      actor.send({ type: "DONE", id, charged, consumed });
      this.notify();
    }
  }

  /** After tx_bad_seq: re-reads the account's sequence number; answers the number the pending transaction `id` uses now. */
  private async reseq(actor: AnyChannel, id: string, allowLower: boolean): Promise<bigint> {
    const pk = actor.getSnapshot().context.publicKey;
    const a = (await this.deps.gateway.accounts([pk])).get(pk);
    if (a) actor.send({ type: "RESEQ", id, seq: a.seq, allowLower });
    this.deps.log.warn(
      { network: this.network, account: pk, networkSeq: a?.seq.toString() },
      "tx_bad_seq: sequence number re-read from the network",
    );
    return actor.getSnapshot().context.seq;
  }

  /** Re-reads an account's balance (and its sequence number, raise-only). */
  private async resync(pk: string): Promise<void> {
    const actor = pk === this.funder ? this.funderActor : this.pool.getSnapshot().context.channels[pk];
    const a = (await this.deps.gateway.accounts([pk])).get(pk);
    if (!actor || !a) return;
    actor.send({ type: "SYNC", balance: a.balance, seq: a.seq });
    this.notify();
  }
}

function view(pk: string, ref: ChannelRef): ChannelView {
  const s = ref.getSnapshot();
  const holds = Object.values(s.context.holds);
  return {
    publicKey: pk,
    state: String(s.value),
    balance: s.context.balance.toString(),
    available: (s.value === "creating" ? 0n : available(s.context)).toString(),
    sequence: s.context.seq.toString(),
    inFlight: { count: holds.length, fees: sum(holds).toString() },
  };
}
