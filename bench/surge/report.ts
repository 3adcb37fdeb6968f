/** The surge benchmark's figures: per phase, the relay's transactions, the direct client's, and the ledgers. */
import { countsText, counts, pct, table } from "../e2e/stats.ts";
import type { LedgerCloses } from "../e2e/ledger-closes.ts";
import type { LedgerBook } from "./ledgers.ts";
import type { RelayResult } from "./relay-traffic.ts";
import type { DirectResult } from "./traffic.ts";

export interface PhaseData {
  name: string;
  strategy: string;
  /** Ledgers the phase ran through (first and last closed while it sent). */
  from: number;
  to: number;
  relay: RelayResult[];
  direct: DirectResult[];
  competing: { sent: number; accepted: number; seconds: number };
}

const f1 = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : "-");
const f2 = (v: number) => (Number.isFinite(v) ? v.toFixed(2) : "-");
const pc = (a: number, b: number) => (b ? `${((100 * a) / b).toFixed(1)}%` : "-");

/** Ledgers from the one closed when sent to the one that included it: 1 is the next ledger. */
function waits(included: number[], sent: number[]): number[] {
  return included.map((l, i) => l - sent[i]!);
}

/** A request sent this close before the next ledger's close cannot be in it (the relay's own work takes longer). */
export const LATE_MS = 100;

export function phaseRows(book: LedgerBook, p: PhaseData, capacity: number, closes: LedgerCloses): string[][] {
  const ledgers = [...book.ledgers.values()].filter((l) => l.sequence > p.from && l.sequence <= p.to);
  const clearing = ledgers.map((l) => l.clearing);
  const full = ledgers.filter((l) => l.ops >= capacity - 1).length; // no room for a fee-bump of one operation
  // the relay: found in a ledger (also after a 504), by the inner hash
  const rIn = p.relay.map((r) => ({ r, inc: book.included.get(r.innerHash) }));
  const got = rIn.filter((x) => x.inc);
  const rWaits = waits(
    got.map((x) => x.inc!.ledger),
    got.map((x) => x.r.sentLedger),
  );
  // sent in the last LATE_MS before the next close: the next ledger was out of reach
  const late = (r: { sentLedger: number; sentAt: number }) => {
    const next = closes.at.get(r.sentLedger + 1);
    return next !== undefined && next.closedAt - r.sentAt < LATE_MS;
  };
  const onTime = got.filter((x) => !late(x.r));
  const onTimeWaits = waits(
    onTime.map((x) => x.inc!.ledger),
    onTime.map((x) => x.r.sentLedger),
  );
  const ratioCharged = got.map((x) => x.inc!.charged / (book.ledgers.get(x.inc!.ledger)?.clearing ?? Number.NaN));
  const ratioBid = got.map((x) => x.inc!.bid / (book.ledgers.get(x.inc!.ledger)?.clearing ?? Number.NaN));
  const dIn = p.direct.filter((d) => d.ledger !== null);
  const dWaits = waits(
    dIn.map((d) => d.ledger!),
    dIn.map((d) => d.sentLedger),
  );
  const errors = countsText(counts(p.relay.filter((r) => r.status !== 200).map((r) => `${r.status} ${r.code}`)));
  return [
    [
      `${p.name} / ${p.strategy}`,
      "relay",
      String(p.relay.length),
      pc(rWaits.filter((w) => w <= 1).length, p.relay.length),
      `${pct(rWaits, 50)} / ${pct(rWaits, 99)} / ${rWaits.length ? Math.max(...rWaits) : "-"}`,
      `${pct(onTimeWaits, 99)} / ${onTimeWaits.length ? Math.max(...onTimeWaits) : "-"} (${got.length - onTime.length} late)`,
      pc(p.relay.length - got.length, p.relay.length),
      `${f2(pct(ratioCharged, 50))} / ${f2(pct(ratioCharged, 100))}`,
      `${f1(pct(ratioBid, 50))} / ${f1(pct(ratioBid, 99))}`,
      errors,
    ],
    [
      "",
      "direct 100",
      String(p.direct.length),
      pc(dWaits.filter((w) => w <= 1).length, p.direct.length),
      `${pct(dWaits, 50)} / ${pct(dWaits, 99)} / ${dWaits.length ? Math.max(...dWaits) : "-"}`,
      "",
      pc(p.direct.length - dIn.length, p.direct.length),
      "1.00 (by rule)",
      "-",
      countsText(counts(p.direct.filter((d) => d.refused).map((d) => `refused ${d.refused}`))),
    ],
    [
      "",
      "ledgers",
      String(ledgers.length),
      `full ${pc(full, ledgers.length)}`,
      `clearing p50 ${pct(clearing, 50)}`,
      "",
      `p90 ${pct(clearing, 90)}`,
      `max ${clearing.length ? Math.max(...clearing) : "-"}`,
      `${f1(p.competing.sent / p.competing.seconds)} competing tx/s`,
      `${pc(p.competing.accepted, p.competing.sent)} of them queued`,
    ],
  ];
}

export function printReport(book: LedgerBook, phases: PhaseData[], capacity: number, closes: LedgerCloses): void {
  const rows = phases.flatMap((p) => phaseRows(book, p, capacity, closes));
  console.log(
    table(
      [
        "phase / strategy",
        "who",
        "txs",
        "next ledger",
        "ledgers p50 / p99 / max",
        `sent >${LATE_MS} ms before a close: p99 / max`,
        "never in",
        "charged/clearing p50 / max",
        "bid/clearing p50 / p99",
        "errors",
      ],
      rows,
      "llrrrrrrrl",
    ),
  );
  console.log(
    "\nledgers: from the ledger closed when the request was sent to the one that included it (1 = the next ledger);",
  );
  console.log(
    "clearing: the lowest bid per operation the ledger included (under surge, the rate stellar-core charges every transaction in it);",
  );
  console.log(
    `late: sent less than ${LATE_MS} ms before the next ledger closed (the relay's own work takes that long: the next ledger was out of reach);`,
  );
  console.log("never in: not in any ledger by the end of the run (a relay 504 that landed later counts as in).");
}
