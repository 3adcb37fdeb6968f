/**
 * The sponsor path's side of order flow: one sequence gate per network (sequence-gate.ts), made on
 * first use; what a held transaction waits for; stopping them all.
 */
import type { Gateway } from "../../../network/gateway.ts";
import type { NetworkName } from "../../../stellar/networks.ts";
import type { Logger } from "../../../kernel/log.ts";
import { type HeldView, type OrderLimits, type OrderedTx, SequenceGate } from "./sequence-gate.ts";

export class Ordering {
  private readonly gates = new Map<NetworkName, SequenceGate>();

  constructor(
    private readonly limits: OrderLimits,
    private readonly log: Logger,
  ) {}

  /** The network's gate (made on first use). */
  gate(gw: Gateway): SequenceGate {
    let g = this.gates.get(gw.name);
    if (!g) {
      g = new SequenceGate({
        network: gw.name,
        accounts: (pks) => gw.accounts(pks),
        nextLedger: (timeoutMs) => gw.watcher.passed(gw.watcher.latestLedger, timeoutMs),
        limits: this.limits,
        log: this.log,
      });
      this.gates.set(gw.name, g);
    }
    return g;
  }

  /**
   * A transaction refused before its run: what its network's gate holds after it in its account's order
   * learns it (no gate yet: nothing of that network is held).
   */
  refusedBefore(network: NetworkName, account: string, seq: bigint): void {
    this.gates.get(network)?.refusedBefore(account, seq);
  }

  /** What a held transaction waits for (a look-up's `waitingFor`); null if not held here. */
  waiting(network: NetworkName, innerHash: string): HeldView | null {
    return this.gates.get(network)?.waiting(innerHash) ?? null;
  }

  stop(): void {
    for (const g of this.gates.values()) g.stop();
  }
}

export type { OrderedTx };
