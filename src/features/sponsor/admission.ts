/**
 * Admission: the fee plan, then the payer's actor checks the policy and reserves the most the
 * request may pay (credits on mainnet); and, in the func+auth mode, the operation's simulation from a
 * channel account.
 */
import { Account, TransactionBuilder } from "@stellar/stellar-sdk";
import { RelayError } from "../../kernel/errors.ts";
import type { Gateway } from "../../network/gateway.ts";
import { chargesCredits } from "../../stellar/networks.ts";
import { BASE_FEE } from "../../stellar/protocol.ts";
import { type DecodedOperation, usedSigner, withoutAuth } from "../tx/invoke.ts";
import { jobFee, type Job } from "./jobs.ts";
import type { FeePlan, FeePlanner } from "../tx/fee-plan.ts";
import { describeEvents } from "../tx/simulate.service.ts";
import type { ChannelPool } from "../pool/channel-pool.ts";
import type { Payer } from "../projects/principal.ts";
import type { OpSummary, Policy } from "../../../actors/projects/policy.ts";
import type { UserCaps, UserHold } from "../projects/rules/user-caps.ts";
import type { Outcome, SubmissionStore } from "../../store/types.ts";
import { finalOutcome, outcomeOf } from "./outcomes.ts";
import { withAssetContracts } from "../projects/rules/touches.ts";

/** One request's reservation, settled exactly once. */
export interface Reservation {
  id: string;
  payer: Payer;
  credits: boolean;
  grant: bigint;
  journaled: boolean;
  done: boolean;
  /** The outcome's write, when it was answered before its outcome was durable (settled when it ends). */
  writing?: Promise<void>;
  /** Its count and fee hold against its end user's day (the policy's perUser caps). */
  user?: UserHold;
  /**
   * The end user's hold is the submission's (its row's `user_hold`: this one's, written with its intent,
   * or an earlier request's still outstanding): settled where the outcome is recorded, once, not with
   * this reservation; a 504 leaves it counted.
   */
  userOnRow?: boolean;
}

const max = (...xs: bigint[]) => xs.reduce((a, b) => (a > b ? a : b));

/** What a request asks to reserve for. */
export interface Wanted {
  /** The lowest rate it may bid (stroops per operation). */
  floor: bigint;
  soroban: boolean;
  operationTypes: string[];
  contractIds: (string | null)[];
  /** What it touches, operation by operation (made only when the policy asks). */
  operations(): OpSummary[];
  /** Its end user (the policy's perUser caps), if it has one. */
  user: string | null;
}

export class Admission {
  constructor(
    private readonly deps: {
      fees: FeePlanner;
      maxFeeRate: bigint;
      userCaps?: UserCaps;
      submissions: Pick<SubmissionStore, "byInnerHash">;
    },
  ) {}

  /**
   * Plans the fee and has the payer's actor check the policy and reserve the most this request may pay:
   * the reservation, or the refusal (the policy, the credits, the daily spend, an end user's caps) as a value.
   */
  async reserve(
    gw: Gateway,
    job: Job,
    payer: Payer,
    want: Wanted,
  ): Promise<{ reservation: Reservation; plan: FeePlan } | { refused: Outcome }> {
    // at least `floor`, at most MAX_FEE_RATE; the policy's strategy (fast or economy)
    const plan = await this.deps.fees.plan(gw, want.floor, want.soroban, payer.feeStrategy?.());
    const credits = chargesCredits(gw.name) && payer.projectId !== null;
    const id = crypto.randomUUID();
    // what it touches, operation by operation, when an allowlist asks (decoding it costs on the hot path)
    const policy = payer.policy?.();
    const allow = policy?.allow;
    const summaries = allow ? want.operations() : undefined;
    const operations =
      summaries && allow?.assets ? withAssetContracts(summaries, allow.assets, gw.passphrase) : summaries;
    const grant = await payer.reserve(id, credits, {
      operationTypes: want.operationTypes,
      contractIds: want.contractIds,
      minFee: jobFee(job, plan.floor),
      maxFee: jobFee(job, max(plan.rate, this.deps.maxFeeRate)), // bids rise under surge up to MAX_FEE_RATE
      ...(operations ? { operations } : {}),
      network: gw.name,
    });
    if (grant instanceof RelayError) return { refused: outcomeOf(grant) };
    const reservation: Reservation = { id, payer, credits, grant, journaled: false, done: false };
    if (!policy?.perUser || !payer.projectId || !this.deps.userCaps) return { reservation, plan };
    const drop = () => payer.settle(id, { released: 0n, charged: 0n, journaled: false }); // nothing of it was sent
    const refusal = await this.userHold(gw, job, reservation, want.user, policy).catch((e: unknown) => {
      drop();
      throw e;
    });
    if (refusal === null) return { reservation, plan };
    drop();
    return { refused: outcomeOf(refusal) };
  }

