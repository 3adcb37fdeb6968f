/**
 * The channel-account pool of one network: loads the channels (keys sealed at rest, balances and
 * sequence numbers from the network), hands out leases to sponsor requests (leases.ts) and keeps
 * the pool at its target with the reconciler (reconciler.ts), every few seconds and on a change.
 */
import type { Keypair } from "@stellar/stellar-sdk";
import { TokenKeypair } from "../../stellar/token-keypair.ts";

/** How a key signs: from its seed, sealed in the database, or in a PKCS#11 token (its label). */
export type KeySigner = { kind: "seed" | "sealed" } | { kind: "pkcs11"; token: string };
import { createActor } from "xstate";
import { channelMachine } from "../../../actors/pool/channel.machine.ts";
import type { PoolView } from "./pool.model.ts";
import type { NetworkName } from "../../stellar/networks.ts";
import { AccountSync } from "./account-sync.ts";
import { Channels } from "./channels.ts";
import { type ChannelWait, type FeeLease, Leases, type OwnLease } from "./leases.ts";
import { PoolDemand } from "./demand.ts";
import { RefusalLog, shortage } from "./shortage.ts";
import type { PoolDeps, PoolNotice } from "./pool-deps.ts";
import { ACCOUNT_RESERVE, Reconciler, type SharedChannels } from "./reconciler.ts";
import { Ownership } from "./ownership.ts";
import { countsOf, heldChannel, type HeldChannel, wholePool } from "./pool-view.ts";
import type { ChannelRow } from "../../store/channels.repo.ts";

export type { FeeLease, OwnLease } from "./leases.ts";
export type { PoolConfig, PoolDeps, PoolNotice } from "./pool-deps.ts";

const RECONCILE_EVERY_MS = 5_000;
/** No request waited this long: the channels added for demand are retired. */
const DEFAULT_IDLE_MS = 60_000;

const sum = (xs: bigint[]) => xs.reduce((a, b) => a + b, 0n);

export class ChannelPool {
  readonly network: NetworkName;
  private readonly channels: Channels;
  private readonly sync: AccountSync;
  private readonly leases: Leases;
  private readonly reconciler: Reconciler;
  private readonly ownership: Ownership | null = null;
  private target = 0;
  private readonly demand: PoolDemand;
  private timer: ReturnType<typeof setInterval> | null = null;
  stopped = false;
  /** Loaded and reconciled once: it can take requests. */
  ready = false;

  /** Requests refused for want of a channel, logged at most every 10 s. */
  private readonly refusals: RefusalLog;

  constructor(private readonly deps: PoolDeps) {
    this.network = deps.network;
    this.channels = new Channels(deps.funder);
    this.sync = new AccountSync(this.channels, deps.gateway, deps.log);
    this.refusals = new RefusalLog(deps.network, deps.log);
    this.demand = new PoolDemand(deps.config.idleMs ?? DEFAULT_IDLE_MS, deps.config.max ?? deps.config.channels);
    this.leases = new Leases(this.channels, this.sync, {
      network: deps.network,
      most: deps.config.startingBalance - ACCOUNT_RESERVE,
      waitMs: deps.config.waitMs,
      stopped: () => this.stopped,
      exhausted: (fee) => this.refusals.refused(fee, this.wanted),
      shortage: (fee, own, waiting) =>
        shortage(this.channels, deps.network, fee, own, waiting, deps.config.startingBalance),
      waitEnded: (outcome, ms) => deps.metrics?.channelWait(deps.network, outcome, ms / 1000),
      waited: () => {
        if (this.demand.waited(this.target)) void this.kick(); // channels for the waiting requests, at once
      },
      upkeep: (pk) => {
        const s = this.channels.channel(pk);
        if (s && (s.value === "draining" || s.context.balance < deps.config.topUpThreshold)) void this.kick();
      },
    });
    const cluster = deps.cluster;
    if (cluster) {
      this.ownership = new Ownership({
        ...deps,
        cluster: cluster.coordination,
        channels: this.channels,
        key: (r) => this.unseal(r),
        changed: (upkeep) => {
          if (upkeep) void this.kick();
        },
      });
    }
    const shared: SharedChannels | undefined =
      cluster && this.ownership
        ? {
            rows: () => deps.repo.live(deps.network),
            take: (pk) => this.ownership!.take(pk),
            credited: (publicKey, amount) =>
              cluster.tell({ topic: "channel-credit", network: deps.network, publicKey, amount: amount.toString() }),
          }
        : undefined;
    this.reconciler = new Reconciler({
      ...deps,
      channels: this.channels,
      sync: this.sync,
      target: () => this.wanted,
      stopped: () => this.stopped,
      shared,
    });
  }

  /** The channels the pool should have now: the operator's count, and more while requests wait (demand.ts). */
  get wanted(): number {
    return this.demand.wanted(this.target);
  }

