/**
 * HTTP interface of one localnet: Stellar RPC at `{base}/rpc`, friendbot at `{base}/friendbot`,
 * Horizon at `{base}{horizonPath}` and, localnet only, `POST {base}/close-ledger` to close a ledger
 * on demand. The relay mounts one per embedded network; `bun run localnet` serves one standalone.
 */
import { Elysia } from "elysia";
import type { Localnet } from "./ledger.ts";
import { createRpcMethods, handleJsonRpcText } from "./rpc.ts";
import { Horizon, unsupportedMediaType, transactionResource, type HorizonReply } from "./horizon.ts";
import { Friendbot, FriendbotError } from "./friendbot.ts";

export interface LocalnetHttpOptions {
  /** Path prefix of every route ("" standalone, "/localnet/testnet" embedded). */
  base: string;
  /** Horizon's path under base ("" standalone, "/horizon" embedded). */
  horizonPath: string;
  /** Public URL of friendbot, announced by getNetwork. */
  friendbotUrl?: string | (() => string);
  submissionTimeoutMs?: number;
}

const FORM_TYPES = ["application/x-www-form-urlencoded", "multipart/form-data"];

function reply(set: { status?: number | string; headers: Record<string, string | number> }, r: HorizonReply): unknown {
  set.status = r.status;
  if (r.problem) set.headers["content-type"] = "application/problem+json; charset=utf-8";
  return r.body;
}

export function localnetHttp(net: Localnet, opts: LocalnetHttpOptions) {
  const methods = createRpcMethods(net, opts.friendbotUrl);
  const h = `${opts.base}${opts.horizonPath}`;
  const horizon = new Horizon(net, opts.submissionTimeoutMs, h);
  const friendbot = new Friendbot(net);
  const formTx = (request: Request, body: unknown): unknown => {
    const ct = (request.headers.get("content-type") ?? "").split(";")[0].trim();
    if (ct && !FORM_TYPES.includes(ct)) return undefined;
    return (body as Record<string, unknown> | undefined)?.tx;
  };
  const isForm = (request: Request) => {
    const ct = (request.headers.get("content-type") ?? "").split(";")[0].trim();
    return !ct || FORM_TYPES.includes(ct);
  };
  const fund = async (addr: string, set: { status?: number | string; headers: Record<string, string | number> }) => {
    try {
      return transactionResource(await friendbot.fund(addr));
    } catch (e) {
      const fe = e instanceof FriendbotError ? e : new FriendbotError(500, String(e));
      set.status = fe.status;
      set.headers["content-type"] = "application/problem+json; charset=utf-8";
      return {
        type: "https://stellar.org/horizon-errors/bad_request",
        title: "Bad Request",
        status: fe.status,
        detail: fe.message,
        ...(fe.extras ? { extras: fe.extras } : {}),
      };
    }
  };
  return (
    new Elysia({ name: `localnet:${opts.base || "/"}` })
      .post(`${opts.base}/rpc`, ({ body }) => handleJsonRpcText(methods, body as string), { parse: "text" })
      .post(`${opts.base}/close-ledger`, () => ({ sequence: net.closeLedger().sequence }))
      // GET like the public friendbot, POST like the SDK's fundAddress / requestAirdrop: ?addr=G...
      .get(`${opts.base}/friendbot`, ({ query, set }) => fund(String(query.addr ?? ""), set))
      .post(`${opts.base}/friendbot`, ({ query, set }) => fund(String(query.addr ?? ""), set), { parse: "none" })
      .get(h || "/", ({ set }) => reply(set, horizon.root()))
      .get(`${h}/accounts/:id`, ({ params, set }) => reply(set, horizon.account(params.id)))
      .get(`${h}/fee_stats`, ({ set }) => reply(set, horizon.feeStats()))
      .post(`${h}/transactions`, async ({ request, body, set }) =>
        reply(set, isForm(request) ? await horizon.submit(formTx(request, body)) : unsupportedMediaType()),
      )
      .post(`${h}/transactions_async`, ({ request, body, set }) =>
        reply(set, isForm(request) ? horizon.submitAsync(formTx(request, body)) : unsupportedMediaType()),
      )
  );
}
