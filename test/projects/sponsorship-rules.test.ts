/**
 * Sponsorship rules of a project's policy: allowlists (destinations, assets, contracts and their
 * functions) and a time window. A refusal is 403 POLICY_VIOLATION naming the rule and the value, and
 * nothing is sent (the account's sequence number does not move).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  Account,
  Address,
  Asset,
  getLiquidityPoolId,
  Keypair,
  LiquidityPoolAsset,
  MuxedAccount,
  nativeToScVal,
  Operation,
  SorobanDataBuilder,
  TransactionBuilder,
  type Transaction,
  type xdr,
} from "@stellar/stellar-sdk";
import { sacId, signedTransfer } from "../support/sac.ts";
import { expectError, expectOk, xdrOf } from "../support/harness.ts";
import { signedOp, startTestRelay, type TestRelay } from "../support/relay.ts";

let r: TestRelay;
beforeAll(async () => {
  r = await startTestRelay();
});
afterAll(() => r.stop());

const sponsor = (key: string, body: Record<string, unknown>) =>
  r.post("/v1/sponsor", { network: "testnet", ...body }, { "x-api-key": key });
const seq = async (kp: Keypair) => BigInt((await r.rpc.getAccount(kp.publicKey())).sequenceNumber());
const sac = () => sacId(r);

const tx = (from: Keypair, op: xdr.Operation): Promise<Transaction> => signedOp(r, from, op);

function expectViolation(res: { status: number; body: any }, rule: string, value: string) {
  if (res.status !== 403) throw new Error(`expected 403, got ${res.status} ${JSON.stringify(res.body)}`);
  expect(res.body.error.code).toBe("POLICY_VIOLATION");
  expect(res.body.error.details.rule).toBe(rule);
  expect(res.body.error.details.value).toBe(value);
}

describe("allowlists", () => {
  test("allow.destinations: a payment to an unlisted account is refused, nothing sent; a listed one passes", async () => {
    const [user, listed, other] = [await r.funded(), await r.funded(), await r.funded()];
    const p = await r.project({ policy: { allow: { destinations: [listed.publicKey()] } } });
    const before = await seq(user);
    const refused = await sponsor(p.testKey, {
      transaction: xdrOf(
        await tx(user, Operation.payment({ destination: other.publicKey(), asset: Asset.native(), amount: "1" })),
      ),
    });
    expectViolation(refused, "allow.destinations", other.publicKey());
    // and says what the list allows
    expect(refused.body.error.message).toContain(`(it lists ${listed.publicKey()})`);
    expect(refused.body.error.details).toMatchObject({ allowed: [listed.publicKey()], allowedCount: 1 });
    expect(await seq(user)).toBe(before);
    const ok = await sponsor(p.testKey, {
      transaction: xdrOf(
        await tx(user, Operation.payment({ destination: listed.publicKey(), asset: Asset.native(), amount: "1" })),
      ),
    });
    expect(ok.status).toBe(200);
  });

  test("allow.destinations covers createAccount and accountMerge", async () => {
    const [user, listed] = [await r.funded(), await r.funded()];
    const p = await r.project({ policy: { allow: { destinations: [listed.publicKey()] } } });
    const fresh = Keypair.random().publicKey();
    const create = await sponsor(p.testKey, {
      transaction: xdrOf(await tx(user, Operation.createAccount({ destination: fresh, startingBalance: "2" }))),
    });
    expectViolation(create, "allow.destinations", fresh);
    const merge = await sponsor(p.testKey, {
      transaction: xdrOf(
        await tx(user, Operation.accountMerge({ destination: r.networks.get("testnet").localnet!.root.publicKey() })),
      ),
    });
    expectViolation(merge, "allow.destinations", r.networks.get("testnet").localnet!.root.publicKey());
  });

  test("allow.assets: an unlisted asset is refused", async () => {
    const [user, issuer] = [await r.funded(), await r.funded()];
    const p = await r.project({ policy: { allow: { assets: ["native"] } } });
    const usd = new Asset("USD", issuer.publicKey());
    const res = await sponsor(p.testKey, {
      transaction: xdrOf(await tx(user, Operation.changeTrust({ asset: usd }))),
    });
    expectViolation(res, "allow.assets", `USD:${issuer.publicKey()}`);
  });

  test("allow.contracts with functions, and a SAC transfer's `to` as a destination (func+auth)", async () => {
    const [from, to] = [await r.funded(), await r.funded()];
    const onlyApprove = await r.project({
      policy: { allow: { contracts: [{ contract: sac(), functions: ["approve"] }] } },
    });
    const op = await signedTransfer(r, from, to);
    const res = await sponsor(onlyApprove.testKey, { operation: op });
    expectViolation(res, "allow.contracts", "transfer");
    expect(res.body.error.details.contract).toBe(sac());
    const otherDest = await r.project({ policy: { allow: { destinations: [from.publicKey()] } } });
    expectViolation(await sponsor(otherDest.testKey, { operation: op }), "allow.destinations", to.publicKey());
    const listed = await r.project({
      policy: { allow: { contracts: [{ contract: sac(), functions: ["transfer"] }], destinations: [to.publicKey()] } },
    });
    expect((await sponsor(listed.testKey, { operation: op })).status).toBe(200);
  });

  test("allowedContractIds (superseded) is kept as allow.contracts without functions", async () => {
    const p = await r.project({ policy: { allowedContractIds: [sac()] } });
    const view = await r.admin("GET", `/projects/${p.id}`);
    expect(view.body.policy.allow).toEqual({ contracts: [{ contract: sac() }] });
    expect(view.body.policy.allowedContractIds).toEqual([sac()]);
  });
});

describe("allowlists see what moves (Soroban tokens, pools)", () => {
  /** A signed Soroban transaction calling `fn(args)` on `contract` (refused before it is sent: no simulation needed). */
  async function call(from: Keypair, contract: string, fn: string, args: xdr.ScVal[]): Promise<string> {
    const t = new TransactionBuilder(await r.rpc.getAccount(from.publicKey()), {
      fee: "100",
      networkPassphrase: r.passphrase,
    })
      .addOperation(Operation.invokeContractFunction({ contract, function: fn, args }))
      .setSorobanData(new SorobanDataBuilder().build())
      .setTimeout(60)
      .build();
    t.sign(from);
    return xdrOf(t);
  }
  const addr = (a: string) => nativeToScVal(Address.fromString(a));
  const amount = nativeToScVal(5n, { type: "i128" });

  test("destinations and assets listed: token calls to others, other assets' contracts and pools are refused, nothing sent", async () => {
    const [user, listed, attacker, issuer] = [await r.funded(), await r.funded(), Keypair.random(), Keypair.random()];
    const p = await r.project({ policy: { allow: { destinations: [listed.publicKey()], assets: ["native"] } } });
    const u = user.publicKey();
    const before = await seq(user);
    const muxed = new MuxedAccount(new Account(attacker.publicKey(), "0"), "7");
    const usdSac = new Asset("USD", issuer.publicKey()).contractId(r.passphrase);
    const refusals: [string, string, string][] = [
      [
        await call(user, sac(), "transfer", [addr(u), addr(muxed.accountId()), amount]),
        "allow.destinations",
        attacker.publicKey(),
      ],
      [
        await call(user, sac(), "transfer_from", [addr(u), addr(u), addr(attacker.publicKey()), amount]),
        "allow.destinations",
        attacker.publicKey(),
      ],
      [
        await call(user, sac(), "approve", [
          addr(u),
          addr(attacker.publicKey()),
          amount,
          nativeToScVal(1000, { type: "u32" }),
        ]),
        "allow.destinations",
        attacker.publicKey(),
      ],
      [await call(user, usdSac, "transfer", [addr(u), addr(listed.publicKey()), amount]), "allow.assets", usdSac],
      [await call(user, usdSac, "swap", [addr(u)]), "allow.destinations", usdSac],
    ];
    for (const [transaction, rule, value] of refusals)
      expectViolation(await sponsor(p.testKey, { transaction }), rule, value);
    const pool = new LiquidityPoolAsset(Asset.native(), new Asset("USD", issuer.publicKey()), 30);
    const share = await sponsor(p.testKey, {
      transaction: xdrOf(await tx(user, Operation.changeTrust({ asset: pool }))),
    });
    expectViolation(share, "allow.assets", `USD:${issuer.publicKey()}`);
    const deposit = Operation.liquidityPoolDeposit({
      liquidityPoolId: Buffer.from(getLiquidityPoolId("constant_product", pool.getLiquidityPoolParameters())).toString(
        "hex",
      ),
      maxAmountA: "1",
      maxAmountB: "1",
      minPrice: "1",
      maxPrice: "1",
    });
    const res = await sponsor(p.testKey, { transaction: xdrOf(await tx(user, deposit)) });
    expectViolation(res, "allow.assets", "liquidityPoolDeposit");
    expect(res.body.error.message).toContain("which asset it moves cannot be told");
    expect(await seq(user)).toBe(before); // nothing was sent
  });

  test("the listed asset's contract to a listed destination passes; an unknown contract passes once allow.contracts names it", async () => {
    const [from, to] = [await r.funded(), await r.funded()];
    const p = await r.project({ policy: { allow: { destinations: [to.publicKey()], assets: ["native"] } } });
    expectOk(await sponsor(p.testKey, { operation: await signedTransfer(r, from, to) }));
    const other = await r.project({
      policy: { allow: { destinations: [to.publicKey()], assets: [`USDC:${to.publicKey()}`] } },
    });
    const refused = await sponsor(other.testKey, { operation: await signedTransfer(r, from, to) });
    expectViolation(refused, "allow.assets", sac());
    expect(refused.body.error.message).toContain("allow.contracts");
    const trusted = await r.project({
      policy: {
        allow: { destinations: [to.publicKey()], assets: [`USDC:${to.publicKey()}`], contracts: [{ contract: sac() }] },
      },
    });
    expectOk(await sponsor(trusted.testKey, { operation: await signedTransfer(r, from, to) }));
  });
});

