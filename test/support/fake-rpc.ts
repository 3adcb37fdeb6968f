/**
 * Test harness: a fake upstream Stellar RPC. By default it proxies every JSON-RPC request to a
 * standalone localnet it owns (startLocalnet, in this process); fault modes, for every method or
 * only some, make it misbehave the ways a real upstream can:
 *
 * - `down`: for every method, the port refuses connections (the listener is closed; `heal()`
 *   listens on the same port again); for some methods, the connection is reset without an answer.
 * - `slow`: answers after `delayMs` (default 1000).
 * - `hang`: never answers (until `heal()` or `stop()` drop the connection).
 * - `garbage`: 200 with a body that is not JSON.
 * - `empty`: a JSON-RPC envelope whose result is `{}`; `empty_body`: the whole body is `{}`.
 * - `wrong_types`: the real result with its fields' types changed (numbers become strings, strings
 *   numbers, arrays their length).
 * - `wrong_id`: the real answer with another request's id.
 * - `http500`: HTTP 500 with a text body.
 *
 * With `forward: true` a fault comes after the request was forwarded to the localnet (the upstream
 * did the work, e.g. accepted the transaction, but its answer is lost or broken); `slow` always
 * forwards first. Plain node:http is used so that a connection can be reset for one method.
 *
 * A JSON-RPC batch (an array) is taken as stellar-rpc takes it, unless `refuseBatches` says how it
 * is refused. A fault of any of its methods spoils the whole HTTP answer, except `empty`,
 * `wrong_types` and `wrong_id`, which spoil only that method's answers in the array.
 */
import { createServer, type IncomingMessage, type ServerResponse, type Server } from "node:http";
import type { Socket } from "node:net";
import type { Keypair } from "@stellar/stellar-sdk";
import { startLocalnet, type TestNet } from "./localnet.ts";
import type { LocalnetOptions } from "../../src/localnet/ledger.ts";

export type FaultMode =
  | "down"
  | "slow"
  | "hang"
  | "garbage"
  | "empty"
  | "empty_body"
  | "wrong_types"
  | "wrong_id"
  | "http500";
export const FAULT_MODES: readonly FaultMode[] = [
  "down",
  "slow",
  "hang",
  "garbage",
  "empty",
  "empty_body",
  "wrong_types",
  "wrong_id",
  "http500",
];

export interface FaultOptions {
  /** `slow`: how long each answer is held back (ms). */
  delayMs?: number;
  /** Forward to the localnet before misbehaving (the upstream acted on the request). */
  forward?: boolean;
}

interface Fault extends FaultOptions {
  mode: FaultMode;
}

export interface FakeRpc {
  /** The JSON-RPC endpoint (what TESTNET_RPC_URL is set to). */
  url: string;
  /** The standalone localnet behind it (its own RPC at `localnet.url/rpc`, reached directly). */
  localnet: TestNet;
  passphrase: string;
  /** Misbehaves as `mode` for `methods` (all methods when omitted), on top of other methods' faults. */
  setMode(mode: FaultMode, methods?: string | string[], opts?: FaultOptions): void;
  /** Every method answers normally again, batches are taken (a closed listener listens again). */
  heal(): Promise<void>;
  /** Requests per method: received, and answered with a fault. */
  stats: Map<string, { calls: number; faulted: number }>;
  /** The size of every batch received (refused ones too). */
  batchSizes: number[];
  /** How a batch is refused: HTTP 400, or a JSON-RPC error for the whole request; null: taken. */
  refuseBatches: "http400" | "jsonrpc" | null;
  /** The localnet's last answer per method to a request the fake forwarded before a fault (for diagnosis). */
  lastForwarded: Map<string, string>;
  /** `n` new accounts funded by the localnet's friendbot (10,000 XLM each). */
  fund(n: number): Promise<Keypair[]>;
  stop(): Promise<void>;
}

const ALL = "*";

