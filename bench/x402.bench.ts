/**
 * `bun run bench:x402`: x402 settlements under surge. A standalone localnet in its own process with
 * a small Soroban lane (BENCH_SOROBAN_TXS a ledger, BENCH_LEDGER_MS), competing SAC transfers at
 * BENCH_LOAD times that lane with the surge bench's spread of bids, and two facilitators settling
 * `exact` payments beside them at BENCH_SETTLE_RATE each: the relay (POST /x402/settle, its fee
 * strategy's bid) and one that bids the base fee, as users of the hosted facilitators reported.
 * Prints, for each, how many ledgers after the request the payment landed (p50, p99, max).
 */
import {
  Account,
  Address,
  Asset,
  authorizeEntry,
  Keypair,
  nativeToScVal,
  Operation,
  rpc,
  TransactionBuilder,
  type xdr,
} from "@stellar/stellar-sdk";
import { startLocalnet } from "./e2e/localnet-proc.ts";
import { cleanup } from "./e2e/procs.ts";
import { projectKey, startRelay } from "./e2e/relay-proc.ts";
import { LedgerBook } from "./surge/ledgers.ts";
import { pace } from "./surge/pacer.ts";
import { competingBid } from "./surge/settings.ts";

const env = process.env;
const ledgerMs = Number(env.BENCH_LEDGER_MS ?? 2000);
const lane = Number(env.BENCH_SOROBAN_TXS ?? 8);
const load = Number(env.BENCH_LOAD ?? 2);
const settleRate = Number(env.BENCH_SETTLE_RATE ?? 1);
const seconds = Number(env.BENCH_SECONDS ?? 40);
const NULL_ACCOUNT = "GAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAWHF";
const PRICE = 1_000n;
const competingRate = (lane * 1000 * load) / ledgerMs;

console.log(
  `bench:x402: ${lane} Soroban transactions a ledger every ${ledgerMs} ms, competing transfers at ${load}x ` +
    `(${competingRate.toFixed(1)}/s), settlements ${settleRate}/s per facilitator for ${seconds} s`,
);

type Result = { sentLedger: number; ledger: number | null; error?: string };

