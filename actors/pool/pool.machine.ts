/**
 * The pool actor of one network: it owns a channel actor per channel account (spawned children)
 * and assigns work to them. ASSIGN picks the fee source of a fee-bump: the active channel that can
 * best afford it (balance less reserve less fees in flight), so no fee-bump fails for its fee
 * source's balance and no request waits on one channel while another can pay. ACQUIRE picks a
 * channel for an own transaction (func+auth mode): an active channel with no pending transaction
 * of its own. Both answer with an emitted `reply`; the chosen channel is sent HOLD or TAKE in the
 * same step, so two requests can never be given the same fee room or sequence number. One
 * channel's own events (KEEP, RELEASE, DONE, SYNC, ...) go straight to its actor. No I/O.
 */
import { setup, enqueueActions, type ActorRefFrom } from "xstate";
import { available, channelMachine, type ChannelInput } from "./channel.machine.ts";

export type ChannelRef = ActorRefFrom<typeof channelMachine>;

export interface PoolContext {
  channels: Record<string, ChannelRef>;
}

export type PoolEvent =
  | { type: "ADD"; channel: ChannelInput }
  | { type: "ASSIGN"; id: string; fee: bigint }
  | { type: "ACQUIRE"; id: string; fee: bigint }
  | { type: "REMOVE"; publicKey: string };

export type PoolReply =
  | { type: "reply"; id: string; publicKey: string; seq?: bigint }
  | { type: "reply"; id: string; publicKey: null };

/** The active channel that can best afford `fee` (and, for an own transaction, has none pending). */
function best(channels: Record<string, ChannelRef>, fee: bigint, idle: boolean): string | null {
  let pick: string | null = null;
  let room = -1n;
  for (const [pk, ref] of Object.entries(channels)) {
    const s = ref.getSnapshot();
    if (s.value !== "active" || (idle && s.context.own !== null)) continue;
    const a = available(s.context);
    if (a >= fee && a > room) [pick, room] = [pk, a];
  }
  return pick;
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
        const pk = best(context.channels, event.fee, false);
        if (pk) enqueue.sendTo(context.channels[pk]!, { type: "HOLD", id: event.id, fee: event.fee });
        enqueue.emit({ type: "reply", id: event.id, publicKey: pk });
      }),
    },
    ACQUIRE: {
      actions: enqueueActions(({ context, event, enqueue }) => {
        const pk = best(context.channels, event.fee, true);
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
