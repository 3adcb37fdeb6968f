/**
 * POST /compat/channels/{network}: OpenZeppelin's own ChannelsClient (@openzeppelin/relayer-plugin-channels, from
 * npm, unmodified, direct-HTTP mode) against a relay with only its baseUrl pointing here. Every call either returns
 * the client's data types or raises the client's own error class with a fitting code, and every answer agrees with
 * the chain (the embedded networks' rpc.Server getTransaction).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  ChannelsClient,
  PluginExecutionError,
  type ChannelsTransactionResponse,
} from "@openzeppelin/relayer-plugin-channels";
import {
  Account,
  Address,
  Asset,
  Keypair,
  Operation,
  TransactionBuilder,
  authorizeEntry,
  nativeToScVal,
  rpc,
  scValToNative,
  xdr,
} from "@stellar/stellar-sdk";
import { mainnetOf } from "../support/mainnet.ts";
import { AFTER_504_ENV, startTestRelay, TEST_ADMIN_TOKEN, type TestRelay } from "../support/relay.ts";
import { channelsFailure } from "../../src/features/compat/channels-protocol.ts";
import { RelayError } from "../../src/kernel/errors.ts";
import { TEST_CONTRACT_ID } from "../../src/localnet/soroban/contracts.ts";

const HASH = /^[0-9a-f]{64}$/;
const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
let r: TestRelay;
let main: ReturnType<typeof mainnetOf>;
beforeAll(async () => {
  // behind a proxy (TRUST_PROXY): the suites that guess admin secrets are told apart by X-Forwarded-For
  r = await startTestRelay({ TRUST_PROXY: "true" });
  main = mainnetOf(r);
});
afterAll(() => r.stop());

/**
 * A client as its users make one: only baseUrl names the relay. `from`: the address the (trusted) proxy in front of
 * the relay reports for it (X-Forwarded-For, set on the client's own HTTP instance), else the socket's.
 */
const client = (network: "testnet" | "mainnet", apiKey: string, adminSecret?: string, from?: string) => {
  const c = new ChannelsClient({ baseUrl: `${r.url}/compat/channels/${network}`, apiKey, adminSecret });
  type Http = { axiosClient: { defaults: { headers: Record<string, unknown> } } }; // the client's axios instance
  if (from) (c as unknown as Http).axiosClient.defaults.headers["X-Forwarded-For"] = from;
  return c;
};
let addressSeq = 0;
/** An address no other test guessed from. */
const freshIp = () => `198.51.100.${++addressSeq}`;

/** The client's own error class, with its code (data.code) and details. */
async function rejected(p: Promise<unknown>): Promise<{ message: string; code: string; details: any }> {
  try {
    await p;
  } catch (e) {
    if (!(e instanceof PluginExecutionError)) throw new Error(`not a PluginExecutionError: ${e}`);
    return { message: e.message, code: e.errorDetails?.code, details: e.errorDetails?.details };
  }
  throw new Error("the call succeeded");
}

/** The chain's word on a fee-bump hash. */
const onChain = (hash: string, server: rpc.Server = r.rpc) => server.getTransaction(hash);

async function until<T>(f: () => Promise<T>, done: (t: T) => boolean, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const t = await f();
    if (done(t) || Date.now() > end) return t;
    await Bun.sleep(50);
  }
}

const sacId = () => Asset.native().contractId(r.passphrase);
const addr = (pk: string) => nativeToScVal(Address.fromString(pk));
const transfer = (from: string, to: string, amount: bigint, auth: xdr.SorobanAuthorizationEntry[] = []) =>
  Operation.invokeContractFunction({
    contract: sacId(),
    function: "transfer",
    args: [addr(from), addr(to), nativeToScVal(amount, { type: "i128" })],
    auth,
  });

