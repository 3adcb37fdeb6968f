/**
 * Trustlines, credit assets and reserve sponsorship (CAP-33) on localnet, as a wallet developer meets
 * them: through the official SDK's rpc.Server (sendTransaction, getLedgerEntries) and Horizon.Server
 * (loadAccount), each result code as stellar-core gives it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  Address,
  Asset,
  AuthRequiredFlag,
  AuthRevocableFlag,
  Keypair,
  nativeToScVal,
  Operation,
  scValToNative,
  xdr,
  type Transaction,
} from "@stellar/stellar-sdk";
import { applied, builder, opResults, startLocalnet, txCode, type TestNet } from "../support/localnet.ts";

let t: TestNet;
beforeAll(async () => {
  t = await startLocalnet({ ledgerCloseMs: 0 });
});
afterAll(() => t.stop());

async function signed(source: Keypair, ops: xdr.Operation[], signers: Keypair[] = [source]): Promise<Transaction> {
  const b = await builder(t, source);
  for (const o of ops) b.addOperation(o);
  const tx = b.build();
  for (const s of signers) tx.sign(s);
  return tx;
}
/** Sends and returns each operation's result name ("paymentNoTrust", "opNotSupported", ...), or the transaction's code. */
async function run(source: Keypair, ops: xdr.Operation[], signers?: Keypair[]): Promise<string[]> {
  const r = applied(await t.submit(await signed(source, ops, signers)));
  const code = txCode(r.resultXdr);
  if (code !== "txSuccess" && code !== "txFailed") return [code];
  return opResults(r.resultXdr).map((o) => {
    const op = o as unknown as { type: string; tr?: { value: { type: string } } };
    return op.tr ? op.tr.value.type : op.type;
  });
}
const account = (kp: Keypair) => t.horizon.loadAccount(kp.publicKey());
const line = async (kp: Keypair, asset: Asset) =>
  (await account(kp)).balances.find((b) => "asset_code" in b && b.asset_code === asset.code) as
    | (Record<string, unknown> & { balance: string })
    | undefined;
const trust = (asset: Asset, limit?: string) => Operation.changeTrust({ asset, limit });
const pay = (to: Keypair, asset: Asset, amount: string) =>
  Operation.payment({ destination: to.publicKey(), asset, amount });

