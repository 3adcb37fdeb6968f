/**
 * Stellar RPC (JSON-RPC 2.0) over a Localnet, with the result shapes of the official OpenRPC
 * document: getHealth, getNetwork, getVersionInfo, getLatestLedger, getLedgerEntries, getFeeStats,
 * sendTransaction, getTransaction, getTransactions, getEvents, simulateTransaction.
 */
import { X, fromB64, toB64 } from "../stellar/xdr.ts";
import { toFrame, decodeEnvelope } from "./frame.ts";
import { accountKeyEntry } from "./entries.ts";
import { EventsError, getEvents } from "./events.ts";
import { simulate, type SimulateOptions } from "./soroban/simulate.ts";
import { type Localnet, VERSION, PROTOCOL_VERSION } from "./ledger.ts";
import type { TxRecord } from "./history.ts";

export const RETENTION_WINDOW = 120_960;
const MAX_LEDGER_KEYS = 200;

export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}
const invalidParams = (m: string) => new RpcError(-32602, m);

type Params = Record<string, unknown>;

function decodeTx(net: Localnet, p: Params) {
  if (typeof p.transaction !== "string") throw invalidParams("invalid_xdr: transaction is required");
  try {
    const raw = fromB64(p.transaction);
    return toFrame(net.networkId, decodeEnvelope(raw), raw);
  } catch {
    throw invalidParams("invalid_xdr");
  }
}

const txInfo = (r: TxRecord) => ({
  status: r.successful ? "SUCCESS" : "FAILED",
  applicationOrder: r.applicationOrder,
  feeBump: r.feeBump,
  envelopeXdr: r.envelopeXdr,
  resultXdr: r.resultXdr,
  resultMetaXdr: r.resultMetaXdr,
  ...(r.diagnosticEventsXdr.length ? { diagnosticEventsXdr: r.diagnosticEventsXdr } : {}),
  events: { transactionEventsXdr: [], contractEventsXdr: r.contractEventsXdr },
  ledger: r.ledger,
});

/** A transaction's paging token as stellar-rpc's cursors carry it: a TOID, ledger << 32 | applicationOrder << 12 | 1. */
const toid = (r: TxRecord) => ((BigInt(r.ledger) << 32n) | (BigInt(r.applicationOrder) << 12n) | 1n).toString();

