/**
 * Test harness: a localnet on a random port, driven through the official SDK clients.
 * `ledgerCloseMs: 0` gives a network whose ledgers close only when the test calls `close()`.
 */
import { Elysia } from "elysia";
import {
  Asset,
  Horizon,
  Keypair,
  Networks,
  Operation,
  rpc,
  TransactionBuilder,
  type Transaction,
  type FeeBumpTransaction,
  type xdr,
} from "@stellar/stellar-sdk";
import { Localnet, type LocalnetOptions } from "../../src/localnet/ledger.ts";
import { localnetHttp } from "../../src/localnet/server.ts";

export interface TestNet {
  net: Localnet;
  url: string;
  rpc: rpc.Server;
  horizon: Horizon.Server;
  passphrase: string;
  /** Closes a ledger now. */
  close(): number;
  /** A new account funded by friendbot (10,000 XLM). */
  funded(): Promise<Keypair>;
  /** Sends through RPC and waits (closing ledgers when manual) for the final status. */
  submit(
    tx: Transaction | FeeBumpTransaction,
  ): Promise<rpc.Api.GetTransactionResponse & { send: rpc.Api.SendTransactionResponse }>;
  stop(): Promise<void>;
}

/** Options of the HTTP side of the test network (not of the Localnet itself). */
export interface TestNetHttpOptions {
  /** How long Horizon's synchronous POST /transactions waits for a ledger before its 504 (default 5000). */
  submissionTimeoutMs?: number;
}

export async function startLocalnet(opts: Partial<LocalnetOptions> & TestNetHttpOptions = {}): Promise<TestNet> {
  const { submissionTimeoutMs = 5000, ...netOpts } = opts;
  const net = new Localnet({ passphrase: Networks.STANDALONE, ledgerCloseMs: 100, ...netOpts });
  const app = new Elysia().use(localnetHttp(net, { base: "", horizonPath: "", submissionTimeoutMs })).listen(0);
  const url = `http://127.0.0.1:${app.server!.port}`;
  net.start();
  const manual = net.ledgerCloseMs <= 0;
  const server = new rpc.Server(`${url}/rpc`, { allowHttp: true });
  const fast = { attempts: 100, sleepStrategy: () => 20 };
  const t: TestNet = {
    net,
    url,
    passphrase: net.passphrase,
    rpc: server,
    horizon: new Horizon.Server(url, { allowHttp: true }),
    close: () => net.closeLedger().sequence,
    async funded() {
      const kp = Keypair.random();
      let done = false;
      const res = fetch(`${url}/friendbot?addr=${kp.publicKey()}`).finally(() => {
        done = true;
      });
      // Manual ledgers: close once friendbot's transaction is queued (a fixed sleep raced a slow machine).
      const root = net.root.publicKey();
      while (manual && !done) {
        if (net.queue.bySource.has(root)) net.closeLedger();
        await Bun.sleep(1);
      }
      const r = await res;
      if (r.status !== 200) throw new Error(`friendbot: ${r.status} ${await r.text()}`);
      return kp;
    },
    async submit(tx) {
      const send = await server.sendTransaction(tx);
      if (send.status !== "PENDING" && send.status !== "DUPLICATE") return { send } as never;
      if (manual) net.closeLedger();
      const got = await server.pollTransaction(send.hash, fast);
      return Object.assign(got, { send });
    },
    async stop() {
      net.stop();
      await app.stop();
    },
  };
  return t;
}

/** A transaction builder for `source` at its current sequence on the test network. */
export async function builder(t: TestNet, source: Keypair, fee = "100"): Promise<TransactionBuilder> {
  const account = await t.rpc.getAccount(source.publicKey());
  return new TransactionBuilder(account, { fee, networkPassphrase: t.passphrase }).setTimeout(60);
}

// ---- reading results (SDK v17 names of result codes: "txBadSeq", "paymentUnderfunded", ...) ----------

export const S = rpc.Api.GetTransactionStatus;

/** A transaction's hash, hex. */
export const hex = (tx: Transaction | FeeBumpTransaction): string => Buffer.from(tx.hash()).toString("hex");

/** A native payment of `amount` XLM to `to`. */
export const pay = (to: string, amount = "1") => Operation.payment({ destination: to, asset: Asset.native(), amount });

/** The response of a transaction found in a ledger (fails the test otherwise). */
export function applied(
  r: rpc.Api.GetTransactionResponse,
): rpc.Api.GetSuccessfulTransactionResponse | rpc.Api.GetFailedTransactionResponse {
  if (r.status === S.NOT_FOUND) throw new Error("transaction not found");
  return r;
}

/** A transaction result's code. */
export const txCode = (r: xdr.TransactionResult | undefined): string => (r!.result as { type: string }).type;

/** The operation results of a plain or fee-bump transaction result. */
export function opResults(r: xdr.TransactionResult): xdr.OperationResult[] {
  const res = r.result;
  if (res.type === "txFeeBumpInnerSuccess" || res.type === "txFeeBumpInnerFailed") {
    const inner = res.value.result.result;
    if (inner.type === "txSuccess" || inner.type === "txFailed") return inner.value;
    throw new Error(`no operation results in ${inner.type}`);
  }
  if (res.type === "txSuccess" || res.type === "txFailed") return res.value;
  throw new Error(`no operation results in ${res.type}`);
}

/** The InvokeHostFunctionResult arm name of a transaction's only operation. */
export function invokeResult(r: xdr.TransactionResult): string {
  const op = opResults(r)[0]!;
  if (op.type !== "opInner") return op.type;
  const tr = op.tr;
  if (tr.type !== "invokeHostFunction") throw new Error(`not an invoke result: ${tr.type}`);
  return tr.invokeHostFunctionResult.type;
}