describe("trustlines", () => {
  test("changeTrust creates a line: getLedgerEntries returns it, Horizon lists it, the account has a subentry", async () => {
    const [issuer, a] = [await t.funded(), await t.funded()];
    const usd = new Asset("USD", issuer.publicKey());
    expect(await run(a, [trust(usd, "1000")])).toEqual(["changeTrustSuccess"]);
    const key = xdr.LedgerKey.trustline(
      new xdr.LedgerKeyTrustLine({ accountId: a.xdrAccountId(), asset: usd.toTrustLineXDRObject() }),
    );
    const got = await t.rpc.getLedgerEntries(key);
    expect(got.entries).toHaveLength(1);
    const entry = (got.entries[0].val as xdr.LedgerEntryDataTrustline).trustLine;
    expect(entry.limit).toBe(10000000000n);
    expect(entry.balance).toBe(0n);
    expect(entry.flags).toBe(1); // AUTHORIZED: the issuer does not require authorization
    const h = await account(a);
    expect(h.subentry_count).toBe(1);
    expect(await line(a, usd)).toMatchObject({
      asset_type: "credit_alphanum4",
      asset_code: "USD",
      asset_issuer: issuer.publicKey(),
      limit: "1000.0000000",
      balance: "0.0000000",
      is_authorized: true,
    });
    expect(h.balances.at(-1)!.asset_type).toBe("native");
    // removed with limit 0: gone from both
    expect(await run(a, [trust(usd, "0")])).toEqual(["changeTrustSuccess"]);
    expect((await t.rpc.getLedgerEntries(key)).entries).toHaveLength(0);
    expect((await account(a)).subentry_count).toBe(0);
  });

  test("changeTrust's refusals: no issuer, a line with a balance removed, a limit below the balance, no reserve", async () => {
    const [issuer, a] = [await t.funded(), await t.funded()];
    const usd = new Asset("USD", issuer.publicKey());
    expect(await run(a, [trust(new Asset("EUR", Keypair.random().publicKey()))])).toEqual(["changeTrustNoIssuer"]);
    expect(await run(a, [trust(usd, "100")])).toEqual(["changeTrustSuccess"]);
    expect(await run(issuer, [pay(a, usd, "10")])).toEqual(["paymentSuccess"]);
    expect(await run(a, [trust(usd, "0")])).toEqual(["changeTrustInvalidLimit"]);
    expect(await run(a, [trust(usd, "5")])).toEqual(["changeTrustInvalidLimit"]);
    expect(await run(a, [trust(usd, "50")])).toEqual(["changeTrustSuccess"]);
    expect((await line(a, usd))!.limit).toBe("50.0000000");
    // an account holding just its minimum balance cannot afford another subentry
    const poor = Keypair.random();
    expect(await run(a, [Operation.createAccount({ destination: poor.publicKey(), startingBalance: "1.01" })])).toEqual(
      ["createAccountSuccess"],
    );
    expect(await run(poor, [trust(usd)])).toEqual(["changeTrustLowReserve"]);
  });

  test("an issuer mints, holders pay each other; no trust, no source trust, a full line, too little: the network's codes", async () => {
    const [issuer, a, b, stranger] = [await t.funded(), await t.funded(), await t.funded(), await t.funded()];
    const usd = new Asset("USD", issuer.publicKey());
    expect(await run(a, [trust(usd)])).toEqual(["changeTrustSuccess"]);
    expect(await run(b, [trust(usd, "40")])).toEqual(["changeTrustSuccess"]);
    expect(await run(issuer, [pay(a, usd, "100")])).toEqual(["paymentSuccess"]);
    expect(await run(a, [pay(b, usd, "30")])).toEqual(["paymentSuccess"]);
    expect((await line(a, usd))!.balance).toBe("70.0000000");
    expect((await line(b, usd))!.balance).toBe("30.0000000");
    expect(await run(a, [pay(stranger, usd, "1")])).toEqual(["paymentNoTrust"]);
    expect(await run(stranger, [pay(a, usd, "1")])).toEqual(["paymentSrcNoTrust"]);
    expect(await run(a, [pay(b, usd, "11")])).toEqual(["paymentLineFull"]);
    expect(await run(b, [pay(a, usd, "31")])).toEqual(["paymentUnderfunded"]);
    // paid back to the issuer: burned
    expect(await run(a, [pay(issuer, usd, "20")])).toEqual(["paymentSuccess"]);
    expect((await line(a, usd))!.balance).toBe("50.0000000");
    // a failed operation undoes the whole transaction
    expect(await run(a, [pay(b, usd, "5"), pay(stranger, usd, "1")])).toEqual(["paymentSuccess", "paymentNoTrust"]);
    expect((await line(b, usd))!.balance).toBe("30.0000000");
  });

  test("an issuer that requires authorization: NOT_AUTHORIZED until setTrustLineFlags or allowTrust authorizes", async () => {
    const [issuer, a, b] = [await t.funded(), await t.funded(), await t.funded()];
    const flags = (AuthRequiredFlag | AuthRevocableFlag) as never;
    expect(await run(issuer, [Operation.setOptions({ setFlags: flags })])).toEqual(["setOptionsSuccess"]);
    const usd = new Asset("USD", issuer.publicKey());
    expect(await run(a, [trust(usd)])).toEqual(["changeTrustSuccess"]);
    expect(await run(b, [trust(usd)])).toEqual(["changeTrustSuccess"]);
    expect((await line(a, usd))!.is_authorized).toBe(false);
    expect(await run(issuer, [pay(a, usd, "10")])).toEqual(["paymentNotAuthorized"]);
    const authorize = (kp: Keypair) =>
      Operation.setTrustLineFlags({ trustor: kp.publicKey(), asset: usd, flags: { authorized: true } });
    const allow = (kp: Keypair, authorize: 0 | 1 | 2) =>
      Operation.allowTrust({ trustor: kp.publicKey(), assetCode: "USD", authorize });
    expect(await run(issuer, [authorize(a)])).toEqual(["setTrustLineFlagsSuccess"]);
    expect(await run(issuer, [pay(a, usd, "10")])).toEqual(["paymentSuccess"]);
    expect(await run(a, [pay(b, usd, "1")])).toEqual(["paymentNotAuthorized"]);
    expect(await run(issuer, [allow(b, 1)])).toEqual(["allowTrustSuccess"]);
    expect(await run(a, [pay(b, usd, "1")])).toEqual(["paymentSuccess"]);
    // revoked (the issuer is revocable): a's line can no longer send
    expect(await run(issuer, [allow(a, 0)])).toEqual(["allowTrustSuccess"]);
    expect(await run(a, [pay(b, usd, "1")])).toEqual(["paymentSrcNotAuthorized"]);
    expect(await run(issuer, [authorize(Keypair.random())])).toEqual(["setTrustLineFlagsNoTrustLine"]);
  });

  test("path payments: one asset with an empty path pays; across assets, with no order book, TOO_FEW_OFFERS", async () => {
    const [issuer, a, b] = [await t.funded(), await t.funded(), await t.funded()];
    const usd = new Asset("USD", issuer.publicKey());
    await run(a, [trust(usd)]);
    await run(b, [trust(usd)]);
    await run(issuer, [pay(a, usd, "50")]);
    const send = (sendAsset: Asset, destAsset: Asset) =>
      Operation.pathPaymentStrictSend({
        sendAsset,
        sendAmount: "5",
        destination: b.publicKey(),
        destAsset,
        destMin: "5",
      });
    const receive = (sendAsset: Asset, destAsset: Asset) =>
      Operation.pathPaymentStrictReceive({
        sendAsset,
        sendMax: "5",
        destination: b.publicKey(),
        destAsset,
        destAmount: "4",
      });
    expect(await run(a, [send(usd, usd)])).toEqual(["pathPaymentStrictSendSuccess"]);
    expect(await run(a, [receive(usd, usd)])).toEqual(["pathPaymentStrictReceiveSuccess"]);
    expect((await line(b, usd))!.balance).toBe("9.0000000");
    expect(await run(a, [send(Asset.native(), usd)])).toEqual(["pathPaymentStrictSendTooFewOffers"]);
    expect(await run(a, [receive(usd, Asset.native())])).toEqual(["pathPaymentStrictReceiveTooFewOffers"]);
  });
});

