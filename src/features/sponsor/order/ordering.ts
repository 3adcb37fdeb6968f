/**
 * The sponsor path's side of order flow: one sequence gate per network (sequence-gate.ts), and what
 * a submission's outcome means for the transactions after it in its account's order.
 */
import { RelayError } from "../../../kernel/errors.ts";
import type { Gateway } from "../../../network/gateway.ts";
import type { NetworkName } from "../../../stellar/networks.ts";
import type { Logger } from "../../../kernel/log.ts";
import type { Outcome } from "../../../store/types.ts";
import { type HeldView, type OrderLimits, type OrderResult, type OrderedTx, SequenceGate } from "./sequence-gate.ts";

/** What an outcome says of the sequence number it used: used on chain, refused before, or not known yet. */
export function orderResult(o: Outcome | RelayError): OrderResult {
  const error = o instanceof RelayError ? o.data() : o.kind === "failure" ? o.error : null;
  if (!error) return "applied";
  if (error.code !== "SUBMISSION_FAILED") return "unknown"; // not sent, or not known: a retry may still come
  const details = error.details ?? {};
  if (details.ledger !== undefined) return "applied"; // included and failed: its number is used
  const codes = details.result_codes as { transaction?: string } | undefined;
  return codes?.transaction === "tx_bad_seq" ? "out_of_order" : "rejected";
}

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

  /** What a held transaction waits for (a look-up's `waitingFor`); null if not held here. */
  waiting(network: NetworkName, innerHash: string): HeldView | null {
    return this.gates.get(network)?.waiting(innerHash) ?? null;
  }

  stop(): void {
    for (const g of this.gates.values()) g.stop();
  }
}

export type { OrderedTx };
