/**
 * What is really short when a request found no channel account in time: channels busy with their
 * own transactions (func+auth), a channel's balance (being topped up), or the funder's (it can no
 * longer top up or create channels). Each is a 503 NETWORK_UNAVAILABLE with its own reason.
 */
import { unavailable } from "../../kernel/errors.ts";
import { available } from "../../../actors/pool/channel.machine.ts";
import type { Channels } from "./channels.ts";
import type { Logger } from "../../kernel/log.ts";

export function shortage(
  c: Channels,
  network: string,
  fee: bigint,
  own: boolean,
  waiting: number,
  funderNeeds: bigint,
): Error {
  const active = Object.values(c.refs())
    .map((r) => r.getSnapshot())
    .filter((s) => s.value === "active");
  const funder = c.funderActor?.getSnapshot().context;
  const details = { network, fee: fee.toString(), channels: active.length, waiting };
  const free = own ? active.filter((s) => s.context.own === null) : active;
  if (own && active.length && !free.length)
    return unavailable(
      `all ${active.length} ${network} channel accounts are busy with transactions of their own and ${waiting} ` +
        "requests wait for one; none was free before this request's deadline: retry, or raise the pool's maximum",
      { ...details, reason: "channels_busy" },
      2,
    );
  const fundable = funder ? available(funder) >= funderNeeds : true;
  if (!fundable)
    return unavailable(
      `the ${network} funder's balance (${funder!.balance} stroops) cannot top up or create channel accounts: ` +
        `fund ${funder!.publicKey}`,
      { ...details, reason: "funder_balance", funder: funder!.publicKey, funderBalance: funder!.balance.toString() },
      30,
    );
  return unavailable(
    `no ${network} channel account has ${fee} stroops free now (fees in flight hold the rest; they are being ` +
      "topped up): retry shortly",
    { ...details, reason: "channel_balance" },
    2,
  );
}

/** A warning when requests are refused for want of a channel: at most one every 10 s, with the count. */
export class RefusalLog {
  private at = 0;
  private count = 0;

  constructor(
    private readonly network: string,
    private readonly log: Logger,
  ) {}

  refused(fee: bigint, target: number): void {
    this.count++;
    if (Date.now() - this.at < 10_000) return;
    this.at = Date.now();
    this.log.warn(
      { network: this.network, fee: fee.toString(), refused: this.count, target },
      "requests refused: no channel account could take them in time (503); see details.reason in the answers",
    );
    this.count = 0;
  }
}
