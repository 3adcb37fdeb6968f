/**
 * The channels plugin's transaction requests, run by the relay's own services: a signed `xdr` by
 * SponsorService.sponsor, a `func` + `auth` pair (or an unsigned invocation) by sponsorOperation, so
 * that keys, projects, credits, policies and rate limits apply exactly as on POST /v1/sponsor;
 * `getTransaction` by TransactionsService.lookup in the caller's scope (its project, on the URL's
 * network, which is its key's). `skipWait` answers once the network has accepted the fee-bump
 * (SponsorHooks.accepted), as Prefer: respond-async does.
 *
 * Ids: a submission's `transactionId` is its inner hash (what the client signed; for func+auth the
 * operation's SHA-256), the id GET /v1/transactions/{hash} takes too; `hash` is the fee-bump's,
 * the transaction in the ledger.
 */
import { Account, TransactionBuilder, xdr } from "@stellar/stellar-sdk";
import { RelayError } from "../../kernel/errors.ts";
import type { NetworkName } from "../../stellar/networks.ts";
import { BASE_FEE } from "../../stellar/protocol.ts";
import type { Outcome } from "../../store/types.ts";
import type { Payer } from "../projects/principal.ts";
import type { SponsorService } from "../sponsor/sponsor.service.ts";
import { earliest } from "../sponsor/run.ts";
import type { TransactionsService } from "../transactions/transactions.service.ts";
import { describeEvents } from "../tx/simulate.service.ts";
import type { Networks } from "../networks/networks.ts";
import type { SubmissionStatus } from "../../../actors/sponsor/submission.machine.ts";
import type { FlatFields } from "../../kernel/log.ts";
import {
  CHANNELS_STATUS,
  operationOf,
  unsignedInvocation,
  type ChannelsRequest,
  type ChannelsTransaction,
} from "./channels-protocol.ts";

type Accepted = { hash: string; innerHash: string };
type Submit = Extract<ChannelsRequest, { kind: "xdr" | "func-auth" }>;

export interface ChannelsServiceDeps {
  sponsor: SponsorService;
  transactions: TransactionsService;
  networks: Networks;
}

/** Adds what a request's answer says about the transaction to its access log line. */
export type Annotate = (fields: FlatFields) => void;

export class ChannelsService {
  constructor(private readonly deps: ChannelsServiceDeps) {}

  /** A submission: the final answer (confirmed, or an error thrown), or with skipWait the network's acceptance. */
  async submit(req: Submit, network: NetworkName, payer: Payer, annotate: Annotate): Promise<ChannelsTransaction> {
    const gw = this.deps.networks.get(network).gateway;
    let operation: string | null;
    if (req.kind === "func-auth") {
      const readonly = req.auth.length === 0 ? await this.readOnly(network, req.func) : null;
      if (readonly) return readonly;
      operation = operationOf(req.func, req.auth);
    } else operation = unsignedInvocation(req.xdr, gw.passphrase); // an unsigned invocation: func+auth mode

    const run =
      operation !== null
        ? await this.deps.sponsor.sponsorOperation(operation, network, payer)
        : await this.deps.sponsor.sponsor((req as Extract<Submit, { kind: "xdr" }>).xdr, network, payer);
    // skipWait: answered on acceptance (whatever it ends with is recorded), unless another project's
    // submission answers it (`earliest`): its id would name a record this caller cannot look up
    const first: Outcome | Accepted = req.skipWait ? await earliest(run) : await run.outcome;
    if (!("kind" in first)) {
      annotate({ projectId: payer.projectId, network, hash: first.hash, result: "submitted" });
      return { transactionId: first.innerHash, hash: first.hash, status: "submitted" };
    }
    return answer(first, payer, network, annotate);
  }

  /** A submission of the caller's on `network` by the id answered for it (or either hash), as it stands. */
  async lookup(projectId: string | null, network: NetworkName, transactionId: string): Promise<ChannelsTransaction> {
    const v = await this.deps.transactions.lookup({ projectId, network }, transactionId, 0);
    const status = v.status as SubmissionStatus;
    return {
      transactionId: v.innerHash,
      // the plugin's hash is null until the transaction was sent
      hash: v.attempts.length > 0 || status === "success" || status === "failed" ? v.hash : null,
      status: CHANNELS_STATUS[status] ?? v.status,
    };
  }

  /**
   * A call without authorization entries that writes nothing is answered from its simulation, as the
   * plugin does (status `readonly`, the return value, the ledger): nothing is submitted or paid. Null:
   * it writes or needs authorization (it is submitted).
   */
  private async readOnly(network: NetworkName, func: xdr.HostFunction): Promise<ChannelsTransaction | null> {
    const { gateway: gw, pool } = this.deps.networks.get(network);
    if (!pool) return null; // sponsorOperation says why it cannot run
    const op = xdr.Operation.fromXDR(operationOf(func, []), "base64");
    const tx = new TransactionBuilder(new Account(pool.simulationSource(), "0"), {
      fee: BASE_FEE.toString(),
      networkPassphrase: gw.passphrase,
    })
      .addOperation(op)
      .setTimeout(0)
      .build();
    const sim = await gw.simulate(tx);
    if (sim.error) throw new RelayError("SIMULATION_FAILED", sim.error, { events: describeEvents(sim.events) });
    const result = sim.results?.[0];
    if (!result || (result.auth?.length ?? 0) > 0 || !sim.transactionData) return null;
    const data = xdr.SorobanTransactionData.fromXDR(sim.transactionData, "base64");
    if (data.resources.footprint.readWrite.length > 0) return null;
    return {
      transactionId: null,
      hash: null,
      status: "readonly",
      returnValue: result.xdr,
      latestLedger: sim.latestLedger,
    };
  }
}

/** A sponsor outcome as the plugin answers it: confirmed, or the error (thrown, translated by the route). */
function answer(o: Outcome, payer: Payer, network: NetworkName, annotate: Annotate): ChannelsTransaction {
  if (o.kind === "success") {
    annotate({ projectId: payer.projectId, network, hash: o.result.hash, result: "success" });
    return { transactionId: o.result.innerHash ?? null, hash: o.result.hash, status: "confirmed" };
  }
  const d = o.error.details as { hash?: string; result_codes?: { transaction?: string } } | undefined;
  annotate({
    projectId: payer.projectId,
    network,
    hash: d?.hash,
    result: d?.result_codes?.transaction ?? o.error.code,
  });
  throw RelayError.from(o.error);
}