describe("a time window", () => {
  test("before activeFrom and after activeUntil: refused naming the rule", async () => {
    const user = await r.funded();
    const soon = new Date(Date.now() + 3600_000).toISOString();
    const past = new Date(Date.now() - 3600_000).toISOString();
    const notYet = await r.project({ policy: { activeFrom: soon } });
    // each project gets a transaction of its own (one refused by a project stays that project's)
    let amount = 0;
    const pay = async () =>
      xdrOf(
        await tx(
          user,
          Operation.payment({
            destination: r.networks.get("testnet").localnet!.root.publicKey(),
            asset: Asset.native(),
            amount: String(++amount),
          }),
        ),
      );
    const a = await sponsor(notYet.testKey, { transaction: await pay() });
    expectViolation(a, "activeFrom", soon);
    const over = await r.project({ policy: { activeUntil: past } });
    expectViolation(await sponsor(over.testKey, { transaction: await pay() }), "activeUntil", past);
    const live = await r.project({ policy: { activeFrom: past, activeUntil: soon } });
    expect((await sponsor(live.testKey, { transaction: await pay() })).status).toBe(200);
  });

  test("a date the calendar does not have is 400 naming the field, and nothing is stored", async () => {
    const p = await r.project();
    for (const [field, value] of [
      ["activeFrom", "2026-02-30T00:00Z"],
      ["activeFrom", "2026-02-29T00:00:00Z"], // 2026 is no leap year
      ["activeUntil", "2031-04-31T12:00:00+02:00"],
      ["activeUntil", "2031-01-01T24:00:00Z"],
    ] as const) {
      const res = await r.admin("PATCH", `/projects/${p.id}`, { policy: { [field]: value } });
      expectError(res, 400, "VALIDATION_ERROR");
      expect(res.body.error.details.field).toBe(`policy.${field}`);
      expect(res.body.error.message).toContain("not a date of the calendar");
      const created = await r.admin("POST", "/projects", { name: "a day too many", policy: { [field]: value } });
      expectError(created, 400, "VALIDATION_ERROR");
    }
    expect((await r.admin("GET", `/projects/${p.id}`)).body.policy).toMatchObject({
      activeFrom: null,
      activeUntil: null,
    });
    const leap = await r.admin("PATCH", `/projects/${p.id}`, { policy: { activeFrom: "2028-02-29T00:00:00Z" } });
    expectOk(leap);
    expect(leap.body.policy.activeFrom).toBe("2028-02-29T00:00:00.000Z");
  });

  test("a window that ends before it starts is 400 naming the field", async () => {
    const res = await r.admin("POST", "/projects", {
      name: "backwards",
      policy: { activeFrom: "2030-01-02T00:00:00Z", activeUntil: "2030-01-01T00:00:00Z" },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.details.field).toBe("policy.activeFrom");
  });
});
