/** The admin API's channel routes (/v1/admin/channels, bearer token checked by the auth plugin): see and resize the pools. */
import { Elysia, t } from "elysia";
import { Type } from "@sinclair/typebox";
import { errorResponses } from "../../http/schemas.ts";
import { adminSecurity } from "../../http/openapi-refs.ts";
import { RelayError, validationError } from "../../kernel/errors.ts";
import type { Networks } from "../networks/networks.ts";
import { PoolView } from "./pool.model.ts";
import { network } from "../tx/tx.model.ts";
import { NETWORKS, type NetworkName, specOf } from "../../stellar/networks.ts";

/** Any channel route: bad input (400), no or a wrong token (401), a bug (500), no pool for the network (503). */
const errors = errorResponses(400, 401, 500, 503);
const detail = (summary: string, description?: string) => ({
  summary,
  ...(description ? { description } : {}),
  tags: ["admin"],
  security: adminSecurity,
});
const PoolList = t.Object(
  {
    pools: t.Array(PoolView),
    unavailable: t.Array(
      t.Object({
        network: t.String(),
        reason: t.String({ description: "starting, or not_configured (no funder secret)" }),
      }),
    ),
  },
  { $id: "ChannelPools" },
);
/** Most channels a pool may have (each is an account on the network, funded by the funder). */
export const MAX_CHANNELS = 1000;

export function channelRoutes(deps: { networks: Networks }) {
  const pool = (n: NetworkName) => {
    const p = deps.networks.find(n)?.pool;
    if (p) return p;
    throw new RelayError(
      "NETWORK_UNAVAILABLE",
      `${n} has no channel pool: set ${specOf(n).settings}_FUNDER_SECRET (or _FUNDER_SIGNER)`,
      { network: n, reason: "not_configured" },
      { retryAfter: 30 },
    );
  };
  return new Elysia({ name: "channels.routes", prefix: "/v1/admin" })
    .get(
      "/channels",
      async ({ query }) => {
        if (query.network) return await pool(query.network).whole();
        const pools: PoolView[] = [];
        const unavailable: { network: NetworkName; reason: string }[] = [];
        for (const n of NETWORKS) {
          const p = deps.networks.find(n)?.pool;
          if (p) pools.push(await p.whole());
          else unavailable.push({ network: n, reason: "not_configured" });
        }
        return { pools, unavailable };
      },
      {
        query: t.Object({ network: t.Optional(network) }),
        response: { 200: t.Union([PoolView, PoolList]), ...errors },
        detail: detail(
          "Channel accounts: state, balance, holder, fees in flight, and totals",
          "With `network`, that network's pool (a ChannelPool); without, every network's (ChannelPools). Any " +
            "instance lists every channel of the pool, with the instance holding it.",
        ),
      },
    )
    .put(
      "/channels",
      async ({ body, set }) => {
        const p = pool(body.network);
        if (body.count === undefined && body.max === undefined)
          throw validationError("count or max: give the channel count, the pool's maximum, or both", {
            field: "count",
            reason: "missing_field",
          });
        if (body.max !== undefined) await p.setMaximum(body.max);
        const r =
          body.count !== undefined ? await p.resize(body.count) : { current: p.list().current, target: p.wanted };
        set.status = 202;
        return { network: body.network, ...r, max: p.list().max ?? r.target };
      },
      {
        // TypeBox's Integer, not Elysia's t.Integer, which also takes (and converts) a numeric string: "5" is not a count
        body: t.Object(
          {
            network,
            count: Type.Optional(
              Type.Integer({
                minimum: 1,
                maximum: MAX_CHANNELS,
                error: `count must be an integer from 1 to ${MAX_CHANNELS}`,
              }),
            ),
            max: Type.Optional(
              Type.Integer({
                minimum: 1,
                maximum: MAX_CHANNELS,
                description: "the most channels demand may grow the pool to (while requests wait for one)",
                error: `max must be an integer from 1 to ${MAX_CHANNELS}`,
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: {
          202: t.Object({ network: t.String(), current: t.Number(), target: t.Number(), max: t.Number() }),
          ...errors,
          ...errorResponses(413),
        },
        detail: detail(
          "Set the channel count (channels are created or drained and merged to reach it; progress in GET) and/or " +
            "the pool's maximum (it grows toward it while requests wait for a channel, and back when idle)",
        ),
      },
    )
    .delete(
      "/channels/:publicKey",
      async ({ params, query, set }) => {
        if (!(await pool(query.network).retire(params.publicKey))) {
          throw new RelayError(
            "NOT_FOUND",
            `no ${query.network} channel ${params.publicKey} that is creating or active`,
            { publicKey: params.publicKey },
          );
        }
        set.status = 202;
        return { network: query.network, publicKey: params.publicKey, state: "draining" };
      },
      {
        params: t.Object({ publicKey: t.String() }),
        query: t.Object({ network }),
        response: {
          202: t.Object({ network: t.String(), publicKey: t.String(), state: t.String() }),
          ...errors,
          ...errorResponses(404),
        },
        detail: detail(
          "Retire a channel: no new work, its fees in flight settle, then it is merged into the funder; the target drops by one",
        ),
      },
    );
}
