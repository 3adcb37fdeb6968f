/**
 * The reconciler keeps a pool at its target: it creates channels up to it (createAccount from the
 * funder, up to 100 per transaction; keys sealed in Postgres first), drains and merges channels
 * beyond it (accountMerge into the funder), and tops up channels that run low (payments from the
 * funder). One run at a time; a kick during a run runs it again after. Its transactions go through
 * the network's submitter like any other.
 */
import { Account, Asset, type Keypair, Operation, TransactionBuilder, type xdr } from "@stellar/stellar-sdk";
import { idle, type ChannelReply } from "../../../actors/pool/channel.machine.ts";
import { ask } from "../../../actors/ask.ts";
import type { PoolDeps } from "./pool-deps.ts";
import { signTx } from "../../stellar/sign.ts";
import { signedOf } from "../../stellar/envelope.ts";
import { BASE_FEE, BASE_RESERVE } from "../../stellar/protocol.ts";
import type { Confirmed } from "../../network/ledger-watcher.ts";
import { formatXlm } from "../../stellar/amount.ts";
import { clientResultCodes } from "../../stellar/result-codes.ts";
import { MAX_OPS_PER_TX } from "../tx/decode.ts";
import type { AccountSync } from "./account-sync.ts";
import type { AnyChannel, Channels } from "./channels.ts";
import type { ChannelRow } from "../../store/channels.repo.ts";
import { drive } from "../tx/submit-steps.ts";

export const ACCOUNT_RESERVE = 2n * BASE_RESERVE;
const INTERNAL_TIMEOUT_MS = 60_000;
/** The pool's own transactions bid up to 8x the network's rate (three doublings on tx_insufficient_fee). */
const OWN_RATE_CAP = 8n;
const OWN_TX_TIMEOUT_SECONDS = 120;

/**
 * Several instances: the upkeep holder counts every instance's channels (Postgres), retires others'
 * by marking them draining (their holder lets them go once idle, and this one merges them), tops
 * up others' low channels (and tells their holder), and takes the channels it creates.
 */
export interface SharedChannels {
  rows(): Promise<ChannelRow[]>;
  take(pk: string): Promise<boolean>;
  credited(pk: string, amount: bigint): Promise<void>;
}

/** The pool's dependencies, its channels and account reader, and its target count. */
export interface ReconcilerDeps extends PoolDeps {
  channels: Channels;
  sync: AccountSync;
  target(): number;
  stopped(): boolean;
  shared?: SharedChannels;
}

export class Reconciler {
  private running: Promise<void> | null = null;
  private again = false;
  private readonly merging = new Set<string>();
  /** Channels whose createAccount has not confirmed yet (a retired one is merged only after). */
  private readonly unconfirmed = new Set<string>();
  /** The last failure, shown to operators. */
  lastError: string | null = null;

  constructor(private readonly deps: ReconcilerDeps) {}

