/**
 * x402 `exact` payments on a test relay's testnet, built as @x402/stellar's client builds them (a
 * transaction from the null account with one SAC transfer whose address credentials are signed), with
 * the knobs the refusal tests turn: V2 credentials, the expiration, the asset, the amount.
 */
import {
  Account,
  Address,
  Asset,
  authorizeEntry,
  type Keypair,
  nativeToScVal,
  Operation,
  rpc,
  TransactionBuilder,
  type xdr,
} from "@stellar/stellar-sdk";
import type { TestRelay } from "../support/relay.ts";

export const NULL_ACCOUNT = "GAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAWHF";
export const sac = (r: TestRelay) => Asset.native().contractId(r.passphrase);

export interface Requirements {
  scheme: string;
  network: string;
  amount: string;
  asset: string;
  payTo: string;
  maxTimeoutSeconds: number;
  extra: Record<string, unknown>;
}

/** A network of the test relay: its RPC client and passphrase (default: testnet). */
export interface Net {
  rpc: rpc.Server;
  passphrase: string;
  caip2: string;
}
export const testnet = (r: TestRelay): Net => ({ rpc: r.rpc, passphrase: r.passphrase, caip2: "stellar:testnet" });
export const mainnet = (r: TestRelay): Net => ({
  rpc: new rpc.Server(`${r.url}/localnet/mainnet/rpc`, { allowHttp: true }),
  passphrase: r.networks.get("mainnet").localnet!.passphrase,
  caip2: "stellar:pubnet",
});

export const requirements = (r: TestRelay, payTo: string, amount: bigint, net = testnet(r)): Requirements => ({
  scheme: "exact",
  network: net.caip2,
  amount: amount.toString(),
  asset: Asset.native().contractId(net.passphrase),
  payTo,
  maxTimeoutSeconds: 60,
  extra: { areFeesSponsored: true },
});

const addr = (pk: string) => nativeToScVal(Address.fromString(pk));

export interface PaymentOptions {
  /** Simulate with useUpgradedAuth: CAP-71 AddressV2 credentials. */
  upgraded?: boolean;
  /** Ledgers from now the entry expires (default 10). */
  expiresIn?: number;
  /** Sign the entry (default true). */
  sign?: boolean;
  /** Another contract than the native SAC, or another operation source. */
  contract?: string;
  source?: string;
  to?: string;
  amount?: bigint;
  /** The network (default testnet). */
  net?: Net;
}

/** The payment's transaction (base64 envelope) of `payer` paying `amount` to `payTo`. */
export async function payment(r: TestRelay, payer: Keypair, payTo: string, amount: bigint, o: PaymentOptions = {}) {
  const net = o.net ?? testnet(r);
  const op = (auth: xdr.SorobanAuthorizationEntry[] = []) =>
    Operation.invokeContractFunction({
      contract: o.contract ?? Asset.native().contractId(net.passphrase),
      function: "transfer",
      args: [addr(payer.publicKey()), addr(o.to ?? payTo), nativeToScVal(o.amount ?? amount, { type: "i128" })],
      auth,
      ...(o.source ? { source: o.source } : {}),
    });
  const build = (operation: xdr.Operation, source = NULL_ACCOUNT) =>
    new TransactionBuilder(new Account(source, "0"), { fee: "100", networkPassphrase: net.passphrase })
      .addOperation(operation)
      .setTimeout(300)
      .build();
  const sim = await net.rpc.simulateTransaction(build(op()), undefined, undefined, o.upgraded ?? false);
  if (!rpc.Api.isSimulationSuccess(sim)) throw new Error(`simulation failed: ${JSON.stringify(sim)}`);
  const entry = sim.result!.auth[0]!;
  const signed =
    o.sign === false
      ? entry
      : await authorizeEntry(entry, payer, sim.latestLedger + (o.expiresIn ?? 10), net.passphrase);
  return { transaction: build(op([signed])).toXDR(), entry: signed };
}

export const body = (transaction: string, req: Requirements, accepted: Partial<Requirements> = {}) => ({
  x402Version: 2,
  paymentPayload: { x402Version: 2, accepted: { ...req, ...accepted }, payload: { transaction } },
  paymentRequirements: req,
});
