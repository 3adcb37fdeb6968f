/**
 * POST /compat/channels/{network}: OpenZeppelin's channels plugin protocol, so that `ChannelsClient`
 * (`@openzeppelin/relayer-plugin-channels`, direct-HTTP mode) works against the relay with only its
 * `baseUrl` changed (it posts to `${baseUrl}/`, the trailing slash is the same route). The key comes as
 * `Authorization: Bearer <apiKey>`: the auth plugin resolves it and takes the rate-limit token as for
 * /v1 (a key not of this relay's form is no key: the anonymous testnet relay). A wrong management
 * adminSecret counts against the client IP with the admin API's wrong tokens (`adminGuesses`: the app
 * shares one limiter). Errors, also those of the plugins before this route, are answered in the
 * plugin's shape (the errors plugin's dialect, src/features/compat/channels-protocol.ts).
 */
import { Elysia, t } from "elysia";
import { Type } from "@sinclair/typebox";
import { callerContext } from "../projects/caller.ts";
import { SignInLimiter } from "../console/console-session.ts";
import { requestContext } from "../../http/errors.plugin.ts";
import type { ErrorDialect } from "../../http/errors.plugin.ts";
import { checkNetwork, requireScope, type Principal } from "../projects/principal.ts";
import { type NetworkName, specOf } from "../../stellar/networks.ts";
import {
  CHANNELS_PREFIX,
  ChannelsError,
  channelsFailure,
  channelsNetwork,
  parseChannelsParams,
} from "./channels-protocol.ts";
import { ChannelsManagement, type ManagementDeps } from "./management.ts";
import { ChannelsService, type ChannelsServiceDeps } from "./channels.service.ts";

/** The errors plugin answers errors under /compat/channels in the plugin's shape. */
export const channelsDialect: ErrorDialect = {
  prefix: CHANNELS_PREFIX,
  answer: (e) => channelsFailure(e),
};

const num = (description: string) => Type.Optional(Type.Number({ description }));
const ChannelsTransaction = Type.Object(
  {
    transactionId: Type.Union([Type.String(), Type.Null()], {
      description: "The submission's id (its inner hash): getTransaction and GET /v1/transactions/{hash} take it",
    }),
    hash: Type.Union([Type.String(), Type.Null()], { description: "The fee-bump's hash; null until it was sent" }),
    status: Type.Union([Type.String(), Type.Null()], {
      description: "pending, submitted, confirmed, failed or expired; readonly for a call answered by simulation",
    }),
    returnValue: Type.Optional(Type.String({ description: "Read-only calls: the base64 ScVal return value" })),
    latestLedger: num("Read-only calls: the latest ledger at simulation"),
  },
  { $id: "ChannelsTransaction" },
);
const ChannelsSuccess = Type.Object(
  {
    success: Type.Literal(true),
    data: Type.Union([
      ChannelsTransaction,
      Type.Object({}, { description: "A management action's answer (the plugin's types)" }),
    ]),
  },
  { $id: "ChannelsSuccess" },
);
const ChannelsFailure = Type.Object(
  {
    success: Type.Literal(false),
    error: Type.String(),
    data: Type.Object({
      code: Type.String({
        description:
          "The plugin's code (INVALID_PARAMS, ONCHAIN_FAILED, WAIT_TIMEOUT, FEE_LIMIT_EXCEEDED, POOL_CAPACITY, UNAUTHORIZED...)",
      }),
      details: Type.Record(Type.String(), Type.Unknown(), { description: "relayCode: the relay's own code" }),
    }),
  },
  { $id: "ChannelsFailure" },
);
const failures = Object.fromEntries([400, 401, 403, 404, 413, 429, 500, 503, 504].map((s) => [s, ChannelsFailure]));

const Body = t.Object(
  {
    params: t.Unknown({
      description:
        "One of: {xdr, skipWait?} a signed transaction; {func, auth, skipWait?} a HostFunction and its signed " +
        "SorobanAuthorizationEntry list (base64 XDR); {getTransaction: {transactionId}}; " +
        "{management: {action, adminSecret, ...}} with the relay's ADMIN_TOKEN as adminSecret",
    }),
  },
  { additionalProperties: false, $id: "ChannelsRequest" },
);

const detail = {
  summary:
    "OpenZeppelin channels plugin protocol (ChannelsClient with baseUrl .../compat/channels/{network}): " +
    "submit, getTransaction, management",
  description:
    "The API key as `Authorization: Bearer <key>` (or X-API-Key): sr_test_ / sr_live_ keys are the relay's projects " +
    "(rate limits, policies, credits as on /v1/sponsor); any other value, or none, is the anonymous testnet relay. " +
    "Failures are `{success: false, error, data: {code, details}}`, the plugin's codes (details.relayCode: the " +
    "relay's). A key's scopes apply: submitting needs sponsor, getTransaction read (403 FORBIDDEN, " +
    "details.relayCode SCOPE_REQUIRED, details.scope); an expired key is 401 UNAUTHORIZED (relayCode KEY_EXPIRED). " +
    "docs/compat-channels.md",
  tags: ["relay"],
};

/** The caller may use the network: no key on mainnet is the plugin's API_KEY_REQUIRED. */
function checkCaller(principal: Principal, network: NetworkName): void {
  if (principal.environment === null && !specOf(network).keyless)
    throw new ChannelsError(
      "API_KEY_REQUIRED",
      401,
      "mainnet needs an API key: ChannelsClient's apiKey must be an sr_live_ key of this relay",
      undefined,
      "UNAUTHORIZED",
    );
  checkNetwork(principal, network);
}

export function compatRoutes(deps: ManagementDeps & ChannelsServiceDeps) {
  const management = new ChannelsManagement({ ...deps, adminGuesses: deps.adminGuesses ?? new SignInLimiter() });
  const channels = new ChannelsService(deps);
  return new Elysia({ name: "compat.routes" })
    .use(requestContext)
    .use(callerContext)
    .post(
      `${CHANNELS_PREFIX}/:network`,
      async ({ params, body, principal, clientIp, annotate }) => {
        const network = channelsNetwork(params.network);
        deps.networks.get(network); // a network this relay does not serve: NETWORK_NOT_SERVED
        const req = parseChannelsParams(body.params);
        if (req.kind === "management") {
          annotate({ compat: "channels", request: req.kind, action: String(req.management.action).slice(0, 40) });
          return { success: true as const, data: await management.handle(network, req.management, clientIp) };
        }
        annotate({ compat: "channels", request: req.kind });
        checkCaller(principal, network);
        requireScope(principal, req.kind === "get-transaction" ? "read" : "sponsor");
        const data =
          req.kind === "get-transaction"
            ? await channels.lookup(principal.projectId, network, req.transactionId)
            : await channels.submit(req, network, principal.payer, annotate);
        return { success: true as const, data };
      },
      {
        params: t.Object({ network: t.String({ description: "testnet or mainnet" }) }),
        body: Body,
        response: { 200: ChannelsSuccess, ...failures },
        detail,
      },
    )
    .post(
      CHANNELS_PREFIX,
      () => {
        channelsNetwork(undefined); // throws: the network is part of the baseUrl
      },
      { detail: { hide: true } },
    );
}
