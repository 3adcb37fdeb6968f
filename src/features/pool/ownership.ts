/**
 * Several instances, one set of channel accounts: each channel is held by one instance at a time
 * (a lease in Redis, renewed while the instance lives), and an instance signs only with the
 * channels it holds (only those are in its pool). Every round (a third of the lease TTL) an
 * instance renews its leases, drops those it lost, reads the channels from Postgres, and takes
 * free ones up to its fair share (the active channels divided by the live instances), or lets
 * idle ones go above it, so that a dead instance's channels are adopted within one TTL and a
 * round, and a new instance gets its share. The upkeep (creating, retiring, merging, topping up)
 * runs on the instance holding the network's upkeep lease; channels to merge move to it: their
 * holder lets them go once idle, and the upkeep holder takes them.
 */
import type { Keypair } from "@stellar/stellar-sdk";
import type { Logger } from "../../kernel/log.ts";
import type { Gateway } from "../../network/gateway.ts";
import type { NetworkName } from "../../stellar/networks.ts";
import type { ChannelRow, ChannelsRepo } from "../../store/channels.repo.ts";
import type { Channels } from "./channels.ts";
import { idle } from "../../../actors/pool/channel.machine.ts";
import { channelLease } from "./pool-view.ts";

/** The coordination an instance needs (src/store/cluster.ts). */
export interface Coordination {
  readonly id: string;
  readonly leaseMs: number;
  heartbeat(): Promise<string[]>;
  claim(name: string): Promise<boolean>;
  renew(names: string[]): Promise<Set<string>>;
  release(name: string): Promise<void>;
  /** The instances holding the leases `names` (null: free). */
  holders(names: string[]): Promise<(string | null)[]>;
}

export interface OwnershipDeps {
  network: NetworkName;
  cluster: Coordination;
  channels: Channels;
  repo: ChannelsRepo;
  gateway: Gateway;
  log: Logger;
  /** A channel's key, unsealed and kept with the pool's keys (null: it cannot be; the channel is not taken). */
  key(row: ChannelRow): Keypair | null;
  /** Called when this instance became (or stopped being) the upkeep holder, and after each round. */
  changed(upkeep: boolean, rows: ChannelRow[]): void;
}

export class Ownership {
  /** Whether this instance holds the network's upkeep (creating, retiring, merging, topping up). */
  upkeep = false;
  private timer: ReturnType<typeof setInterval> | null = null;
  private stopped = false;
  private running: Promise<void> | null = null;

  constructor(private readonly deps: OwnershipDeps) {}

  private lease(pk: string): string {
    return channelLease(this.deps.network, pk);
  }

  /** One round now, then one every third of the lease TTL. */
  async start(): Promise<void> {
    await this.round();
    this.timer = setInterval(() => void this.round(), Math.max(100, Math.floor(this.deps.cluster.leaseMs / 3)));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
    const { channels, cluster } = this.deps;
    await Promise.all(
      [`upkeep:${this.deps.network}`, ...Object.keys(channels.refs()).map((pk) => this.lease(pk))].map((n) =>
        cluster.release(n).catch(() => {}),
      ),
    );
  }

  /** One round at a time; a failed round (Redis or Postgres not answering) is logged and the next one retries. */
  round(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    this.running ??= this.run()
      .catch((e) => {
        if (!this.stopped)
          this.deps.log.error({ network: this.deps.network, err: String(e) }, "channel ownership round failed");
      })
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }

  private async run(): Promise<void> {
    const { cluster, channels, repo, network, log } = this.deps;
    const members = await cluster.heartbeat();
    const mine = Object.keys(channels.refs());
    const kept = await cluster.renew(mine.map((pk) => this.lease(pk)));
    for (const pk of mine) {
      if (kept.has(this.lease(pk))) continue;
      // another instance holds it now: this one stops signing with it
      log.error({ network, channel: pk }, "lost the lease of a channel account: no longer used here");
      channels.pool.send({ type: "REMOVE", publicKey: pk });
    }
    const wasUpkeep = this.upkeep;
    this.upkeep = await cluster.claim(`upkeep:${network}`);
    const rows = await repo.live(network);
    const byKey = new Map(rows.map((r) => [r.publicKey, r]));
    for (const [pk, ref] of Object.entries(channels.refs())) {
      const row = byKey.get(pk);
      const s = ref.getSnapshot();
      if (row?.state === "draining" && s.value === "active") channels.send(pk, { type: "RETIRE" });
      // a draining channel is merged by the upkeep holder: once idle, let it go
      if (!this.upkeep && (row?.state === "draining" || s.value === "draining") && idle(s.context))
        await this.letGo(pk);
    }
    await this.balance(rows, members.length);
    this.deps.changed(this.upkeep, rows);
    if (this.upkeep !== wasUpkeep) log.info({ network, upkeep: this.upkeep, instance: cluster.id }, "channel upkeep");
  }

  /** Takes free channels up to the fair share (and, as the upkeep holder, the draining ones); lets idle extras go. */
  private async balance(rows: ChannelRow[], members: number): Promise<void> {
    const { channels } = this.deps;
    const active = rows.filter((r) => r.state === "active");
    const fair = Math.ceil(active.length / Math.max(1, members));
    const held = () => Object.values(channels.refs()).filter((r) => r.getSnapshot().value === "active").length;
    const wanted = rows.filter(
      (r) => !channels.refs()[r.publicKey] && (r.state === "active" || (this.upkeep && r.state === "draining")),
    );
    shuffle(wanted); // instances starting together do not all ask for the same ones first
    const taken: ChannelRow[] = [];
    let count = held();
    for (const r of wanted) {
      if (r.state === "active" && count >= fair) continue;
      if (!(await this.deps.cluster.claim(this.lease(r.publicKey)))) continue;
      taken.push(r);
      if (r.state === "active") count++;
    }
    if (taken.length) await this.adopt(taken);
    for (const [pk, ref] of Object.entries(channels.refs())) {
      if (held() <= fair) break;
      const s = ref.getSnapshot();
      if (s.value === "active" && idle(s.context)) await this.letGo(pk);
    }
  }

  /** Adds channels just taken to the pool, with their balances and sequence numbers from the network. */
  private async adopt(rows: ChannelRow[]): Promise<void> {
    const { channels, gateway, network, log, cluster } = this.deps;
    const accounts = await gateway.accounts(rows.map((r) => r.publicKey));
    for (const r of rows) {
      const a = accounts.get(r.publicKey);
      const kp = this.deps.key(r);
      if (!a || !kp) {
        await cluster.release(this.lease(r.publicKey));
        continue;
      }
      const state = r.state === "draining" ? "draining" : "active";
      channels.pool.send({ type: "ADD", channel: { publicKey: r.publicKey, ...a, state } });
    }
    channels.notify();
    log.info({ network, channels: rows.length, instance: cluster.id }, "channel accounts taken");
  }

  private async letGo(pk: string): Promise<void> {
    this.deps.channels.pool.send({ type: "REMOVE", publicKey: pk });
    await this.deps.cluster.release(this.lease(pk));
  }

  /** Takes a channel this instance just created (before it is added to the pool). */
  take(pk: string): Promise<boolean> {
    return this.deps.cluster.claim(this.lease(pk));
  }
}

function shuffle<T>(xs: T[]): void {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [xs[i], xs[j]] = [xs[j]!, xs[i]!];
  }
}