export async function startFakeRpc(opts: Partial<LocalnetOptions> = {}): Promise<FakeRpc> {
  const localnet = await startLocalnet(opts);
  const upstream = `${localnet.url}/rpc`;
  const faults = new Map<string, Fault>();
  const stats = new Map<string, { calls: number; faulted: number }>();
  const batchSizes: number[] = [];
  const lastForwarded = new Map<string, string>();
  const held = new Set<ServerResponse>();
  const sockets = new Set<Socket>();
  let listening = false;
  let closing: Promise<void> | null = null;
  let stopped = false;

  const forward = async (text: string): Promise<{ status: number; text: string }> => {
    const r = await fetch(upstream, { method: "POST", headers: { "content-type": "application/json" }, body: text });
    return { status: r.status, text: await r.text() };
  };

  const send = (res: ServerResponse, status: number, body: string, type = "application/json") => {
    held.delete(res);
    if (res.destroyed || res.writableEnded) return;
    res.writeHead(status, { "content-type": type, "content-length": Buffer.byteLength(body) });
    res.end(body);
  };

  type Request = { id?: unknown; method?: unknown };
  const methodOf = (r: Request) => (typeof r?.method === "string" ? r.method : "?");
  const faultOf = (r: Request) => faults.get(methodOf(r)) ?? faults.get(ALL);
  /** One answer of a batch (or a single one) spoiled the way `fault` says (`empty`, `wrong_types`, `wrong_id`). */
  const spoil = (mode: FaultMode, request: Request, answer: { id?: unknown; result?: unknown }) => {
    if (mode === "empty") return { jsonrpc: "2.0", id: request.id ?? null, result: {} };
    if (mode === "wrong_types") return { ...answer, result: mangle(answer.result) };
    return { ...answer, id: typeof answer.id === "number" ? answer.id + 1_000_000 : "not-your-request" };
  };
  const perAnswer = (mode: FaultMode) => mode === "empty" || mode === "wrong_types" || mode === "wrong_id";

  /**
   * The answers with per-answer faults: the requests that need the localnet's answer are forwarded
   * (`empty` without `forward` is not: the upstream never acted on it), and each faulted answer spoilt.
   */
  async function spoilAnswers(parsed: Request | Request[], requests: Request[], method: string): Promise<unknown> {
    const forwarded = requests.filter((r) => {
      const f = faultOf(r);
      return !f || f.forward || f.mode !== "empty";
    });
    const real = new Map<unknown, { id?: unknown; result?: unknown }>();
    if (forwarded.length) {
      const r = await forward(JSON.stringify(Array.isArray(parsed) ? forwarded : forwarded[0]));
      lastForwarded.set(method, r.text);
      const body = JSON.parse(r.text) as { id?: unknown } | { id?: unknown }[];
      for (const a of Array.isArray(body) ? body : [body]) real.set(a.id, a);
    }
    const answers = requests.map((r) => {
      const f = faultOf(r);
      const a = real.get(r.id) ?? {};
      return f && perAnswer(f.mode) ? spoil(f.mode, r, a) : a;
    });
    return Array.isArray(parsed) ? answers : answers[0];
  }

  async function handle(req: IncomingMessage, res: ServerResponse, text: string): Promise<void> {
    let parsed: Request | Request[] = {};
    try {
      parsed = JSON.parse(text);
    } catch {
      /* forwarded as is */
    }
    const requests = Array.isArray(parsed) ? parsed : [parsed];
    if (Array.isArray(parsed)) {
      batchSizes.push(parsed.length);
      if (fake.refuseBatches === "http400") return send(res, 400, "batches are not supported", "text/plain");
      if (fake.refuseBatches === "jsonrpc")
        return send(res, 200, JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "no" } }));
    }
    let fault: Fault | undefined;
    for (const r of requests) {
      const s = stats.get(methodOf(r)) ?? { calls: 0, faulted: 0 };
      stats.set(methodOf(r), s);
      s.calls++;
      const f = faultOf(r);
      if (f) s.faulted++;
      if (f && (!fault || !perAnswer(f.mode))) fault = f;
    }
    const method = methodOf(requests.find((r) => faultOf(r)) ?? requests[0]!);
    if (!fault) {
      const r = await forward(text);
      return send(res, r.status, r.text);
    }
    held.add(res);
    if (perAnswer(fault.mode)) return send(res, 200, JSON.stringify(await spoilAnswers(parsed, requests, method)));
    const real = fault.forward || fault.mode === "slow" ? await forward(text) : null;
    if (real) lastForwarded.set(method, real.text);
    switch (fault.mode) {
      case "down":
        held.delete(res);
        req.socket.destroy();
        return;
      case "hang":
        return; // held until heal() or stop()
      case "slow":
        await Bun.sleep(fault.delayMs ?? 1000);
        return send(res, real!.status, real!.text);
      case "garbage":
        return send(res, 200, "<html><body>502 Bad Gateway</body></html>\u0000\u00ff{", "text/html");
      case "empty_body":
        return send(res, 200, "{}");
      case "http500":
        return send(res, 500, "Internal Server Error", "text/plain");
    }
  }

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      handle(req, res, Buffer.concat(chunks).toString("utf8")).catch((e) =>
        send(res, 502, `fake rpc: ${e instanceof Error ? e.message : e}`, "text/plain"),
      );
    });
  });
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });

  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        server.off("error", reject);
        listening = true;
        resolve();
      });
    });
  const close = () =>
    (closing ??= new Promise<void>((resolve) => {
      listening = false;
      server.close(() => {
        closing = null;
        resolve();
      });
      for (const s of sockets) s.destroy();
      server.closeAllConnections?.();
    }));
  const dropHeld = () => {
    for (const r of held) r.destroy();
    held.clear();
  };

  await listen(0);
  const port = (server.address() as { port: number }).port;

  const fake: FakeRpc = {
    url: `http://127.0.0.1:${port}/rpc`,
    localnet,
    passphrase: localnet.passphrase,
    stats,
    batchSizes,
    refuseBatches: null,
    lastForwarded,
    setMode(mode, methods, fopts = {}) {
      const list = methods === undefined ? [ALL] : typeof methods === "string" ? [methods] : methods;
      if (list.includes(ALL)) faults.clear();
      for (const m of list) faults.set(m, { mode, ...fopts });
      if (mode === "down" && list.includes(ALL) && listening) void close();
    },
    async heal() {
      faults.clear();
      fake.refuseBatches = null;
      dropHeld();
      if (closing) await closing;
      if (!listening && !stopped) await listen(port);
    },
    async fund(n) {
      return await Promise.all(Array.from({ length: n }, () => localnet.funded()));
    },
    async stop() {
      stopped = true;
      faults.clear();
      dropHeld();
      await (listening ? close() : closing);
      await localnet.stop();
    },
  };
  return fake;
}

/** The same value with every field's type changed: numbers become strings, strings numbers, arrays their length. */
function mangle(v: unknown): unknown {
  if (Array.isArray(v)) return v.length;
  if (typeof v === "number") return String(v);
  if (typeof v === "string") return v.length;
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, mangle(x)]));
  return v;
}