describe("reserve sponsorship (CAP-33)", () => {
  const begin = (sponsored: Keypair) => Operation.beginSponsoringFutureReserves({ sponsoredId: sponsored.publicKey() });
  const end = (sponsored: Keypair) => Operation.endSponsoringFutureReserves({ source: sponsored.publicKey() });

  test("a sponsored createAccount with 0 XLM: the sponsor pays its reserve, both accounts count it", async () => {
    const sponsor = await t.funded();
    const fresh = Keypair.random();
    const ops = [
      begin(fresh),
      Operation.createAccount({ destination: fresh.publicKey(), startingBalance: "0" }),
      end(fresh),
    ];
    expect(await run(sponsor, ops, [sponsor, fresh])).toEqual([
      "beginSponsoringFutureReservesSuccess",
      "createAccountSuccess",
      "endSponsoringFutureReservesSuccess",
    ]);
    const [s, f] = [await account(sponsor), await account(fresh)];
    expect(s.num_sponsoring).toBe(2);
    expect(f.num_sponsored).toBe(2);
    expect(f.sponsor).toBe(sponsor.publicKey());
    expect(f.balances.at(-1)!.balance).toBe("0.0000000");
    const accountKey = xdr.LedgerKey.account(new xdr.LedgerKeyAccount({ accountId: fresh.xdrAccountId() }));
    const got = await t.rpc.getLedgerEntries(accountKey);
    const wire = (got.entries[0].val as xdr.LedgerEntryDataAccount).toXdrObject();
    const v2 = (wire.account.ext as any).v1.ext.v2;
    expect([v2.numSponsored, v2.numSponsoring]).toEqual([2, 0]);
    // without sponsorship the same 0 XLM account is too poor
    const unsponsored = Operation.createAccount({ destination: Keypair.random().publicKey(), startingBalance: "0" });
    expect(await run(sponsor, [unsponsored])).toEqual(["createAccountLowReserve"]);
  });

  test("a begin without its end fails the transaction (txBAD_SPONSORSHIP); a sponsor that cannot pay: LOW_RESERVE", async () => {
    const sponsor = await t.funded();
    const fresh = Keypair.random();
    expect(
      await run(sponsor, [
        begin(fresh),
        Operation.createAccount({ destination: fresh.publicKey(), startingBalance: "1" }),
      ]),
    ).toEqual(["txBadSponsorship"]);
    expect(t.net.account(fresh.publicKey())).toBeUndefined();
    expect(await run(sponsor, [end(sponsor)])).toEqual(["endSponsoringFutureReservesNotSponsored"]);
    // a sponsor at its minimum balance
    const poor = Keypair.random();
    await run(sponsor, [Operation.createAccount({ destination: poor.publicKey(), startingBalance: "1.0000300" })]);
    const other = Keypair.random();
    expect(
      await run(
        poor,
        [begin(other), Operation.createAccount({ destination: other.publicKey(), startingBalance: "0" }), end(other)],
        [poor, other],
      ),
    ).toEqual([
      "beginSponsoringFutureReservesSuccess",
      "createAccountLowReserve",
      "endSponsoringFutureReservesSuccess",
    ]);
  });

  test("a sponsored trustline: the sponsor named on its balance; revoked, its owner pays; removed, the sponsor is freed", async () => {
    const [issuer, sponsor, a] = [await t.funded(), await t.funded(), await t.funded()];
    const usd = new Asset("USD", issuer.publicKey());
    const ops = [begin(a), Operation.changeTrust({ asset: usd, source: a.publicKey() }), end(a)];
    expect(await run(sponsor, ops, [sponsor, a])).toEqual([
      "beginSponsoringFutureReservesSuccess",
      "changeTrustSuccess",
      "endSponsoringFutureReservesSuccess",
    ]);
    expect((await line(a, usd))!.sponsor).toBe(sponsor.publicKey());
    expect([(await account(sponsor)).num_sponsoring, (await account(a)).num_sponsored]).toEqual([1, 1]);
    // only the sponsor may revoke; then the owner pays the reserve itself
    const revoke = Operation.revokeTrustlineSponsorship({ account: a.publicKey(), asset: usd });
    expect(await run(a, [revoke])).toEqual(["revokeSponsorshipNotSponsor"]);
    expect(await run(sponsor, [revoke])).toEqual(["revokeSponsorshipSuccess"]);
    expect((await line(a, usd))!.sponsor).toBeUndefined();
    expect([(await account(sponsor)).num_sponsoring, (await account(a)).num_sponsored]).toEqual([0, 0]);
    expect((await account(a)).subentry_count).toBe(1);
  });
});

