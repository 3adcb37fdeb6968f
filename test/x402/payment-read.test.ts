/**
 * readPayment (src/features/x402/payment.ts) on CAP-71's with-delegates credentials, which the
 * localnet cannot simulate: the payer's entry is read through its delegates, and a relay account
 * among the delegates (nested ones too) is refused.
 */
import { expect, test } from "bun:test";
import {
  Account,
  Address,
  Asset,
  Keypair,
  nativeToScVal,
  Networks,
  Operation,
  TransactionBuilder,
  xdr,
} from "@stellar/stellar-sdk";
import { readPayment } from "../../src/features/x402/payment.ts";
import { X, fromB64 } from "../../src/stellar/xdr.ts";
import { NULL_ACCOUNT } from "./payments.ts";

const asset = Asset.native().contractId(Networks.TESTNET);
const payer = Keypair.random().publicKey();
const payTo = Keypair.random().publicKey();
const relay = Keypair.random().publicKey();
const req = { scheme: "exact", network: "stellar:testnet", amount: "7", asset, payTo, maxTimeoutSeconds: 60 };
const account = (pk: string) => X.scVal.decode(nativeToScVal(Address.fromString(pk)).toXdr()) as { address: unknown };
const signature = X.scVal.decode(
  nativeToScVal([{ public_key: Buffer.alloc(32), signature: Buffer.alloc(64) }]).toXdr(),
);

/** A payment whose one entry has with-delegates credentials; `delegates` as wire objects. */
function withDelegates(delegates: unknown[]): string {
  const args = [
    nativeToScVal(Address.fromString(payer)),
    nativeToScVal(Address.fromString(payTo)),
    nativeToScVal(7n, { type: "i128" }),
  ];
  const op = Operation.invokeContractFunction({ contract: asset, function: "transfer", args });
  const invocation = X.operation.decode(op.toXdr()) as {
    body: { invokeHostFunctionOp: { hostFunction: { invokeContract: unknown } } };
  };
  const entry = {
    credentials: {
      type: 3,
      addressWithDelegates: {
        addressCredentials: { address: account(payer).address, nonce: 1n, signatureExpirationLedger: 100, signature },
        delegates,
      },
    },
    rootInvocation: {
      function: { type: 0, contractFn: invocation.body.invokeHostFunctionOp.hostFunction.invokeContract },
      subInvocations: [],
    },
  };
  const signed = Operation.invokeContractFunction({
    contract: asset,
    function: "transfer",
    args,
    auth: [xdr.SorobanAuthorizationEntry.fromXdr(X.sorobanAuth.encode(entry as never))],
  });
  return new TransactionBuilder(new Account(NULL_ACCOUNT, "0"), { fee: "100", networkPassphrase: Networks.TESTNET })
    .addOperation(signed)
    .setTimeout(60)
    .build()
    .toXDR();
}
const delegate = (pk: string, nested: unknown[] = []) => ({
  address: account(pk).address,
  signature,
  nestedDelegates: nested,
});

test("with-delegates credentials: read as the payer's signed entry; a relay account among the delegates is refused", () => {
  const ok = readPayment(withDelegates([delegate(Keypair.random().publicKey())]), req, (a) => a === relay);
  expect("reason" in ok ? ok.reason : ok.payer).toBe(payer);
  if ("reason" in ok) return;
  expect(ok.credentials[0]).toMatchObject({ address: payer, expiration: 100, signed: true });
  expect(X.operation.decode(fromB64(ok.operation)).sourceAccount).toBeFalsy();
  for (const delegates of [[delegate(relay)], [delegate(Keypair.random().publicKey(), [delegate(relay)])]]) {
    const refused = readPayment(withDelegates(delegates), req, (a) => a === relay);
    expect(refused).toMatchObject({ reason: "invalid_exact_stellar_payload_facilitator_in_auth", payer });
  }
});