/** What a func+auth client does: simulate with another source, sign `from`'s address credentials. */
async function signedTransfer(from: Keypair, to: Keypair, amount: bigint) {
  const acc = await r.rpc.getAccount(to.publicKey());
  const tx = new TransactionBuilder(acc, { fee: "100", networkPassphrase: r.passphrase })
    .addOperation(transfer(from.publicKey(), to.publicKey(), amount))
    .setTimeout(60)
    .build();
  const sim = await r.rpc.simulateTransaction(tx);
  if (!rpc.Api.isSimulationSuccess(sim)) throw new Error("simulation failed");
  const signed = await authorizeEntry(sim.result!.auth[0]!, from, sim.latestLedger + 100, r.passphrase);
  const op = Operation.fromXDRObject(transfer(from.publicKey(), to.publicKey(), amount, [signed])) as {
    func: xdr.HostFunction;
    auth: xdr.SorobanAuthorizationEntry[];
  };
  return { func: op.func.toXDR("base64"), auth: op.auth.map((a) => a.toXDR("base64")), op };
}

describe("submissions (testnet, anonymous: the client's apiKey is not one of the relay's)", () => {
  const anonymous = () => client("testnet", "an-openzeppelin-key");

  test("a signed transaction: confirmed, and the chain agrees", async () => {
    const tx = await r.payment(await r.funded());
    const res: ChannelsTransactionResponse = await anonymous().submitTransaction({ xdr: tx.toXDR() });
    expect(res.status).toBe("confirmed");
    expect(res.transactionId).toBe(hex(tx.hash())); // the inner hash: what the client signed
    expect(res.hash).toMatch(HASH);
    const chain = await onChain(res.hash!);
    expect(chain.status).toBe(rpc.Api.GetTransactionStatus.SUCCESS);
    expect(await anonymous().getTransaction({ transactionId: res.transactionId! })).toEqual({
      transactionId: res.transactionId,
      hash: res.hash,
      status: "confirmed",
    });
  });

  test("skipWait: answered once the network accepted it; getTransaction until it is final", async () => {
    const tx = await r.payment(await r.funded());
    const res = await anonymous().submitTransaction({ xdr: tx.toXDR(), skipWait: true });
    expect(["submitted", "confirmed"]).toContain(res.status!);
    expect(res.transactionId).toBe(hex(tx.hash()));
    const final = await until(
      () => anonymous().getTransaction({ transactionId: res.transactionId! }),
      (t) => t.status === "confirmed",
    );
    expect(final).toEqual({ transactionId: res.transactionId, hash: expect.stringMatching(HASH), status: "confirmed" });
    expect((await onChain(final.hash!)).status).toBe(rpc.Api.GetTransactionStatus.SUCCESS);
  });

  test("skipWait for a transaction a project is sponsoring: its outcome, not an id of another's record", async () => {
    const project = await r.project();
    const user = await r.funded();
    const [first, second] = [await r.payment(user), await r.payment(user, { seqOffset: 1n })];
    const body = (tx: typeof first) => ({ transaction: tx.toXDR(), network: "testnet" });
    const k = { "x-api-key": project.testKey };
    expect((await r.post("/v1/sponsor", body(second), { ...k, prefer: "respond-async" })).status).toBe(202); // held
    const asked = anonymous().submitTransaction({ xdr: second.toXDR(), skipWait: true });
    await Bun.sleep(200); // it arrives while the project's run holds it (after, it is answered the same way)
    expect((await r.post("/v1/sponsor", body(first), k)).status).toBe(200);
    const res = await asked;
    expect(res.status).toBe("confirmed");
    expect((await onChain(res.hash!)).status).toBe(rpc.Api.GetTransactionStatus.SUCCESS);
  });

  test("func + auth: a SAC transfer authorised by the sender's signed entry, run from a relay channel", async () => {
    const [from, to] = [await r.funded(), await r.funded()];
    const { func, auth } = await signedTransfer(from, to, 5_000_000n);
    const before = r.networks.get("testnet").localnet!.account(to.publicKey())!.balance;
    const res = await anonymous().submitSorobanTransaction({ func, auth });
    expect(res.status).toBe("confirmed");
    expect(res.transactionId).toMatch(HASH);
    const chain = await onChain(res.hash!);
    expect(chain.status).toBe(rpc.Api.GetTransactionStatus.SUCCESS);
    expect(r.networks.get("testnet").localnet!.account(to.publicKey())!.balance - before).toBe(5_000_000n);
    const looked = await anonymous().getTransaction({ transactionId: res.transactionId! });
    expect(looked).toEqual({ transactionId: res.transactionId, hash: res.hash, status: "confirmed" });
  });

  test("an unsigned transaction holding one invocation runs as func + auth (as the plugin does), skipWait", async () => {
    const [from, to] = [await r.funded(), await r.funded()];
    const { op } = await signedTransfer(from, to, 1_000_000n);
    const unsigned = new TransactionBuilder(new Account(Keypair.random().publicKey(), "0"), {
      fee: "100",
      networkPassphrase: r.passphrase,
    })
      .addOperation(Operation.invokeHostFunction({ func: op.func, auth: op.auth }))
      .setTimeout(60)
      .build();
    const res = await anonymous().submitTransaction({ xdr: unsigned.toXDR(), skipWait: true });
    const final = await until(
      () => anonymous().getTransaction({ transactionId: res.transactionId! }),
      (t) => t.status === "confirmed",
    );
    expect(final.status).toBe("confirmed");
    expect((await onChain(final.hash!)).status).toBe(rpc.Api.GetTransactionStatus.SUCCESS);
  });

  test("a read-only call is answered from its simulation: status readonly, its return value, nothing sent", async () => {
    const func = Operation.fromXDRObject(
      Operation.invokeContractFunction({
        contract: TEST_CONTRACT_ID,
        function: "echo",
        args: [nativeToScVal(42, { type: "u32" })],
      }),
    ) as { func: xdr.HostFunction };
    const res = await anonymous().submitSorobanTransaction({ func: func.func.toXDR("base64"), auth: [] });
    expect(res).toMatchObject({ transactionId: null, hash: null, status: "readonly" });
    expect(scValToNative(xdr.ScVal.fromXDR(res.returnValue!, "base64"))).toBe(42);
    expect(res.latestLedger).toBeGreaterThan(0);
  });

  test("a payment to an account that does not exist fails on chain: ONCHAIN_FAILED, op_no_destination, as in the ledger", async () => {
    const tx = await r.payment(await r.funded(), { to: Keypair.random().publicKey() });
    const e = await rejected(anonymous().submitTransaction({ xdr: tx.toXDR() }));
    expect(e.code).toBe("ONCHAIN_FAILED");
    expect(e.details).toMatchObject({ status: "failed", reason: "op_no_destination", resultCode: "tx_failed" });
    expect(e.details.id).toBe(hex(tx.hash()));
    const chain = await onChain(e.details.hash);
    expect(chain.status).toBe(rpc.Api.GetTransactionStatus.FAILED);
    const looked = await anonymous().getTransaction({ transactionId: e.details.id });
    expect(looked).toEqual({ transactionId: e.details.id, hash: e.details.hash, status: "failed" });
  });

  test("bad requests raise the client's error with the plugin's codes", async () => {
    const c = anonymous();
    expect((await rejected(c.submitTransaction({ xdr: "AAAA" }))).code).toBe("INVALID_PARAMS");
    expect((await rejected(c.submitSorobanTransaction({ func: "bad", auth: [] }))).code).toBe("INVALID_PARAMS");
    expect((await rejected(c.getTransaction({ transactionId: "f".repeat(64) }))).code).toBe("NOT_FOUND");
    const futurenet = new ChannelsClient({ baseUrl: `${r.url}/compat/channels/futurenet`, apiKey: "" });
    expect((await rejected(futurenet.getTransaction({ transactionId: "x" }))).code).toBe("UNSUPPORTED_NETWORK");
    expect((await rejected(client("mainnet", "").getTransaction({ transactionId: "x" }))).code).toBe(
      "API_KEY_REQUIRED",
    );
    const unknownKey = client("testnet", "sr_test_unknownunknownunknownunknownunknown1");
    const bad = await rejected(unknownKey.getTransaction({ transactionId: "x" }));
    expect(bad.code).toBe("UNAUTHORIZED"); // a key of the relay's form that is not valid is refused, never anonymous
  });
});

