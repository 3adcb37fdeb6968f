/**
 * The pool actor of one network: it owns a channel actor per channel account (spawned children)
 * and assigns work to them. ASSIGN picks the fee sources of fee-bumps (those a turn's requests asked
 * for, in order): each the active channel that can best afford it (balance less reserve less fees in
 * flight, less what this ASSIGN gave it already), so no fee-bump fails for its fee source's balance
 * and no request waits on one channel while another can pay. ACQUIRE picks a channel for an own
 * transaction (func+auth mode): an active channel with no pending transaction of its own. Both answer
 * with an emitted `reply`; the chosen channels are sent HOLD or TAKE in the same step, so two requests
 * can never be given the same fee room or sequence number. One channel's own events (KEEP, RELEASE,
 * DONE, SYNC, ...) go straight to its actor. No I/O.
 */
import { setup, enqueueActions, type ActorRefFrom } from "xstate";
import { available, channelMachine, type ChannelInput, type FeeHold } from "./channel.machine.ts";

export type ChannelRef = ActorRefFrom<typeof channelMachine>;

export interface PoolContext {
  channels: Record<string, ChannelRef>;
}

export type PoolEvent =
  | { type: "ADD"; channel: ChannelInput }
  | { type: "ASSIGN"; id: string; fees: FeeHold[] }
  | { type: "ACQUIRE"; id: string; fee: bigint }
  | { type: "REMOVE"; publicKey: string };

/** ACQUIRE's: the channel and the sequence number to use (null: none is free). */
export type AcquireReply =
  | { type: "reply"; id: string; publicKey: string; seq: bigint }
  | { type: "reply"; id: string; publicKey: null };
/** ASSIGN's: each fee's channel, in the order asked (null: none can afford it now). */
export type AssignReply = { type: "reply"; id: string; publicKeys: (string | null)[] };
export type PoolReply = AcquireReply | AssignReply;

/** What each active channel can still pay (for an own transaction: those with none pending). */
function rooms(channels: Record<string, ChannelRef>, idle: boolean): { pk: string; room: bigint }[] {
  const out: { pk: string; room: bigint }[] = [];
  for (const [pk, ref] of Object.entries(channels)) {
    const s = ref.getSnapshot();
    if (s.value === "active" && !(idle && s.context.own !== null)) out.push({ pk, room: available(s.context) });
  }
  return out;
}

/** The channel that can best afford `fee` (the first of the most room), its room taken; null: none can. */
function best(room: { pk: string; room: bigint }[], fee: bigint): string | null {
  let pick: { pk: string; room: bigint } | null = null;
  for (const r of room) if (r.room >= fee && (!pick || r.room > pick.room)) pick = r;
  if (pick) pick.room -= fee;
  return pick?.pk ?? null;
}

export const poolMachine = setup({
  types: {
    context: {} as PoolContext,
    events: {} as PoolEvent,
    emitted: {} as PoolReply,
  },
  actors: { channel: channelMachine },
}).createMachine({
  id: "pool",
  context: { channels: {} },
  on: {
    ADD: {
      actions: enqueueActions(({ context, event, enqueue }) => {
        if (context.channels[event.channel.publicKey]) return;
        enqueue.assign({
          channels: ({ context: c, spawn }) => ({
            ...c.channels,
            [event.channel.publicKey]: spawn("channel", { id: event.channel.publicKey, input: event.channel }),
          }),
        });
      }),
    },
    ASSIGN: {
      actions: enqueueActions(({ context, event, enqueue }) => {
        const room = rooms(context.channels, false);
        const holds = new Map<string, FeeHold[]>();
        const publicKeys = event.fees.map((f) => {
          const pk = best(room, f.fee);
          if (pk) holds.get(pk)?.push(f) ?? holds.set(pk, [f]);
          return pk;
        });
        for (const [pk, h] of holds) enqueue.sendTo(context.channels[pk]!, { type: "HOLD", holds: h });
        enqueue.emit({ type: "reply", id: event.id, publicKeys });
      }),
    },
    ACQUIRE: {
      actions: enqueueActions(({ context, event, enqueue }) => {
        const pk = best(rooms(context.channels, true), event.fee);
        if (!pk) return enqueue.emit({ type: "reply", id: event.id, publicKey: null });
        enqueue.sendTo(context.channels[pk]!, { type: "TAKE", id: event.id, fee: event.fee });
        enqueue.emit({
          type: "reply",
          id: event.id,
          publicKey: pk,
          seq: context.channels[pk]!.getSnapshot().context.seq + 1n,
        });
      }),
    },
    REMOVE: {
      actions: enqueueActions(({ context, event, enqueue }) => {
        const ref = context.channels[event.publicKey];
        if (!ref) return;
        enqueue.stopChild(ref);
        const { [event.publicKey]: _, ...rest } = context.channels;
        enqueue.assign({ channels: rest });
      }),
    },
  },
});