  /**
   * A policy's cap per end user: the transaction counted against its user's day (the reservation's
   * `user`), or the refusal. An earlier request of this transaction still holding the user's count
   * (answered 504) leaves it to this one; one that landed is answered from its record, counted already.
   */
  private async userHold(
    gw: Gateway,
    job: Job,
    reservation: Reservation,
    user: string | null,
    policy: Policy,
  ): Promise<RelayError | null> {
    // a cap per end user needs one: a call no signed, used entry names is refused
    if (!user)
      return new RelayError(
        "POLICY_VIOLATION",
        "the policy caps each end user (perUser), and no end user signs this call: none of its authorization " +
          "entries is both signed and used by the invocation",
        { rule: "perUser" },
      );
    const prior = await this.deps.submissions.byInnerHash(gw.name, job.innerHash);
    if (prior?.userHold && prior.outcome === null) reservation.userOnRow = true;
    else if (!finalOutcome(prior)) {
      const projectId = reservation.payer.projectId!;
      const hold = await this.deps.userCaps!.reserve(projectId, user, policy, reservation.grant, Date.now());
      if (hold instanceof RelayError) return hold;
      if (hold) reservation.user = hold;
    }
    return null;
  }
  /** The fee plan alone: a held transaction sent after a crash was admitted before (the default strategy). */
  plan(gw: Gateway, floor: bigint, soroban: boolean): Promise<FeePlan> {
    return this.deps.fees.plan(gw, floor, soroban);
  }
  /**
   * The end user of a func+auth operation, for a policy that asks (perUser caps, an approval server): the
   * first signed entry the invocation uses (invoke.ts's usedSigner), from a simulation without the client's
   * entries, which records the ones the network needs. Null: none.
   */
  async endUser(gw: Gateway, pool: ChannelPool, op: DecodedOperation): Promise<string | null> {
    const tx = new TransactionBuilder(new Account(pool.simulationSource(), "0"), {
      fee: BASE_FEE.toString(),
      networkPassphrase: gw.passphrase,
    })
      .addOperation(withoutAuth(op.operation))
      .setTimeout(0)
      .build();
    const raw = await gw.simulate(tx);
    if (raw.error) return null;
    return usedSigner(op.operation, raw.results?.[0]?.auth ?? []);
  }
  /**
   * Simulates the operation from a relay channel account in enforce mode: its resource fee and Soroban
   * data, or SIMULATION_FAILED (the contract failed, or the client's entries do not authorize it).
   */
  async simulateOperation(
    gw: Gateway,
    pool: ChannelPool,
    op: DecodedOperation,
  ): Promise<{ resourceFee: bigint; transactionData: string } | RelayError> {
    const tx = new TransactionBuilder(new Account(pool.simulationSource(), "0"), {
      fee: BASE_FEE.toString(),
      networkPassphrase: gw.passphrase,
    })
      .addOperation(op.operation)
      .setTimeout(0)
      .build();
    const raw = await gw.simulate(tx, "enforce");
    if (raw.error || !raw.transactionData)
      return new RelayError("SIMULATION_FAILED", raw.error ?? "the simulation returned no transaction data", {
        events: describeEvents(raw.events),
      });
    return { resourceFee: BigInt(raw.minResourceFee ?? "0"), transactionData: raw.transactionData };
  }
}