describe("getEvents: classic payments' events (CAP-67)", () => {
  test("a mint, a transfer and a burn at the asset's contract, filtered by contract and topic, paged by cursor", async () => {
    const [issuer, a, b] = [await t.funded(), await t.funded(), await t.funded()];
    const usd = new Asset("USD", issuer.publicKey());
    const startLedger = (await t.rpc.getLatestLedger()).sequence + 1; // after the funding ledgers
    await run(a, [trust(usd)]);
    await run(b, [trust(usd)]);
    await run(issuer, [pay(a, usd, "100")]);
    await run(a, [pay(b, usd, "30"), pay(issuer, usd, "5")]);
    await run(a, [pay(b, usd, "1"), pay(Keypair.random(), usd, "1")]); // failed: no events
    const sac = usd.contractId(t.passphrase);
    const all = await t.rpc.getEvents({ startLedger, filters: [{ type: "contract", contractIds: [sac] }] });
    const seen = all.events.map((e) => [
      scValToNative(e.topic[0]),
      ...e.topic.slice(1, -1).map((x) => scValToNative(x)),
      scValToNative(e.value),
    ]);
    expect(seen).toEqual([
      ["mint", a.publicKey(), 1_000_000_000n],
      ["transfer", a.publicKey(), b.publicKey(), 300_000_000n],
      ["burn", a.publicKey(), 50_000_000n],
    ]);
    expect(all.events.every((e) => scValToNative(e.topic.at(-1)!) === `USD:${issuer.publicKey()}`)).toBe(true);
    expect(all.events[1].operationIndex).toBe(0);
    expect(all.events[2].operationIndex).toBe(1);
    expect(all.events[1].id < all.events[2].id).toBe(true);
    // a topic filter: transfers to b only
    const toB = [
      nativeToScVal("transfer", { type: "symbol" }),
      "*",
      nativeToScVal(Address.fromString(b.publicKey())),
      "*",
    ];
    const filtered = await t.rpc.getEvents({
      startLedger,
      filters: [{ contractIds: [sac], topics: [toB.map((x) => (typeof x === "string" ? x : x.toXDR("base64")))] }],
    });
    expect(filtered.events.map((e) => e.id)).toEqual([all.events[1].id]);
    // one at a time, by cursor
    const first = await t.rpc.getEvents({ startLedger, filters: [{ contractIds: [sac] }], limit: 1 });
    const next = await t.rpc.getEvents({ cursor: first.cursor, filters: [{ contractIds: [sac] }], limit: 2 });
    expect([...first.events, ...next.events].map((e) => e.id)).toEqual(all.events.map((e) => e.id));
    // native lumens' transfers are at the native asset's contract
    const native = await t.rpc.getEvents({
      startLedger,
      filters: [{ contractIds: [Asset.native().contractId(t.passphrase)] }],
    });
    expect(native.events).toHaveLength(0);
    await run(a, [Operation.payment({ destination: b.publicKey(), asset: Asset.native(), amount: "2" })]);
    const lumens = await t.rpc.getEvents({
      startLedger,
      filters: [{ contractIds: [Asset.native().contractId(t.passphrase)] }],
    });
    expect(lumens.events.map((e) => scValToNative(e.value))).toEqual([20_000_000n]);
  });

  test("the network's refusals: a start outside the ledgers kept (-32600), a bad filter type; an empty range", async () => {
    const latest = (await t.rpc.getLatestLedger()).sequence;
    const raw = await fetch(`${t.url}/rpc`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "getEvents", params: { startLedger: latest + 10 } }),
    });
    expect(((await raw.json()) as { error: { code: number } }).error.code).toBe(-32600);
    const none = await t.rpc.getEvents({
      startLedger: latest,
      endLedger: latest + 1,
      filters: [{ contractIds: [new Asset("ZZZ", Keypair.random().publicKey()).contractId(t.passphrase)] }],
    });
    expect(none.events).toEqual([]);
    expect(none.cursor).toMatch(/^\d{19}-\d{10}$/);
    await expect(t.rpc.getEvents({ startLedger: latest + 10, filters: [] })).rejects.toThrow(
      /startLedger must be between/,
    );
    await expect(t.rpc.getEvents({ startLedger: latest, filters: [{ type: "diagnostic" as never }] })).rejects.toThrow(
      /type must be either/,
    );
  });
});

test("a credit asset's contract cannot be deployed: the simulation says so (its trustlines work through classic operations)", async () => {
  const issuer = await t.funded();
  const usd = new Asset("USD", issuer.publicKey());
  const tx = (await builder(t, issuer)).addOperation(Operation.createStellarAssetContract({ asset: usd })).build();
  const sim = await t.rpc.simulateTransaction(tx);
  expect("error" in sim && sim.error).toContain("does not deploy Stellar Asset Contracts for credit assets");
});