  /** Sets the most channels demand may grow the pool to (the admin API's; kept in Postgres, told to the others). */
  async setMaximum(max: number): Promise<void> {
    await this.deps.repo.setMaximum(this.network, this.target, max);
    this.demand.setMaximum(max);
    await this.deps.cluster?.tell({ topic: "pool", network: this.network });
    void this.kick();
  }

  /** Whether this instance runs the network's upkeep (and recovery): the only one, or the elected one. */
  get leads(): boolean {
    return !this.ownership || this.ownership.upkeep;
  }

  /** This instance's id among several (null: the only one). */
  get instance(): string | null {
    return this.deps.cluster?.coordination.id ?? null;
  }

  /** A channel's key (opened once); null if it cannot be (another CHANNEL_ENCRYPTION_KEY, not in the token). */
  private unseal(r: ChannelRow): Keypair | null {
    const known = this.channels.keys.get(r.publicKey);
    if (known) return known;
    try {
      const kp = this.deps.keys.open(this.network, r);
      this.channels.keys.set(r.publicKey, kp);
      return kp;
    } catch (e) {
      const err = e instanceof Error ? e.message : String(e);
      this.deps.log.error({ network: this.network, channel: r.publicKey, err }, "a channel key cannot be opened");
      return null;
    }
  }

  /** Applies another instance's change: a new target (the upkeep holder acts on it), a top-up of a channel held here. */
  async applyNotice(n: PoolNotice): Promise<void> {
    if (n.topic === "pool") {
      this.target = (await this.deps.repo.target(this.network)) ?? this.target;
      const max = await this.deps.repo.maximum(this.network);
      if (max !== null) this.demand.setMaximum(max);
      void this.kick();
    } else if (this.channels.refs()[n.publicKey]) {
      this.channels.send(n.publicKey, { type: "CREDIT", amount: BigInt(n.amount) });
    }
  }

  get funder(): string {
    return this.deps.funder.publicKey();
  }

  /** What signs: the funder (its seed, or a PKCS#11 token) and new channels (sealed keys, or a token's). */
  get signer(): { funder: KeySigner; channels: KeySigner } {
    const f = this.deps.funder;
    const k = this.deps.keys;
    return {
      funder: f instanceof TokenKeypair ? { kind: "pkcs11", token: f.token.label } : { kind: "seed" },
      channels: k.kind === "pkcs11" ? { kind: "pkcs11", token: k.tokenLabel! } : { kind: "sealed" },
    };
  }

  /** The last failure to start or reconcile, shown to operators. */
  get lastError(): string | null {
    return this.reconciler.lastError;
  }

  set lastError(message: string | null) {
    this.reconciler.lastError = message;
  }

  /** Whether `address` (G...) is one of the relay's own accounts on this network. */
  isRelayAccount(address: string): boolean {
    return this.channels.isRelayAccount(address);
  }

  /** An account to simulate a func+auth transaction from: an active channel (the funder while there is none). */
  simulationSource(): string {
    const active = Object.entries(this.channels.refs()).find(([, r]) => r.getSnapshot().value === "active");
    return active ? active[0] : this.funder;
  }

  assign(fee: bigint, wait?: ChannelWait): Promise<FeeLease> {
    return this.leases.assign(fee, wait);
  }

  keep(publicKey: string, fee: bigint): FeeLease | null {
    return this.leases.keep(publicKey, fee);
  }

  acquire(fee: bigint, wait?: ChannelWait): Promise<OwnLease> {
    return this.leases.acquire(fee, wait);
  }

  /** Runs the upkeep (with several instances, only on the one holding the network's upkeep). */
  kick(): Promise<void> {
    if (this.ownership && !this.ownership.upkeep) return Promise.resolve();
    return this.reconciler.kick();
  }

  /**
   * Loads the pool from Postgres and the network (balances, sequence numbers), then reconciles
   * once (creating the channels of a new pool) and every few seconds after.
   */
  async start(): Promise<void> {
    const { repo, keys, network, log } = this.deps;
    const { channels } = this;
    this.target = (await repo.target(network)) ?? this.deps.config.channels;
    const max = await repo.maximum(network);
    if (max !== null) this.demand.setMaximum(max);
    const rows = await repo.live(network);
    for (const pk of await repo.merged(network)) channels.merged.add(pk);
    for (const r of rows) channels.keys.set(r.publicKey, keys.open(network, r));
    if (this.ownership) return await this.startShared();
    const accounts = await this.deps.gateway.accounts([this.funder, ...rows.map((r) => r.publicKey)]);
    const funder = accounts.get(this.funder);
    if (!funder)
      throw new Error(`the ${network} funder account ${this.funder} does not exist on the network: fund it first`);
    channels.funderActor = createActor(channelMachine, {
      input: { publicKey: this.funder, ...funder, state: "active" },
    }).start();
    const missing = { creating: [] as string[], lost: [] as string[] };
    for (const r of rows) {
      const a = accounts.get(r.publicKey);
      if (!a) {
        (r.state === "creating" ? missing.creating : missing.lost).push(r.publicKey);
        continue;
      }
      const state = r.state === "draining" ? "draining" : "active";
      channels.pool.send({ type: "ADD", channel: { publicKey: r.publicKey, ...a, state } });
      if (r.state === "creating") await repo.setState(network, [r.publicKey], "active");
    }
    if (missing.creating.length) await repo.remove(network, missing.creating);
    if (missing.lost.length) {
      log.warn({ network, channels: missing.lost }, "channel accounts no longer exist on the network: marked merged");
      await repo.setState(network, missing.lost, "merged");
    }
    for (const pk of [...missing.creating, ...missing.lost]) channels.keys.delete(pk);
    if (this.stopped) return; // stopped while starting (a relay whose start was called off)
    this.timer = setInterval(() => this.kick(), RECONCILE_EVERY_MS);
    await this.kick();
    this.ready = true;
  }

