/**
 * The whole pool of a network as any instance sees it: the channels it holds (from their actors:
 * balance, sequence, fees in flight) and, with several instances, every other live channel from
 * Postgres's channels table, with the instance holding its lease in Redis (none: free, taken within
 * a round) and its balance and sequence number read from the network. Totals count every channel;
 * fees in flight are known only for this instance's.
 */
import type { ChannelRef } from "../../../actors/pool/pool.machine.ts";
import { available } from "../../../actors/pool/channel.machine.ts";
import type { ChannelView, PoolView } from "./pool.model.ts";
import type { Gateway } from "../../network/gateway.ts";
import type { ChannelsRepo } from "../../store/channels.repo.ts";

export interface PoolViewDeps {
  network: string;
  repo: ChannelsRepo;
  gateway: Gateway;
  /** The holders of leases by name (Redis: one MGET). */
  holders(names: string[]): Promise<(string | null)[]>;
  /** Where a channel row's key is (channel-keys.ts). */
  signerOf(row: { secret: string }): "sealed" | "pkcs11";
}

/** The lease of a channel (ownership.ts names them so). */
export const channelLease = (network: string, pk: string) => `channel:${network}:${pk}`;

const sum = (xs: bigint[]) => xs.reduce((a, b) => a + b, 0n);

/** `local` (this instance's view) completed with the other instances' channels. */
export async function wholePool(local: PoolView, deps: PoolViewDeps): Promise<PoolView> {
  const mine = new Set(local.channels.map((c) => c.publicKey));
  const rows = (await deps.repo.live(deps.network)).filter((r) => !mine.has(r.publicKey));
  if (!rows.length) return local;
  const pks = rows.map((r) => r.publicKey);
  const [holders, accounts] = await Promise.all([
    deps.holders(pks.map((pk) => channelLease(deps.network, pk))),
    deps.gateway.accounts(pks).catch(() => null),
  ]);
  const others: ChannelView[] = rows.map((r, i) => {
    const a = accounts?.get(r.publicKey);
    return {
      publicKey: r.publicKey,
      state: r.state,
      balance: a ? a.balance.toString() : null,
      available: null,
      sequence: a ? a.seq.toString() : null,
      inFlight: null,
      holder: holders[i] ?? null,
      signer: deps.signerOf(r),
    };
  });
  const channels = [...local.channels, ...others];
  const counts = countsOf(channels);
  return { ...local, current: counts.active + counts.creating, channels, totals: { ...local.totals, ...counts } };
}

/** How many channels there are in each state, and their balance (one not known counts as 0). */
export function countsOf(channels: { state: string; balance: string | null }[]) {
  const count = (state: string) => channels.filter((c) => c.state === state).length;
  return {
    count: channels.length,
    active: count("active"),
    creating: count("creating"),
    draining: count("draining"),
    balance: sum(channels.map((c) => BigInt(c.balance ?? 0))).toString(),
  };
}

/** A channel this instance holds: everything about it is known here (from its actor). */
export function heldChannel(pk: string, ref: ChannelRef, holder: string | null, signer: "sealed" | "pkcs11") {
  const s = ref.getSnapshot();
  return {
    publicKey: pk,
    state: String(s.value),
    balance: s.context.balance.toString(),
    available: (s.value === "creating" ? 0n : available(s.context)).toString(),
    sequence: s.context.seq.toString(),
    inFlight: { count: s.context.holds.size, fees: s.context.held.toString() },
    holder,
    signer,
  };
}
export type HeldChannel = ReturnType<typeof heldChannel>;
