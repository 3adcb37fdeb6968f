/**
 * getEvents as stellar-rpc (protocol 23) serves it: the contract events of successful transactions in
 * a ledger range (the end exclusive), matched by any of up to 5 filters (type, contract ids, topic
 * patterns with "*" for one segment and a final "**" for any number), paged by a cursor. An event's id
 * is the TOID of its ledger, transaction (application order) and operation, 19 digits, then its index
 * in the transaction, 10 digits. Classic payments' events (CAP-67) are among them; fee events are not emitted.
 */
import { StrKey } from "@stellar/stellar-sdk";
import { X, fromB64, toB64, type ContractEventW } from "../stellar/xdr.ts";
import type { LedgerRecord, TxRecord } from "./history.ts";

export interface EventSource {
  ledgers: LedgerRecord[];
  records: Map<string, TxRecord>;
  latestLedger: LedgerRecord;
  oldestLedger: LedgerRecord;
}

interface Filter {
  type?: string;
  contractIds?: string[];
  topics?: string[][];
}

const MAX_FILTERS = 5;
const MAX_LIMIT = 10_000;

/** A request getEvents refuses: its params (JSON-RPC -32602), or a range outside the ledgers kept (-32600). */
export class EventsError extends Error {
  constructor(
    message: string,
    readonly code: -32602 | -32600 = -32602,
  ) {
    super(message);
  }
}

const pad = (n: bigint | number, width: number) => n.toString().padStart(width, "0");
const toid = (ledger: number, tx: number, op: number) => (BigInt(ledger) << 32n) | (BigInt(tx) << 12n) | BigInt(op);
const eventId = (ledger: number, tx: number, op: number, index: number) =>
  `${pad(toid(ledger, tx, op), 19)}-${pad(index, 10)}`;

function checkFilters(raw: unknown): Filter[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) throw new EventsError("filters must be an array");
  if (raw.length > MAX_FILTERS) throw new EventsError(`maximum ${MAX_FILTERS} filters per request`);
  return raw.map((f: Filter, i) => {
    if (f.type !== undefined && f.type !== "system" && f.type !== "contract")
      throw new EventsError(`filter ${i + 1} invalid: if set, type must be either 'system' or 'contract'`);
    if ((f.contractIds?.length ?? 0) > 5) throw new EventsError(`filter ${i + 1} invalid: maximum 5 contract IDs`);
    for (const id of f.contractIds ?? [])
      if (!StrKey.isValidContract(id)) throw new EventsError(`filter ${i + 1} invalid: contract ID ${id} invalid`);
    if ((f.topics?.length ?? 0) > 5) throw new EventsError(`filter ${i + 1} invalid: maximum 5 topic filters`);
    for (const t of f.topics ?? []) {
      const segments = t.at(-1) === "**" ? t.slice(0, -1) : t;
      if (!Array.isArray(t) || t.length === 0 || segments.length > 4 || segments.includes("**"))
        throw new EventsError(`filter ${i + 1} invalid: a topic filter has 1 to 4 segments, "**" only last`);
    }
    return f;
  });
}

/** Whether an event's topics (base64) match a pattern. */
function topicMatches(topics: string[], pattern: string[]): boolean {
  const open = pattern.at(-1) === "**";
  const segments = open ? pattern.slice(0, -1) : pattern;
  if (open ? topics.length < segments.length : topics.length !== segments.length) return false;
  return segments.every((s, i) => s === "*" || s === topics[i]);
}

function matches(filters: Filter[], type: string, contractId: string, topics: string[]): boolean {
  if (filters.length === 0) return true;
  return filters.some(
    (f) =>
      (!f.type || f.type === type) &&
      (!f.contractIds?.length || f.contractIds.includes(contractId)) &&
      (!f.topics?.length || f.topics.some((p) => topicMatches(topics, p))),
  );
}