describe("projects on mainnet: credits and the fee limit (the policy's dailySpendLimit)", () => {
  test("a project's key: charged as on /v1/sponsor; over its limit: FEE_LIMIT_EXCEEDED; fee usage as on chain", async () => {
    const p = await r.project({ credits: 100_000_000n });
    const admin = client("mainnet", p.liveKey, TEST_ADMIN_TOKEN);
    const [user] = await main.fund(1);
    const res = await admin.submitTransaction({ xdr: (await main.payment(user!)).toXDR() });
    expect(res.status).toBe("confirmed");
    const charged = await main.feeCharged(res.hash!);
    expect(charged).toBeGreaterThan(0n);
    const project = await r.admin("GET", `/projects/${p.id}`);
    expect(BigInt(project.body.creditBalance)).toBe(100_000_000n - charged!);

    const usage = await admin.getFeeUsage(p.liveKey);
    expect(usage.consumed).toBe(Number(charged));
    expect(usage.limit).toBeUndefined();
    expect(Date.parse(usage.periodEndsAt!) - Date.parse(usage.periodStartAt!)).toBe(86_400_000);

    expect(await admin.setFeeLimit(p.liveKey, Number(charged))).toEqual({ ok: true, limit: Number(charged) });
    expect(await admin.getFeeLimit(p.testKey)).toEqual({ limit: Number(charged) }); // the project's, either key
    expect((await r.admin("GET", `/projects/${p.id}`)).body.policy.dailySpendLimit).toBe(String(charged));
    const refused = await main.payment(user!);
    const over = await rejected(admin.submitTransaction({ xdr: refused.toXDR() }));
    expect(over.code).toBe("FEE_LIMIT_EXCEEDED");
    expect((await main.server.getTransaction(hex(refused.hash()))).status).toBe(rpc.Api.GetTransactionStatus.NOT_FOUND);
    expect(over.details).toMatchObject({ limit: Number(charged), consumed: Number(charged), remaining: 0 });
    expect((await admin.getFeeUsage(p.liveKey)).remaining).toBe(0);

    expect(await admin.deleteFeeLimit(p.liveKey)).toEqual({ ok: true });
    expect(await admin.getFeeLimit(p.liveKey)).toEqual({});
    const again = await admin.submitTransaction({ xdr: (await main.payment(user!)).toXDR() });
    expect((await onChain(again.hash!, main.server)).status).toBe(rpc.Api.GetTransactionStatus.SUCCESS);
  });

  test("credits run out: FEE_LIMIT_EXCEEDED (insufficient_credits); another project's transaction is not found", async () => {
    const poor = await r.project({ credits: 1_000n });
    const [user] = await main.fund(1);
    const tx = await main.payment(user!);
    const e = await rejected(client("mainnet", poor.liveKey).submitTransaction({ xdr: tx.toXDR() }));
    expect((await main.server.getTransaction(hex(tx.hash()))).status).toBe(rpc.Api.GetTransactionStatus.NOT_FOUND);
    expect(e.code).toBe("FEE_LIMIT_EXCEEDED");
    expect(e.details).toMatchObject({ reason: "insufficient_credits", relayCode: "INSUFFICIENT_CREDITS" });

    const rich = await r.project({ credits: 100_000_000n });
    // a transaction of its own (the one refused above stays the poor project's)
    const own = await main.payment(user!, { amount: "2" });
    const res = await client("mainnet", rich.liveKey).submitTransaction({ xdr: own.toXDR() });
    const other = await rejected(client("mainnet", poor.liveKey).getTransaction({ transactionId: res.transactionId! }));
    expect(other.code).toBe("NOT_FOUND");
    const wrongNetwork = await rejected(
      client("testnet", rich.liveKey).getTransaction({ transactionId: res.transactionId! }),
    );
    expect(wrongNetwork.code).toBe("FORBIDDEN");
  });
});