  /** Several instances: the funder's account, then the channels this instance takes in its first round. */
  private async startShared(): Promise<void> {
    const funder = (await this.deps.gateway.accounts([this.funder])).get(this.funder);
    if (!funder)
      throw new Error(`the ${this.network} funder account ${this.funder} does not exist on the network: fund it first`);
    this.channels.funderActor = createActor(channelMachine, {
      input: { publicKey: this.funder, ...funder, state: "active" },
    }).start();
    await this.ownership!.start();
    if (this.stopped) return;
    this.timer = setInterval(() => this.kick(), RECONCILE_EVERY_MS);
    await this.kick();
    this.ready = true;
  }

  /** Stops the upkeep; with several instances, lets this one's channels go (the others take them at once). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.channels.notify();
    await this.ownership?.stop();
  }

  /** Sets the channel count; the reconciler creates or retires channels to reach it. */
  async resize(count: number): Promise<{ current: number; target: number }> {
    await this.deps.repo.setTarget(this.network, count);
    this.target = count;
    await this.deps.cluster?.tell({ topic: "pool", network: this.network });
    void this.kick();
    return { current: this.channels.liveCount(), target: count };
  }

  /** Retires one channel (drain, then merge into the funder); the target drops by one. */
  async retire(publicKey: string): Promise<boolean> {
    const s = this.channels.channel(publicKey);
    if (!s && this.ownership) return await this.retireElsewhere(publicKey);
    if (!s || s.value === "draining") return false;
    this.target = Math.max(0, this.target - 1);
    await this.deps.repo.setTarget(this.network, this.target);
    await this.reconciler.drain([publicKey]);
    void this.kick();
    return true;
  }

  /** Retires a channel another instance holds: draining in Postgres (its holder lets it go once idle). */
  private async retireElsewhere(publicKey: string): Promise<boolean> {
    const row = (await this.deps.repo.live(this.network)).find((r) => r.publicKey === publicKey);
    if (row?.state !== "active") return false;
    await this.deps.repo.setState(this.network, [publicKey], "draining");
    this.target = Math.max(0, ((await this.deps.repo.target(this.network)) ?? this.target) - 1);
    await this.deps.repo.setTarget(this.network, this.target);
    await this.deps.cluster?.tell({ topic: "pool", network: this.network });
    return true;
  }

  /** Every channel of the network, whichever instance holds it (pool-view.ts). */
  async whole(): Promise<PoolView> {
    const c = this.deps.cluster?.coordination;
    if (!c) return this.list();
    const { network, repo, gateway } = this.deps;
    const signerOf = (row: { secret: string }) => this.deps.keys.kindOf(row);
    return await wholePool(this.list(), { network, repo, gateway, holders: (names) => c.holders(names), signerOf });
  }

  /** The channels this instance holds. */
  list(): Omit<PoolView, "channels"> & { channels: HeldChannel[] } {
    const holder = this.instance;
    const signer = (pk: string) => (this.channels.keys.get(pk) instanceof TokenKeypair ? "pkcs11" : "sealed");
    const channels = Object.entries(this.channels.refs()).map(([pk, ref]) => heldChannel(pk, ref, holder, signer(pk)));
    const funderBalance = this.channels.funderActor?.getSnapshot().context.balance ?? 0n;
    return {
      network: this.network,
      instance: this.instance,
      funder: {
        publicKey: this.funder,
        balance: funderBalance.toString(),
        signer: this.deps.funder instanceof TokenKeypair ? "pkcs11" : "seed",
      },
      target: this.wanted,
      max: this.demand.maximum(this.target),
      waiting: this.leases.waitingCount,
      current: this.channels.liveCount(),
      channels,
      totals: {
        ...countsOf(channels),
        inFlight: {
          count: channels.reduce((a, c) => a + c.inFlight.count, 0),
          fees: sum(channels.map((c) => BigInt(c.inFlight.fees))).toString(),
        },
      },
      lastError: this.lastError,
    };
  }
}
