/**
 * The end user of a func+auth call (an operation and its authorization entries, no transaction) is
 * the address of a signed entry the invocation uses: an unsigned or unused entry added in front names
 * nobody (a user at a perUser cap cannot pass it by adding one, nor charge a victim's day with one),
 * and a call that no signed, used entry names is refused under a perUser cap, naming the rule.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Address, authorizeEntry, Keypair, nativeToScVal, Operation, StrKey, xdr } from "@stellar/stellar-sdk";
import { fromB64, toB64, X } from "../../src/stellar/xdr.ts";
import { expectError, expectOk } from "../support/harness.ts";
import { startTestRelay, type TestRelay } from "../support/relay.ts";
import { sacId, signedTransfer } from "../support/sac.ts";

let r: TestRelay;
beforeAll(async () => {
  r = await startTestRelay();
});
afterAll(() => r?.stop());

const sponsorOp = (operation: string, key: string) =>
  r.post("/v1/sponsor", { operation, network: "testnet" }, { "x-api-key": key });
const usage = async (projectId: string, account: string) =>
  (await r.admin("GET", `/projects/${projectId}/users/${account}`)).body.transactions;

/** `op` with `entry` put in front of its authorization entries. */
function withFirst(op: string, entry: Uint8Array): string {
  const w = X.operation.decode(fromB64(op));
  if (w.body.type !== 24) throw new Error("not an invocation");
  const body = w.body.invokeHostFunctionOp;
  const first = X.sorobanAuth.decode(entry);
  return toB64(
    X.operation.encode({ ...w, body: { ...w.body, invokeHostFunctionOp: { ...body, auth: [first, ...body.auth] } } }),
  );
}

/** An entry for `address` over the same invocation as `op`'s first, unsigned (signature void). */
function unsignedFor(op: string, address: string): Uint8Array {
  const w = X.operation.decode(fromB64(op));
  if (w.body.type !== 24) throw new Error("not an invocation");
  const real = w.body.invokeHostFunctionOp.auth[0]!;
  const account = { type: 0, accountId: { type: 0, ed25519: StrKey.decodeEd25519PublicKey(address) } };
  const credentials = {
    type: 1,
    address: { address: account, nonce: 7n, signatureExpirationLedger: 1_000_000, signature: { type: 1 } },
  };
  return X.sorobanAuth.encode({ ...real, credentials } as never);
}

test("an unsigned entry in front names nobody: a user at the cap stays at it, a victim named there is not charged", async () => {
  const p = await r.project({ policy: { perUser: { maxTransactionsPerDay: 1 } } });
  const [user, to, victim] = [await r.funded(), await r.funded(), await r.funded()];
  expectOk(await sponsorOp(await signedTransfer(r, user, to), p.testKey));
  expect(await usage(p.id, user.publicKey())).toBe(1);
  // at the cap: an unused, unsigned entry for a random address in front does not pass for another user
  const real = await signedTransfer(r, user, to);
  const forged = await sponsorOp(withFirst(real, unsignedFor(real, Keypair.random().publicKey())), p.testKey);
  expectError(forged, 429, "USER_LIMIT_EXCEEDED");
  expect(forged.body.error.details.user).toBe(user.publicKey());
  // another user's call naming the victim in front counts against its signer, not the victim
  const other = await r.funded();
  const named = await signedTransfer(r, other, to);
  expectOk(await sponsorOp(withFirst(named, unsignedFor(named, victim.publicKey())), p.testKey));
  expect(await usage(p.id, other.publicKey())).toBe(1);
  expect(await usage(p.id, victim.publicKey())).toBe(0);
  expectOk(await sponsorOp(await signedTransfer(r, victim, to), p.testKey)); // the victim's own first call
});

test("a signed entry the invocation does not use names nobody either", async () => {
  const p = await r.project({ policy: { perUser: { maxTransactionsPerDay: 1 } } });
  const [user, to] = [await r.funded(), await r.funded()];
  expectOk(await sponsorOp(await signedTransfer(r, user, to), p.testKey));
  const real = await signedTransfer(r, user, to);
  const stranger = Keypair.random();
  const unused = xdr.SorobanAuthorizationEntry.fromXDR(Buffer.from(unsignedFor(real, stranger.publicKey())));
  const latest = (await r.rpc.getLatestLedger()).sequence;
  const signedUnused = await authorizeEntry(unused, stranger, latest + 100, r.passphrase);
  const res = await sponsorOp(withFirst(real, new Uint8Array(signedUnused.toXDR())), p.testKey);
  expectError(res, 429, "USER_LIMIT_EXCEEDED");
  expect(res.body.error.details.user).toBe(user.publicKey());
});

test("a call no signed, used entry names (no entries at all) is refused under a perUser cap, naming the rule", async () => {
  const capped = await r.project({ policy: { perUser: { maxTransactionsPerDay: 1 } } });
  const who = await r.funded();
  const call = Operation.invokeContractFunction({
    contract: sacId(r),
    function: "balance",
    args: [nativeToScVal(Address.fromString(who.publicKey()))],
  }).toXDR("base64");
  for (let i = 0; i < 2; i++) {
    const res = await sponsorOp(call, capped.testKey);
    expectError(res, 403, "POLICY_VIOLATION");
    expect(res.body.error.details.rule).toBe("perUser");
  }
  const uncapped = await r.project();
  expectOk(await sponsorOp(call, uncapped.testKey)); // without the cap, no user is needed
});