describe("management: adminSecret is the relay's ADMIN_TOKEN, and nothing else", () => {
  test("every action with the right secret answers the plugin's types", async () => {
    const p = await r.project();
    const admin = client("testnet", "", TEST_ADMIN_TOKEN);
    const pool = (await r.admin("GET", "/channels?network=testnet")).body;
    const stats = await admin.getStats();
    expect(stats.pool.size).toBe(pool.channels.filter((c: { state: string }) => c.state === "active").length);
    expect(stats.pool.size).toBeGreaterThan(0);
    expect(stats.pool.locked! + stats.pool.available!).toBe(stats.pool.size);
    expect(stats.config).toMatchObject({ network: "testnet", feeResetPeriodSeconds: 86_400, limitedContracts: [] });
    expect(stats.fees.inclusionFeeDefault).toBeGreaterThanOrEqual(100);
    const list = await admin.listChannelAccounts();
    expect(list.relayerIds.sort()).toEqual(pool.channels.map((c: { publicKey: string }) => c.publicKey).sort());
    expect(await admin.getFeeUsage(p.testKey)).toMatchObject({ consumed: 0 });
    expect(await admin.getFeeLimit(p.testKey)).toEqual({});
    expect(await admin.setFeeLimit(p.testKey, 0)).toEqual({ ok: true, limit: 0 });
    const blocked = await rejected(
      client("testnet", p.testKey).submitTransaction({ xdr: (await r.payment(await r.funded())).toXDR() }),
    );
    expect(blocked.code).toBe("FEE_LIMIT_EXCEEDED"); // 0 blocks every transaction, as the plugin's
    expect(await admin.deleteFeeLimit(p.testKey)).toEqual({ ok: true });
    const set = await rejected(admin.setChannelAccounts(["relayer-1"]));
    expect(set.code).toBe("NOT_SUPPORTED");
    expect(set.message).toContain("PUT /v1/admin/channels");
    expect((await rejected(admin.getFeeUsage("someone-else's-key"))).code).toBe("INVALID_PAYLOAD");
  });

  test("a wrong secret, or a project's key as the secret, is refused (401 UNAUTHORIZED) for every action", async () => {
    const p = await r.project();
    // each guess from its own address: an address's sixth wrong guess in a minute is 429 (below)
    for (const secret of ["wrong-secret", p.testKey]) {
      const c = () => client("testnet", p.testKey, secret, freshIp());
      const calls = [
        () => c().getStats(),
        () => c().listChannelAccounts(),
        () => c().setChannelAccounts(["a"]),
        () => c().getFeeUsage(p.testKey),
        () => c().getFeeLimit(p.testKey),
        () => c().setFeeLimit(p.testKey, 1),
        () => c().deleteFeeLimit(p.testKey),
      ];
      for (const call of calls) expect((await rejected(call())).code).toBe("UNAUTHORIZED");
    }
    expect((await r.admin("GET", `/projects/${p.id}`)).body.policy.dailySpendLimit).toBeNull();
    const raw = await fetch(`${r.url}/compat/channels/testnet/`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${p.testKey}`,
        "x-forwarded-for": freshIp(),
      },
      body: JSON.stringify({ params: { management: { action: "stats", adminSecret: "wrong" } } }),
    });
    expect(raw.status).toBe(401);
    expect(await raw.json()).toEqual({
      success: false,
      error: expect.any(String),
      data: { code: "UNAUTHORIZED", details: {} },
    });
  });
});

describe("wrong adminSecrets are limited per client IP, with the admin API's wrong tokens", () => {
  /** A management request over plain HTTP from `from` (X-Forwarded-For: the relay trusts its proxy here). */
  const manage = (from: string, adminSecret?: string) =>
    fetch(`${r.url}/compat/channels/testnet`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: "Bearer an-openzeppelin-key",
        "x-forwarded-for": from,
      },
      body: JSON.stringify({
        params: { management: { action: "stats", ...(adminSecret === undefined ? {} : { adminSecret }) } },
      }),
    });
  /** A request to the admin API with `token` from `from`. */
  const adminApi = (from: string, token: string) =>
    fetch(`${r.url}/v1/admin/projects`, { headers: { authorization: `Bearer ${token}`, "x-forwarded-for": from } });
  const lockedOut = async (res: Response) => {
    expect(res.status).toBe(429);
    const wait = Number(res.headers.get("retry-after"));
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(60);
    expect(await res.json()).toEqual({
      success: false,
      error: expect.stringContaining("too many wrong admin"),
      data: { code: "RATE_LIMIT_EXCEEDED", details: { reason: "sign_in_failures", relayCode: "RATE_LIMIT_EXCEEDED" } },
    });
  };

  test("5 wrong secrets, then 429 with Retry-After; the right secret still works; another address is not affected", async () => {
    const [ip, other] = [freshIp(), freshIp()];
    const wrong = client("testnet", "", "wrong-secret", ip);
    for (let i = 0; i < 5; i++) expect((await rejected(wrong.getStats())).code).toBe("UNAUTHORIZED");
    await lockedOut(await manage(ip, "wrong-secret"));
    expect((await rejected(wrong.listChannelAccounts())).code).toBe("RATE_LIMIT_EXCEEDED"); // the client's error
    await lockedOut(await manage(ip)); // no secret at all: refused as well while locked out
    // the operator is not locked out by whoever shares the address
    const stats = await client("testnet", "", TEST_ADMIN_TOKEN, ip).getStats();
    expect(stats.pool.size).toBeGreaterThan(0);
    expect(stats.config.network).toBe("testnet");
    // another address: its own count
    const elsewhere = await manage(other, "wrong-secret");
    expect(elsewhere.status).toBe(401);
    expect(((await elsewhere.json()) as any).data.code).toBe("UNAUTHORIZED");
    expect((await client("testnet", "", TEST_ADMIN_TOKEN, other).getStats()).pool.size).toBe(stats.pool.size);
  });

  test("a request without a secret is no guess: not counted", async () => {
    const ip = freshIp();
    for (let i = 0; i < 6; i++) expect((await manage(ip)).status).toBe(401);
    expect((await manage(ip, "wrong-secret")).status).toBe(401);
  });

  test("wrong admin bearer tokens on /v1/admin and wrong adminSecrets add up, both ways", async () => {
    const ip = freshIp();
    for (let i = 0; i < 3; i++) expect((await adminApi(ip, "wrong-token")).status).toBe(401);
    for (let i = 0; i < 2; i++) expect((await manage(ip, "wrong-secret")).status).toBe(401);
    await lockedOut(await manage(ip, "wrong-secret"));
    const admin = await adminApi(ip, "wrong-token"); // the admin API's lock-out, in its envelope
    expect(admin.status).toBe(429);
    expect(Number(admin.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(((await admin.json()) as any).error.code).toBe("RATE_LIMIT_EXCEEDED");
    expect((await adminApi(ip, TEST_ADMIN_TOKEN)).status).toBe(200);
    expect((await manage(ip, TEST_ADMIN_TOKEN)).status).toBe(200);

    const other = freshIp(); // the other way round: guesses of the secret first
    for (let i = 0; i < 5; i++) expect((await manage(other, "wrong-secret")).status).toBe(401);
    expect((await adminApi(other, "wrong-token")).status).toBe(429);
  });
});

describe("rate limits, input and the error table", () => {
  test("a project's rate limit applies as on /v1 (429 RATE_LIMIT_EXCEEDED, Retry-After)", async () => {
    const p = await r.project({ policy: { requestsPerSecond: 0.001, burst: 1 } });
    const c = client("testnet", p.testKey);
    expect((await rejected(c.getTransaction({ transactionId: "f".repeat(64) }))).code).toBe("NOT_FOUND");
    const limited = await rejected(c.getTransaction({ transactionId: "f".repeat(64) }));
    expect(limited.code).toBe("RATE_LIMIT_EXCEEDED");
    const raw = await fetch(`${r.url}/compat/channels/testnet/`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${p.testKey}` },
      body: JSON.stringify({ params: { getTransaction: { transactionId: "x" } } }),
    });
    expect(raw.status).toBe(429);
    expect(Number(raw.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(raw.headers.get("ratelimit-limit")).toBe("1");
  });

  test("bodies are screened as /v1's; failures are the plugin's shape", async () => {
    const post = (body: string) =>
      fetch(`${r.url}/compat/channels/testnet`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
    for (const body of ["not json", "{}", '{"params":{"xdr":"AAAA","extra":1}}', '{"params":{"toString":1}}']) {
      const res = await post(body);
      expect(res.status, body).toBe(400);
      expect(await res.json()).toMatchObject({ success: false, data: { code: "INVALID_PARAMS" } });
    }
  });

  test("the table: our codes as the plugin's (status, code)", () => {
    const as = (code: ConstructorParameters<typeof RelayError>[0], details?: Record<string, unknown>) => {
      const f = channelsFailure(new RelayError(code, "m", details));
      return [f.status, f.body.data.code];
    };
    expect(as("NETWORK_UNAVAILABLE", { reason: "channels_busy" })).toEqual([503, "POOL_CAPACITY"]);
    expect(as("NETWORK_UNAVAILABLE", { reason: "channel_balance" })).toEqual([503, "POOL_CAPACITY"]);
    expect(as("NETWORK_UNAVAILABLE", { reason: "timeout" })).toEqual([503, "NETWORK_UNAVAILABLE"]);
    expect(as("SUBMISSION_TIMEOUT", { hash: "h" })).toEqual([504, "WAIT_TIMEOUT"]);
    expect(as("POLICY_VIOLATION", { rule: "dailySpendLimit", limit: "5" })).toEqual([429, "FEE_LIMIT_EXCEEDED"]);
    expect(as("POLICY_VIOLATION", { rule: "maxFee" })).toEqual([403, "POLICY_VIOLATION"]);
    expect(as("INSUFFICIENT_CREDITS")).toEqual([429, "FEE_LIMIT_EXCEEDED"]);
    expect(as("SUBMISSION_FAILED", { hash: "h" })).toEqual([400, "ONCHAIN_FAILED"]);
    expect(as("SIMULATION_FAILED")).toEqual([400, "SIMULATION_FAILED"]);
    expect(as("VALIDATION_ERROR")).toEqual([400, "INVALID_PARAMS"]);
    expect(as("INTERNAL_ERROR")).toEqual([500, "INTERNAL_ERROR"]);
  });

  test("the route is in the OpenAPI document, with its own request and answer schemas", async () => {
    const doc = (await (await fetch(`${r.url}/openapi/json`)).json()) as any;
    const op = doc.paths["/compat/channels/{network}"].post;
    expect(op.requestBody.content["application/json"].schema).toEqual({ $ref: "#/components/schemas/ChannelsRequest" });
    expect(op.responses["200"].content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/ChannelsSuccess",
    });
    expect(op.responses["504"].content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/ChannelsFailure",
    });
  });
});