export function createRpcMethods(
  net: Localnet,
  friendbotUrl?: string | (() => string),
): Record<string, (p: Params) => unknown> {
  const ledgerBounds = () => ({ latest: net.latestLedger, oldest: net.oldestLedger });
  return {
    getHealth: () => {
      const { latest, oldest } = ledgerBounds();
      return {
        status: "healthy",
        latestLedger: latest.sequence,
        latestLedgerCloseTime: latest.closeTime.toString(),
        oldestLedger: oldest.sequence,
        oldestLedgerCloseTime: oldest.closeTime.toString(),
        ledgerRetentionWindow: RETENTION_WINDOW,
      };
    },
    getNetwork: () => ({
      ...(friendbotUrl ? { friendbotUrl: typeof friendbotUrl === "string" ? friendbotUrl : friendbotUrl() } : {}),
      passphrase: net.passphrase,
      protocolVersion: PROTOCOL_VERSION,
    }),
    getVersionInfo: () => ({
      version: VERSION,
      commitHash: "localnet",
      buildTimestamp: new Date(net.startedAt).toISOString(),
      captiveCoreVersion: "localnet (no stellar-core)",
      protocolVersion: PROTOCOL_VERSION,
    }),
    getLatestLedger: () => {
      const l = net.latestLedger;
      return {
        id: l.hash,
        protocolVersion: l.protocolVersion,
        sequence: l.sequence,
        closeTime: l.closeTime.toString(),
        headerXdr: l.headerXdr,
        metadataXdr: l.metadataXdr,
      };
    },
    getFeeStats: () => ({
      sorobanInclusionFee: net.sorobanFees.distribution(),
      inclusionFee: net.classicFees.distribution(),
      latestLedger: net.latestLedger.sequence,
    }),
    getLedgerEntries: (p) => {
      const keys = p.keys;
      if (!Array.isArray(keys) || keys.length === 0) throw invalidParams("keys must be a non-empty array");
      if (keys.length > MAX_LEDGER_KEYS)
        throw invalidParams(`key count (${keys.length}) exceeds maximum supported (${MAX_LEDGER_KEYS})`);
      const entries = [];
      for (const k of keys) {
        let key;
        try {
          key = X.ledgerKey.decode(fromB64(String(k)));
        } catch {
          throw invalidParams(`cannot unmarshal key value ${k}`);
        }
        if (key.type === 9) throw invalidParams("ledger ttl entries cannot be queried directly");
        if (key.type === 0 || key.type === 1 || key.type === 3) {
          const found = accountKeyEntry(net, key);
          if (found)
            entries.push({
              key: String(k),
              xdr: toB64(X.ledgerEntryData.encode(found.data)),
              lastModifiedLedgerSeq: found.lastModified,
            });
        } else {
          const d = net.contractData(toB64(X.ledgerKey.encode(key)));
          if (d)
            entries.push({
              key: String(k),
              xdr: toB64(d.entry),
              lastModifiedLedgerSeq: d.lastModified,
              liveUntilLedgerSeq: d.liveUntil,
            });
        }
      }
      return { entries, latestLedger: net.latestLedger.sequence };
    },
    sendTransaction: (p) => {
      const r = net.submit(decodeTx(net, p));
      const l = net.latestLedger;
      return {
        status: r.status,
        hash: r.hash,
        latestLedger: l.sequence,
        latestLedgerCloseTime: Number(l.closeTime),
        ...(r.errorResultXdr ? { errorResultXdr: r.errorResultXdr } : {}),
      };
    },
    getTransaction: (p) => {
      const hash = String(p.hash ?? "");
      if (!/^[0-9a-fA-F]{64}$/.test(hash)) throw invalidParams(`unexpected hash length (${hash.length})`);
      const { latest, oldest } = ledgerBounds();
      const base = {
        txHash: hash.toLowerCase(),
        latestLedger: latest.sequence,
        latestLedgerCloseTime: latest.closeTime.toString(),
        oldestLedger: oldest.sequence,
        oldestLedgerCloseTime: oldest.closeTime.toString(),
      };
      const r = net.records.get(hash.toLowerCase());
      if (!r) return { status: "NOT_FOUND", ...base };
      return { ...base, ...txInfo(r), createdAt: r.createdAt.toString() };
    },
    getEvents: (p) => {
      try {
        return getEvents(net, p);
      } catch (e) {
        throw e instanceof EventsError ? new RpcError(e.code, e.message) : e;
      }
    },
    getTransactions: (p) => {
      const pg = (p.pagination ?? {}) as { cursor?: string; limit?: number };
      const limit = pg.limit ?? 50;
      if (!Number.isInteger(limit) || limit < 1 || limit > 200) throw invalidParams("limit must be between 1 and 200");
      const { latest, oldest } = ledgerBounds();
      let start: number,
        skip = 0;
      if (pg.cursor !== undefined) {
        if (p.startLedger !== undefined) throw invalidParams("startLedger and cursor cannot both be set");
        let c: bigint;
        try {
          c = BigInt(pg.cursor);
        } catch {
          throw invalidParams("invalid cursor");
        }
        start = Number(c >> 32n);
        skip = Number((c >> 12n) & 0xfffffn);
      } else {
        start = Number(p.startLedger);
        if (!Number.isInteger(start) || start < oldest.sequence || start > latest.sequence) {
          throw invalidParams(
            `start ledger must be between the oldest ledger: ${oldest.sequence} and the latest ledger: ${latest.sequence} for this rpc instance.`,
          );
        }
      }
      const txs = net.transactionsFrom(start, skip, limit);
      const last = txs[txs.length - 1];
      return {
        transactions: txs.map((r) => ({ ...txInfo(r), txHash: r.hash, createdAt: Number(r.createdAt) })),
        latestLedger: latest.sequence,
        latestLedgerCloseTimestamp: Number(latest.closeTime),
        oldestLedger: oldest.sequence,
        oldestLedgerCloseTimestamp: Number(oldest.closeTime),
        cursor: last ? toid(last) : (BigInt(latest.sequence) << 32n).toString(),
      };
    },
    simulateTransaction: (p) => {
      const f = decodeTx(net, p);
      const rc = (p.resourceConfig ?? {}) as { instructionLeeway?: number };
      const authMode = p.authMode as SimulateOptions["authMode"];
      if (authMode !== undefined && !["enforce", "record", "record_allow_nonroot"].includes(authMode))
        throw invalidParams(`invalid authMode: ${authMode}`);
      const result = simulate(
        f.inner,
        {
          state: net,
          ledgerSeq: net.latestLedger.sequence + 1,
          latestLedger: net.latestLedger.sequence,
          networkId: net.networkId,
          passphrase: net.passphrase,
          baseReserve: net.header.baseReserve,
        },
        {
          authMode,
          // stellar-rpc 27.1+: CAP-71 AddressV2 credentials are recorded only when asked (older SDKs cannot decode them)
          useUpgradedAuth: p.useUpgradedAuth === true,
          instructionLeeway: rc.instructionLeeway,
        },
      );
      return { ...result, latestLedger: net.latestLedger.sequence };
    },
  };
}

interface JsonRpcRequest {
  jsonrpc?: string;
  id?: unknown;
  method?: unknown;
  params?: unknown;
}

/** Handles one JSON-RPC request object (or a batch array). */
export function handleJsonRpc(methods: Record<string, (p: Params) => unknown>, body: unknown): unknown {
  if (Array.isArray(body)) return body.map((b) => handleJsonRpc(methods, b));
  const req = (body ?? {}) as JsonRpcRequest;
  const id = req.id ?? null;
  const fail = (code: number, message: string) => ({ jsonrpc: "2.0", id, error: { code, message } });
  if (typeof req !== "object" || req.jsonrpc !== "2.0" || typeof req.method !== "string")
    return fail(-32600, "invalid request");
  const fn = methods[req.method];
  if (!fn) return fail(-32601, `method not found: ${req.method}`);
  if (req.params !== undefined && req.params !== null && (typeof req.params !== "object" || Array.isArray(req.params)))
    return fail(-32602, "params must be an object");
  try {
    return { jsonrpc: "2.0", id, result: fn((req.params ?? {}) as Params) };
  } catch (e) {
    if (e instanceof RpcError) return fail(e.code, e.message);
    return fail(-32603, e instanceof Error ? e.message : "internal error");
  }
}

/** Parses a request body and handles it; malformed JSON is the JSON-RPC parse error (-32700). */
export function handleJsonRpcText(methods: Record<string, (p: Params) => unknown>, text: string): unknown {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { jsonrpc: "2.0", id: null, error: { code: -32700, message: "parse error" } };
  }
  return handleJsonRpc(methods, body);
}

/**
 * The RPC as a function instead of over HTTP, for a relay that embeds this network: the same JSON in
 * and out (the caller checks the answers as it checks an upstream's), without a socket.
 */
export function inProcessTransport(
  methods: Record<string, (p: Params) => unknown>,
): (body: string) => Promise<{ status: number; text: string }> {
  return async (body) => ({ status: 200, text: JSON.stringify(handleJsonRpcText(methods, body)) });
}
