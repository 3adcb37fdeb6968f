/**
 * Intake: what a sponsorship request becomes before its run, the only part in which the two modes
 * differ. A client's signed transaction is decoded and wrapped in a fee-bump; a client's
 * invokeHostFunction operation (func+auth mode) is answered by an earlier run's outcome when there is
 * one, else simulated and assembled from a channel account. Each gives its inner hash at once (the
 * run's key), then its job and what admission checks (`prepare`).
 */
import { Operation, type Transaction } from "@stellar/stellar-sdk";
import { RelayError } from "../../kernel/errors.ts";
import { BASE_FEE } from "../../stellar/protocol.ts";
import type { Outcome, SubmissionStore } from "../../store/types.ts";
import type { NetworkName } from "../../stellar/networks.ts";
import type { Network, Networks } from "../networks/networks.ts";
import type { ChannelPool } from "../pool/channel-pool.ts";
import type { Payer } from "../projects/principal.ts";
import { summarize, summarizeAll } from "../projects/rules/touches.ts";
import { type DecodedTx, decodeTransaction, sdkInner } from "../tx/decode.ts";
import { innerRate } from "../tx/fee-bump.ts";
import { type DecodedOperation, decodeOperation } from "../tx/invoke.ts";
import type { Admission, Wanted } from "./admission.ts";
import { feeBumpJob, operationJob, type Job } from "./jobs.ts";
import { finalOutcome, mayStillBeQueued, outcomeOf } from "./outcomes.ts";
import { Run, type Pending, type Runs } from "./run.ts";
import type { Settlement } from "./settlement.ts";

/** A sponsorship's job, and what admission checks of it. */
export interface Prepared {
  job: Job;
  wanted: Wanted;
}

/**
 * What intake makes of a request: its inner hash, its account's order and what its job is built
 * from (`prepare`); or its refusal (not decodable, not for this network).
 */
export type Intake = Taken | { refused: Outcome };

export type Taken = {
  innerHash: string;
  /** A client's transaction's place in its source account's order (told when it is refused before its run). */
  order: { account: string; seq: bigint } | null;
  /**
   * A refusal by the relay's rules is kept as a rejected submission, to be looked up (a client's
   * transaction); an operation refused is no transaction yet (its source and sequence are chosen
   * when it is sent): nothing is kept, and another project may still send it.
   */
  refusalKept: boolean;
  net: Network;
} & ({ kind: "transaction"; decoded: DecodedTx } | { kind: "operation"; op: DecodedOperation; pool: ChannelPool });

const max = (...xs: bigint[]) => xs.reduce((a, b) => (a > b ? a : b));

export class Intakes {
  constructor(
    private readonly deps: {
      networks: Networks;
      submissions: SubmissionStore;
      runs: Runs;
      admission: Admission;
      settlement: Settlement;
    },
  ) {}

  /** A client's signed transaction: decoded (signatures and Soroban data checked), to be wrapped in a fee-bump. */
  transaction(transaction: string, network: NetworkName): Intake {
    try {
      const net = this.deps.networks.get(network);
      const decoded = decodeTransaction(transaction, net.passphrase, { signatures: true, sorobanData: true });
      const order = decoded.order ?? null;
      return { kind: "transaction", innerHash: decoded.innerHash, order, refusalKept: true, net, decoded };
    } catch (e) {
      return { refused: outcomeOf(e) };
    }
  }

  /** A client's invokeHostFunction operation, to be simulated and assembled from a channel account. */
  operation(operation: string, network: NetworkName): Intake {
    try {
      const net = this.deps.networks.get(network);
      const pool = this.deps.networks.pool(net.name);
      const op = decodeOperation(operation, (a) => pool.isRelayAccount(a));
      return { kind: "operation", innerHash: op.hash, order: null, refusalKept: false, net, op, pool };
    } catch (e) {
      return { refused: outcomeOf(e) };
    }
  }

  /**
   * The job and what admission checks of it; or the answer already known of an operation. A transaction's
   * is known at once (a value, no promise); an operation's is simulated first.
   */
  prepare(t: Taken, payer: Payer): Prepared | Pending | Promise<Prepared | Pending> {
    return t.kind === "transaction" ? wrapping(t.decoded, t.net) : this.invoking(t.op, t.net, t.pool, payer);
  }

  /**
   * An operation: an earlier run's outcome answers it (its nonce is spent, or about to be: it would not
   * simulate again), else it is simulated and assembled from a channel account.
   */
  private async invoking(
    op: DecodedOperation,
    net: Network,
    pool: ChannelPool,
    payer: Payer,
  ): Promise<Prepared | Pending> {
    const prior = await this.deps.submissions.byInnerHash(net.name, op.hash);
    const answered = finalOutcome(prior) ?? (prior ? await this.deps.settlement.resolved(net.gateway, prior) : null);
    if (answered) return Run.ended(answered, prior!.projectId !== payer.projectId);
    // a run that started meanwhile in this process is joined; an earlier run's transaction may still be
    // queued: another one would spend the nonce twice (and pay for a failure)
    const started = this.deps.runs.join(net.name, op.hash, payer.projectId);
    if (started) return started;
    if (prior && mayStillBeQueued(prior, net.gateway.watcher.latestLedger)) {
      // its fee-bump and status as recorded (submitted: the network took it), when the record is the caller's
      const own = prior.projectId === payer.projectId;
      const status = own && prior.status === "submitted" ? "submitted" : "pending";
      const queued = new RelayError(
        "SUBMISSION_TIMEOUT",
        "an earlier submission of this operation may still be in the network's queue; retry to get its outcome",
        { hash: own ? prior.hash : op.hash, reason: "pending", status },
      );
      return Run.ended(outcomeOf(queued));
    }
    const sim = await this.deps.admission.simulateOperation(net.gateway, pool, op);
    if (sim instanceof RelayError) return Run.ended(outcomeOf(sim));
    const summary = () => summarize(Operation.fromXDRObject(op.operation) as Transaction["operations"][number]);
    const policy = payer.policy?.();
    // who the end user is costs a simulation: asked only by a policy that needs it
    const user = policy?.perUser || policy?.approval ? await this.deps.admission.endUser(net.gateway, pool, op) : null;
    const about = { user, operations: () => [summary()] };
    const job: Job = { ...operationJob(op, sim, net.passphrase), about };
    const wanted = { floor: BASE_FEE, soroban: true, operationTypes: ["invokeHostFunction"], ...about };
    return { job, wanted: { ...wanted, contractIds: op.contractIds } };
  }
}

/** A client's transaction: its fee-bump job, and what admission checks of it. */
function wrapping(decoded: DecodedTx, net: Network): Prepared {
  const about = {
    user: decoded.source,
    operations: () => summarizeAll(sdkInner(decoded, net.passphrase).operations),
  };
  const job: Job = { ...feeBumpJob(decoded, net.passphrase), about };
  const wanted = {
    floor: max(BASE_FEE, innerRate(decoded)),
    soroban: decoded.isSoroban,
    operationTypes: decoded.operationTypes,
    contractIds: decoded.contractIds,
    ...about,
  };
  return { job, wanted };
}