describe("ledgers closed on demand: WAIT_TIMEOUT and skipWait's submitted", () => {
  let slow: TestRelay;
  beforeAll(async () => {
    slow = await startTestRelay(AFTER_504_ENV);
  });
  afterAll(() => slow.stop());
  const c = () => new ChannelsClient({ baseUrl: `${slow.url}/compat/channels/testnet`, apiKey: "" });

  test("no ledger in time: WAIT_TIMEOUT with the ids; once the ledger closes, getTransaction says confirmed", async () => {
    const tx = await slow.payment(await slow.funded());
    const e = await rejected(c().submitTransaction({ xdr: tx.toXDR() }));
    expect(e.code).toBe("WAIT_TIMEOUT");
    expect(e.details.id).toBe(hex(tx.hash()));
    expect(e.details.hash).toMatch(HASH);
    expect((await c().getTransaction({ transactionId: e.details.id })).status).toBe("submitted");
    expect((await slow.rpc.getTransaction(e.details.hash)).status).toBe(rpc.Api.GetTransactionStatus.NOT_FOUND);
    slow.close();
    const final = await until(
      () => c().getTransaction({ transactionId: e.details.id }),
      (t) => t.status === "confirmed",
    );
    expect(final.status).toBe("confirmed");
    expect((await slow.rpc.getTransaction(final.hash!)).status).toBe(rpc.Api.GetTransactionStatus.SUCCESS);
  });

  test("skipWait: submitted (the network accepted it), then confirmed with the ledger", async () => {
    const tx = await slow.payment(await slow.funded());
    const res = await c().submitTransaction({ xdr: tx.toXDR(), skipWait: true });
    expect(res).toEqual({ transactionId: hex(tx.hash()), hash: expect.stringMatching(HASH), status: "submitted" });
    slow.close();
    const final = await until(
      () => c().getTransaction({ transactionId: res.transactionId! }),
      (t) => t.status === "confirmed",
    );
    expect(final.hash).toBe(res.hash);
    expect((await slow.rpc.getTransaction(res.hash!)).status).toBe(rpc.Api.GetTransactionStatus.SUCCESS);
  });
});
