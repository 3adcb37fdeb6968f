/**
 * A func+auth operation answered 504 (its ledger not closed in time), sent again while it may still be
 * queued: 504 again, with the status its record has (the network took it: submitted), then its outcome once
 * it lands, charged once what the chain charged. These relays close ledgers only when the test says so.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import {
  Address,
  Asset,
  authorizeEntry,
  nativeToScVal,
  Operation,
  rpc,
  TransactionBuilder,
} from "@stellar/stellar-sdk";
import { fundedMainnetUser } from "../support/mainnet.ts";
import { AFTER_504_ENV, startTestRelay, type TestRelay } from "../support/relay.ts";
import { until } from "../support/harness.ts";

let r: TestRelay;
beforeAll(async () => {
  r = await startTestRelay(AFTER_504_ENV);
});
afterAll(() => r.stop());

/** An invokeHostFunction operation: a SAC transfer of 5 stroops from `from` to `to`, authorised by `from`. */
async function signedTransfer(server: rpc.Server, passphrase: string, from: string, to: string, sign: never) {
  const addr = (pk: string) => nativeToScVal(Address.fromString(pk));
  const transfer = (auth: never[] = []) =>
    Operation.invokeContractFunction({
      contract: Asset.native().contractId(passphrase),
      function: "transfer",
      args: [addr(from), addr(to), nativeToScVal(5n, { type: "i128" })],
      auth,
    });
  const builder = new TransactionBuilder(await server.getAccount(to), { fee: "100", networkPassphrase: passphrase });
  const sim = await server.simulateTransaction(builder.addOperation(transfer()).setTimeout(60).build());
  if (!rpc.Api.isSimulationSuccess(sim)) throw new Error("the transfer did not simulate");
  const signed = await authorizeEntry(sim.result!.auth[0]!, sign, sim.latestLedger + 100, passphrase);
  return transfer([signed as never]).toXDR("base64");
}

test("a func+auth resend while the first may be queued: 504 with its recorded status, then its outcome, charged once", async () => {
  const net = r.networks.get("mainnet").localnet!;
  const server = new rpc.Server(`${r.url}/localnet/mainnet/rpc`, { allowHttp: true });
  const credits = 100_000_000n;
  const p = await r.project({ credits, policy: { requestsPerSecond: 1000, burst: 1000 } });
  const [from, to] = [await fundedMainnetUser(r), await fundedMainnetUser(r)];
  const operation = await signedTransfer(server, net.passphrase, from.publicKey(), to.publicKey(), from as never);
  const send = () => r.post("/v1/sponsor", { operation, network: "mainnet" }, { "x-api-key": p.liveKey });
  const first = await send();
  expect(first.status).toBe(504);
  expect(first.body.error.details.status).toBe("submitted"); // the network took it; no ledger closed
  const innerHash = first.body.error.details.innerHash as string;
  const again = await send();
  expect(again.status).toBe(504);
  expect(again.body.error.details).toMatchObject({ reason: "pending", status: "submitted", innerHash });
  const look = await r.http.get(`/v1/transactions/${innerHash}`, { "x-api-key": p.liveKey });
  expect(look.body.status).toBe(again.body.error.details.status);
  // through another project: 504 too, naming nothing of the first project's record (its fee-bump, its status)
  const other = await r.project({ credits, policy: { requestsPerSecond: 1000, burst: 1000 } });
  const theirs = await r.post("/v1/sponsor", { operation, network: "mainnet" }, { "x-api-key": other.liveKey });
  expect(theirs.status).toBe(504);
  expect(theirs.body.error.details).toMatchObject({ hash: innerHash, reason: "pending", status: "pending" });
  net.closeLedger();
  let landed = await send();
  await until("its outcome", async () => (landed = await send()).status === 200, 10_000, 100);
  const onChain = await server.getTransaction(landed.body.hash);
  expect(onChain.status).toBe(rpc.Api.GetTransactionStatus.SUCCESS);
  expect(landed.body.feePaid).toBe(String((onChain as rpc.Api.GetSuccessfulTransactionResponse).resultXdr.feeCharged));
  const v = async () => (await r.admin("GET", `/projects/${p.id}`)).body;
  await until("settled", async () => (await v()).creditReserved === "0", 10_000, 50);
  expect(BigInt((await v()).creditBalance)).toBe(credits - BigInt(landed.body.feePaid));
});
