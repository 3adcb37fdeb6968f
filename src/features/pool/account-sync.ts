/** Re-reads the relay's accounts from the network into their actors (after tx_bad_seq, or a change of balance). */
import type { Logger } from "../../kernel/log.ts";
import type { Gateway } from "../../network/gateway.ts";
import type { AnyChannel, Channels } from "./channels.ts";

export class AccountSync {
  constructor(
    private readonly channels: Channels,
    private readonly gateway: Gateway,
    private readonly log: Logger,
  ) {}

  /** After tx_bad_seq: re-reads the account's sequence number; answers the one transaction `id` uses now. */
  async reseq(actor: AnyChannel, id: string, allowLower: boolean): Promise<bigint> {
    const pk = actor.getSnapshot().context.publicKey;
    const a = (await this.gateway.accounts([pk])).get(pk);
    if (a) actor.send({ type: "RESEQ", id, seq: a.seq, allowLower });
    this.log.warn(
      { network: this.gateway.name, account: pk, networkSeq: a?.seq.toString() },
      "tx_bad_seq: sequence number re-read from the network",
    );
    return actor.getSnapshot().context.seq;
  }

  /** Re-reads an account's balance (and its sequence number, raise-only). */
  async resync(pk: string): Promise<void> {
    const actor = this.channels.actor(pk);
    const a = (await this.gateway.accounts([pk])).get(pk);
    if (!actor || !a) return;
    actor.send({ type: "SYNC", balance: a.balance, seq: a.seq });
    this.channels.notify();
  }
}