try {
  const net = await startLocalnet(ledgerMs, undefined, 100_000, lane);
  const server = new rpc.Server(net.rpc, { allowHttp: true });
  const book = new LedgerBook(net.rpc, net.passphrase);
  await book.start();
  const sac = Asset.native().contractId(net.passphrase);
  const funded = async (n: number) => {
    const keys = Array.from({ length: n }, () => Keypair.random());
    for (let i = 0; i < keys.length; i += 20)
      await Promise.all(keys.slice(i, i + 20).map((k) => fetch(`${net.friendbot}?addr=${k.publicKey()}`)));
    return keys;
  };
  const merchant = Keypair.random().publicKey();
  const [competitors, payers, baseFacilitator, funder] = await Promise.all([
    funded(Math.ceil(competingRate * 12)),
    funded(Math.ceil(settleRate * seconds * 2) + 4),
    funded(1),
    funded(1),
  ]);
  await fetch(`${net.friendbot}?addr=${merchant}`);
  const relay = await startRelay({
    db: "pglite",
    upstream: { rpc: net.rpc, passphrase: net.passphrase, funderSecret: funder[0]!.secret() },
  });
  const key = await projectKey(relay, [merchant]);

  const transfer = (from: string, auth: xdr.SorobanAuthorizationEntry[] = [], to = merchant, amount = PRICE) =>
    Operation.invokeContractFunction({
      contract: sac,
      function: "transfer",
      args: [
        nativeToScVal(Address.fromString(from)),
        nativeToScVal(Address.fromString(to)),
        nativeToScVal(amount, { type: "i128" }),
      ],
      auth,
    });
  /** A payer's exact payment, built as @x402/stellar's client builds it (null source, its entry signed). */
  const payment = async (payer: Keypair) => {
    const build = (op: xdr.Operation) =>
      new TransactionBuilder(new Account(NULL_ACCOUNT, "0"), { fee: "100", networkPassphrase: net.passphrase })
        .addOperation(op)
        .setTimeout(300)
        .build();
    const sim = await server.simulateTransaction(build(transfer(payer.publicKey())));
    if (!rpc.Api.isSimulationSuccess(sim)) throw new Error("a payment's simulation failed");
    // expiring as the x402 client sets it: maxTimeoutSeconds over the scheme's 5-second ledgers (12)
    const entry = await authorizeEntry(sim.result!.auth[0]!, payer, sim.latestLedger + 12, net.passphrase);
    return build(transfer(payer.publicKey(), [entry])).toXDR();
  };
  const requirements = {
    scheme: "exact",
    network: "stellar:pubnet",
    amount: PRICE.toString(),
    asset: sac,
    payTo: merchant,
    maxTimeoutSeconds: 60,
    extra: { areFeesSponsored: true },
  };

  /** The relay settles: POST /x402/settle with the merchant's key. */
  const viaRelay = async (payer: Keypair): Promise<Result> => {
    const transaction = await payment(payer);
    const sentLedger = book.latest;
    const res = await fetch(`${relay.url}/x402/settle`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({
        x402Version: 2,
        paymentPayload: { x402Version: 2, accepted: requirements, payload: { transaction } },
        paymentRequirements: requirements,
      }),
    });
    const body = (await res.json()) as { success?: boolean; errorReason?: string; extra?: { ledger?: number } };
    return body.success
      ? { sentLedger, ledger: body.extra?.ledger ?? null }
      : { sentLedger, ledger: null, error: body.errorReason ?? String(res.status) };
  };
  /** A facilitator bidding the base fee: the payment's operation from its own account, 100 stroops of inclusion fee. */
  const facilitator = baseFacilitator[0]!;
  let facilitatorBusy = Promise.resolve();
  const atBaseFee = (payer: Keypair): Promise<Result> => {
    const run = facilitatorBusy.then(async (): Promise<Result> => {
      const transaction = TransactionBuilder.fromXDR(await payment(payer), net.passphrase);
      const op = (transaction as unknown as { operations: Operation.InvokeHostFunction[] }).operations[0]!;
      const source = await server.getAccount(facilitator.publicKey());
      const tx = new TransactionBuilder(source, { fee: "100", networkPassphrase: net.passphrase })
        .addOperation(Operation.invokeHostFunction({ func: op.func, auth: op.auth ?? [] }))
        .setTimeout(60)
        .build();
      const prepared = await server.prepareTransaction(tx);
      prepared.sign(facilitator);
      const sentLedger = book.latest;
      const sent = await server.sendTransaction(prepared);
      if (sent.status !== "PENDING" && sent.status !== "DUPLICATE")
        return { sentLedger, ledger: null, error: sent.status };
      const hash = Buffer.from(prepared.hash()).toString("hex");
      for (let l = sentLedger + 1; l <= sentLedger + 15; l++) {
        await book.waitFor(l);
        const inc = book.included.get(hash);
        if (inc) return { sentLedger, ledger: inc.ledger };
      }
      return { sentLedger, ledger: null, error: "not included in 15 ledgers" };
    });
    facilitatorBusy = run.then(() => {}); // one account: one transaction at a time
    return run;
  };

  // competing transfers: each competitor sends one at a time, at a bid from the surge bench's spread
  const busy = new Set<string>();
  let next = 0;
  const competing = pace(
    () => competingRate,
    () => {
      const k = competitors[next++ % competitors.length]!;
      if (busy.has(k.publicKey())) return false;
      busy.add(k.publicKey());
      void (async () => {
        try {
          const tx = new TransactionBuilder(await server.getAccount(k.publicKey()), {
            fee: competingBid().toString(),
            networkPassphrase: net.passphrase,
          })
            .addOperation(transfer(k.publicKey(), [], merchant, 1n))
            .setTimeout(60)
            .build();
          const prepared = await server.prepareTransaction(tx);
          prepared.sign(k);
          const sent = await server.sendTransaction(prepared);
          if (sent.status === "PENDING") await book.waitFor(book.latest + 3);
        } catch {
          /* refused or dropped: the next one goes */
        } finally {
          busy.delete(k.publicKey());
        }
      })();
      return true;
    },
  );
  await book.waitFor(book.latest + 3); // the lane is full before the settlements start

  const relayed: Promise<Result>[] = [];
  const based: Promise<Result>[] = [];
  let p = 0;
  const settling = pace(
    () => settleRate,
    () => {
      relayed.push(viaRelay(payers[p++]!));
      based.push(atBaseFee(payers[p++]!));
      return true;
    },
  );
  await Bun.sleep(seconds * 1000);
  settling.stop();
  const report = (name: string, rs: Result[]) => {
    const ledgers = rs
      .filter((r) => r.ledger !== null)
      .map((r) => r.ledger! - r.sentLedger)
      .sort((a, b) => a - b);
    const at = (q: number) => ledgers[Math.min(ledgers.length - 1, Math.floor(q * ledgers.length))] ?? "-";
    const errors = rs.filter((r) => r.ledger === null).map((r) => r.error);
    console.log(
      `${name.padEnd(34)} ${String(rs.length).padStart(5)} ${String(ledgers.length).padStart(6)}   ` +
        `${String(at(0.5)).padStart(3)} ${String(at(0.99)).padStart(3)} ${String(ledgers.at(-1) ?? "-").padStart(3)}` +
        (errors.length ? `   not landed: ${[...new Set(errors)].join(", ")}` : ""),
    );
  };
  const [a, b] = [await Promise.all(relayed), await Promise.all(based)];
  competing.stop();
  console.log("\nledgers from the request to the ledger that holds the payment (1: the next ledger)");
  console.log(`${"facilitator".padEnd(34)} ${"sent".padStart(5)} ${"landed".padStart(6)}   p50 p99 max`);
  report("the relay (POST /x402/settle)", a);
  report("a facilitator bidding the base fee", b);
  book.stop();
} finally {
  await cleanup();
}