  /** Runs the reconciler (once at a time; a kick during a run runs it again after). */
  kick(): Promise<void> {
    if (this.deps.stopped()) return Promise.resolve();
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        try {
          await this.reconcile();
          this.lastError = null;
        } catch (e) {
          this.lastError = e instanceof Error ? e.message : String(e);
          this.deps.log.error(
            { network: this.deps.network, err: this.lastError },
            "channel pool upkeep failed; retrying",
          );
        }
      } while (this.again && !this.deps.stopped());
    })().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /** Marks channels draining (in Postgres, then their actors): they are merged once idle. */
  async drain(pks: string[]): Promise<void> {
    if (!pks.length) return;
    await this.deps.repo.setState(this.deps.network, pks, "draining");
    for (const pk of pks) this.deps.channels.send(pk, { type: "RETIRE" });
  }

  private async reconcile(): Promise<void> {
    const target = this.deps.target();
    const snaps = Object.entries(this.deps.channels.refs()).map(([pk, ref]) => ({ pk, s: ref.getSnapshot() }));
    const live = snaps.filter((c) => c.s.value === "active" || c.s.value === "creating");
    const rows = (await this.deps.shared?.rows()) ?? null;
    const elsewhere = rows?.filter((r) => !this.deps.channels.refs()[r.publicKey]) ?? [];
    await this.settleCreating(elsewhere);
    const liveCount = live.length + elsewhere.filter((r) => r.state === "active" || r.state === "creating").length;
    if (liveCount > target) {
      // retire the channels with the least in flight first; then other instances' (their holders let them go)
      const retire = live
        .filter((c) => c.s.value === "active")
        .sort((a, b) => a.s.context.holds.size - b.s.context.holds.size)
        .slice(0, liveCount - target)
        .map((c) => c.pk);
      await this.drain(retire);
      const others = elsewhere.filter((r) => r.state === "active").slice(0, liveCount - target - retire.length);
      if (others.length)
        await this.deps.repo.setState(
          this.deps.network,
          others.map((r) => r.publicKey),
          "draining",
        );
      this.again = true; // the next pass merges those that are idle already
    }
    for (const c of snaps) {
      if (c.s.value === "draining" && idle(c.s.context) && !this.merging.has(c.pk) && !this.unconfirmed.has(c.pk)) {
        this.merging.add(c.pk);
        void this.merge(c.pk).finally(() => this.merging.delete(c.pk));
      }
    }
    if (liveCount < target) await this.create(target - liveCount);
    const low = snaps
      .filter((c) => c.s.value === "active" && c.s.context.balance < this.deps.config.topUpThreshold)
      .map((c) => ({ pk: c.pk, balance: c.s.context.balance }));
    if (rows) low.push(...(await this.lowElsewhere(elsewhere)));
    if (low.length) await this.topUp(low);
  }

  /**
   * Channels an earlier upkeep holder left creating (it died before the network answered): active
   * if the network has the account, removed if not. Only the upkeep holder creates channels.
   */
  private async settleCreating(rows: ChannelRow[]): Promise<void> {
    const creating = rows.filter((r) => r.state === "creating").map((r) => r.publicKey);
    if (!creating.length) return;
    const accounts = await this.deps.gateway.accounts(creating);
    const [exist, gone] = [creating.filter((pk) => accounts.has(pk)), creating.filter((pk) => !accounts.has(pk))];
    if (exist.length) await this.deps.repo.setState(this.deps.network, exist, "active");
    if (gone.length) await this.deps.repo.remove(this.deps.network, gone);
    for (const r of rows) if (r.state === "creating") r.state = accounts.has(r.publicKey) ? "active" : "merged";
  }

  /** Other instances' active channels whose balance on the network is under the threshold. */
  private async lowElsewhere(rows: ChannelRow[]): Promise<{ pk: string; balance: bigint }[]> {
    const pks = rows.filter((r) => r.state === "active").map((r) => r.publicKey);
    if (!pks.length) return [];
    const accounts = await this.deps.gateway.accounts(pks);
    return pks
      .map((pk) => ({ pk, balance: accounts.get(pk)?.balance }))
      .filter((c): c is { pk: string; balance: bigint } => c.balance !== undefined)
      .filter((c) => c.balance < this.deps.config.topUpThreshold);
  }

  /**
   * Creates `n` channels: keys made (sealed, or in the PKCS#11 token: channel-keys.ts) and written first
   * (state creating), then createAccount from the funder.
   */
  private async create(n: number): Promise<void> {
    const { repo, keys, network, config, channels } = this.deps;
    for (let left = n; left > 0; left -= MAX_OPS_PER_TX) {
      const made = keys.make(network, Math.min(left, MAX_OPS_PER_TX));
      const batch = made.map((m) => m.keypair);
      await repo.insert(
        made.map(({ keypair, stored }) => ({
          network,
          publicKey: keypair.publicKey(),
          secret: stored,
          state: "creating" as const,
        })),
      );
      for (const kp of batch) {
        if (this.deps.shared && !(await this.deps.shared.take(kp.publicKey())))
          throw new Error(`${kp.publicKey()}: a new channel's lease is another instance's`);
        channels.keys.set(kp.publicKey(), kp);
        channels.pool.send({
          type: "ADD",
          channel: { publicKey: kp.publicKey(), balance: 0n, reserve: ACCOUNT_RESERVE, seq: 0n, state: "creating" },
        });
      }
      const pks = batch.map((kp) => kp.publicKey());
      for (const pk of pks) this.unconfirmed.add(pk);
      let c: Confirmed;
      try {
        const ops = batch.map((kp) =>
          Operation.createAccount({ destination: kp.publicKey(), startingBalance: formatXlm(config.startingBalance) }),
        );
        c = await this.runOwn(this.deps.funder, ops, "create channels");
      } catch (e) {
        await repo.remove(network, pks);
        for (const pk of pks) {
          channels.pool.send({ type: "REMOVE", publicKey: pk });
          channels.keys.delete(pk);
          this.unconfirmed.delete(pk);
        }
        throw e;
      }
      // a channel retired while it was being created stays draining (and is merged next)
      const created = pks.filter((pk) => channels.channel(pk)?.value === "creating");
      await repo.setState(network, created, "active");
      await this.deps.sync.resync(this.deps.funder.publicKey());
      // a new account's sequence number is the creating ledger's sequence << 32
      for (const pk of pks) {
        channels.send(pk, { type: "ACTIVATE", balance: config.startingBalance, seq: BigInt(c.ledger) << 32n });
        this.unconfirmed.delete(pk);
      }
      this.deps.log.info({ network, created: pks.length, ledger: c.ledger }, "channel accounts created");
      channels.notify();
    }
  }

  /** Merges a drained channel into the funder. */
  private async merge(pk: string): Promise<void> {
    const { channels, network, log } = this.deps;
    if (!channels.refs()[pk]) return;
    try {
      const op = Operation.accountMerge({ destination: this.deps.funder.publicKey() });
      await this.runOwn(channels.keys.get(pk)!, [op], "merge a channel", true);
    } catch (e) {
      // merged already (by an earlier run whose answer was lost)?
      if ((await this.deps.gateway.accounts([pk])).has(pk)) {
        this.lastError = e instanceof Error ? e.message : String(e);
        log.error({ network, channel: pk, err: this.lastError }, "merging a channel failed; retrying");
        return;
      }
    }
    await this.deps.repo.setState(network, [pk], "merged");
    channels.pool.send({ type: "REMOVE", publicKey: pk });
    channels.keys.delete(pk);
    channels.merged.add(pk);
    await this.deps.sync.resync(this.deps.funder.publicKey());
    log.info({ network, channel: pk }, "channel merged into the funder");
  }

  /** Tops up low channels to the starting balance, one funder transaction for up to 100 channels. */
  private async topUp(low: { pk: string; balance: bigint }[]): Promise<void> {
    const { channels, config } = this.deps;
    for (let i = 0; i < low.length; i += MAX_OPS_PER_TX) {
      const batch = low
        .slice(i, i + MAX_OPS_PER_TX)
        .map((c) => ({ pk: c.pk, amount: config.startingBalance - c.balance }))
        .filter((b) => b.amount > 0n);
      if (!batch.length) continue;
      const ops = batch.map((b) =>
        Operation.payment({ destination: b.pk, asset: Asset.native(), amount: formatXlm(b.amount) }),
      );
      await this.runOwn(this.deps.funder, ops, "top up channels");
      for (const b of batch) {
        if (channels.refs()[b.pk]) channels.send(b.pk, { type: "CREDIT", amount: b.amount });
        else await this.deps.shared?.credited(b.pk, b.amount);
      }
      await this.deps.sync.resync(this.deps.funder.publicKey());
      this.deps.log.info({ network: this.deps.network, channels: batch.length }, "channel accounts topped up");
    }
  }

  /**
   * Runs a transaction whose source is `kp`'s account: takes its next sequence number from its
   * actor (one pending transaction per source: waits while another runs), then the submitter
   * sends it and waits for the ledger. Answers the applied transaction; throws on anything else.
   */
  private async runOwn(kp: Keypair, ops: xdr.Operation[], what: string, internal = false): Promise<Confirmed> {
    const { gateway: gw, channels } = this.deps;
    const actor = channels.actor(kp.publicKey()) as AnyChannel;
    let rate = await gw.feeRate(this.deps.config.feePercentile, false).catch(() => BASE_FEE);
    if (rate < BASE_FEE) rate = BASE_FEE;
    const cap = rate * OWN_RATE_CAP;
    const deadline = Date.now() + INTERNAL_TIMEOUT_MS;
    const id = crypto.randomUUID();
    let seq = await this.take(actor, kp, id, cap * BigInt(ops.length), internal, deadline, what);
    let charged = 0n;
    let consumed = false;
    let badSeq = 0;
    try {
      const steps = this.deps.submitter.steps({ rate, cap, deadline, resyncable: true });
      const r = await drive(steps, {
        build: (bid) => {
          const builder = new TransactionBuilder(new Account(kp.publicKey(), (seq - 1n).toString()), {
            fee: bid.toString(),
            networkPassphrase: gw.passphrase,
          });
          for (const op of ops) builder.addOperation(op);
          const tx = builder.setTimeout(OWN_TX_TIMEOUT_SECONDS).build();
          signTx(tx, kp);
          return signedOf(tx);
        },
        record: async () => {},
        resync: async () => {
          seq = await this.deps.sync.reseq(actor, id, badSeq++ > 0);
        },
        lookup: (hash) => gw.find(hash),
      });
      consumed = r.kind === "applied" || (r.kind !== "busy" && r.accepted);
      if (r.kind === "applied") {
        charged = r.confirmed.feeCharged;
        if (!r.confirmed.successful)
          throw new Error(`${what}: the network rejected ${r.confirmed.hash}: ${codesOf(r.confirmed.resultXdr)}`);
        return r.confirmed;
      }
      if (r.kind === "rejected")
        throw new Error(`${what}: the network rejected the transaction: ${codesOf(r.resultXdr)}`);
      throw new Error(`${what}: no confirmation of ${r.hash}${r.kind === "busy" ? " (the network is busy)" : ""}`);
    } finally {
      actor.send({ type: "DONE", id, charged, consumed });
      channels.notify();
    }
  }

  /** Takes the account's next sequence number for transaction `id` (waiting while another is pending). */
  private async take(
    actor: AnyChannel,
    kp: Keypair,
    id: string,
    fee: bigint,
    internal: boolean,
    deadline: number,
    what: string,
  ): Promise<bigint> {
    for (;;) {
      const r = await ask<ChannelReply>(actor, { type: "TAKE", id, fee, internal });
      if (r.ok) return r.seq!;
      if (r.reason !== "busy" || Date.now() > deadline || this.deps.stopped())
        throw new Error(`${what}: ${kp.publicKey()} cannot take a transaction (${r.reason})`);
      await this.deps.channels.changed(Math.max(1, deadline - Date.now()));
    }
  }
}

const codesOf = (resultXdr: string) => JSON.stringify(clientResultCodes(resultXdr));