/** Reads a cursor (an event id, or a bare TOID): the position after which events are returned. */
function readCursor(c: string): { ledger: number; tx: number; op: number; index: number } {
  const m = /^(\d{1,19})(?:-(\d{1,10}))?$/.exec(c);
  if (!m) throw new EventsError("invalid cursor");
  const t = BigInt(m[1]);
  return {
    ledger: Number(t >> 32n),
    tx: Number((t >> 12n) & 0xfffffn),
    op: Number(t & 0xfffn),
    index: m[2] === undefined ? -1 : Number(m[2]),
  };
}

export function getEvents(net: EventSource, p: Record<string, unknown>) {
  const latest = net.latestLedger.sequence;
  const oldest = net.oldestLedger.sequence;
  const pg = (p.pagination ?? {}) as { cursor?: string; limit?: number };
  const limit = pg.limit ?? 100;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)
    throw new EventsError(`limit must not exceed ${MAX_LIMIT}`);
  const filters = checkFilters(p.filters);
  let after: ReturnType<typeof readCursor> | null = null;
  let start: number;
  if (pg.cursor !== undefined) {
    if (p.startLedger !== undefined || p.endLedger !== undefined)
      throw new EventsError("ledger ranges and cursor cannot both be set");
    after = readCursor(pg.cursor);
    start = after.ledger;
  } else {
    start = Number(p.startLedger);
    if (!Number.isInteger(start) || start <= 0) throw new EventsError("startLedger must be positive");
    if (start < oldest || start > latest)
      throw new EventsError(
        `startLedger must be between the oldest ledger: ${oldest} and the latest ledger: ${latest} for this rpc instance.`,
        -32600,
      );
  }
  const end = p.endLedger === undefined ? latest + 1 : Math.min(Number(p.endLedger), latest + 1);
  if (!Number.isInteger(end) || end <= start) throw new EventsError("endLedger must be after startLedger");
  const events = [];
  scan: for (const l of net.ledgers) {
    if (l.sequence < start || l.sequence >= end) continue;
    for (const hash of l.txHashes) {
      const r = net.records.get(hash);
      if (!r?.successful) continue;
      let index = 0;
      for (const [op, list] of r.contractEventsXdr.entries())
        for (const xdr of list) {
          const at = { ledger: l.sequence, tx: r.applicationOrder, op, index: index++ };
          if (after && compare(at, after) <= 0) continue;
          const e = X.contractEvent.decode(fromB64(xdr)) as ContractEventW;
          const type = e.type === 0 ? "system" : "contract";
          const contractId = e.contractId ? StrKey.encodeContract(Buffer.from(e.contractId)) : "";
          const body = (e.body as { v0: { topics: unknown[]; data: unknown } }).v0;
          const topic = body.topics.map((t) => toB64(X.scVal.encode(t as never)));
          if (e.type === 2 || !matches(filters, type, contractId, topic)) continue;
          events.push({
            type,
            ledger: l.sequence,
            ledgerClosedAt: new Date(Number(l.closeTime) * 1000).toISOString().replace(".000Z", "Z"),
            contractId,
            id: eventId(at.ledger, at.tx, at.op, at.index),
            operationIndex: op,
            transactionIndex: r.applicationOrder,
            txHash: r.hash,
            inSuccessfulContractCall: true,
            topic,
            value: toB64(X.scVal.encode(body.data as never)),
          });
          if (events.length === limit) break scan;
        }
    }
  }
  // a full page continues after its last event; a short one after the range searched
  const cursor = events.length === limit ? events.at(-1)!.id : `${pad(toid(end, 0, 0), 19)}-${pad(0, 10)}`;
  return {
    events,
    cursor,
    latestLedger: latest,
    oldestLedger: oldest,
    latestLedgerCloseTime: net.latestLedger.closeTime.toString(),
    oldestLedgerCloseTime: net.oldestLedger.closeTime.toString(),
  };
}

const compare = (a: ReturnType<typeof readCursor>, b: ReturnType<typeof readCursor>) =>
  a.ledger - b.ledger || a.tx - b.tx || a.op - b.op || a.index - b.index;
