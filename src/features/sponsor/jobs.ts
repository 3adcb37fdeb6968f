/**
 * What a sponsor request submits (a job): a client's transaction wrapped in a fee-bump, or a
 * func+auth transaction built around a client's operation. A job says how it is watched, how its
 * fee is shaped, and which channel account sends it: a fee source lease for a fee-bump (the one
 * that signed an earlier run, to send that envelope again), a channel's sequence number otherwise.
 */
import { Account, TransactionBuilder } from "@stellar/stellar-sdk";
import type { DecodedTx } from "../tx/decode.ts";
import { buildFeeBump } from "../tx/fee-bump.ts";
import { signTx } from "../../stellar/sign.ts";
import { signedOf, type Signed } from "../../stellar/envelope.ts";
import type { DecodedOperation } from "../tx/invoke.ts";
import type { ChannelPool, FeeLease } from "../pool/channel-pool.ts";
import type { ChannelWait } from "../pool/leases.ts";
import type { ValidUntil } from "../../network/ledger-watcher.ts";
import type { OpSummary } from "../../../actors/projects/policy.ts";

/** The channel account that sends one submission: a fee-bump's fee source, or an own transaction's source. */
export interface Sender {
  /** A resumed submission's envelope, sent again exactly as before (so it joins itself in the queue), and its rate. */
  resumed?: { envelope: Signed; rate: bigint };
  /**
   * The channel's lease, kept past a 504 while the transaction may still be queued: a fee-bump's fee
   * source, or an own transaction's source (one such transaction per channel in the network's queue).
   */
  lease?: FeeLease;
  /** The channel account that pays (the fee-bump's fee source, or the transaction's source). */
  channel: string;
  envelope(rate: bigint): Signed;
  /** After tx_bad_seq, for an own transaction: re-read the sequence number. */
  badSeq?(): Promise<void>;
  end(charged: bigint, consumed: boolean): void;
}

export interface Job {
  /** The inner transaction's hash, or the operation's (func+auth mode): one submission per hash. */
  innerHash: string;
  /**
   * A fee-bump of a client's transaction: watched by its inner hash (any wrapping of it that lands
   * answers), replaced by fee when it waits too long, resumed by sending its last envelope again.
   */
  feeBump: boolean;
  /** Operations the inclusion fee is bid for (a fee-bump counts one more than its inner transaction). */
  feeOps: bigint;
  resourceFee: bigint;
  /** The client's time and ledger bounds: past them the submission has expired (absent: the relay's own). */
  validUntil?: ValidUntil;
  /** A client's transaction in its source account's order (absent: the relay's own source, or no order). */
  order?: { account: string; seq: bigint; bytes: number; transaction: string };
  /** Its end user and what it touches, operation by operation (made on demand: policies and approvals ask). */
  about?: { user: string | null; operations(): OpSummary[] };
  /**
   * `resume`: the envelope an earlier run of this submission sent last (base64), if any; `parked`:
   * that run's fee source lease, still held (in this process) because its fee-bump may be queued.
   */
  sender(
    pool: ChannelPool,
    maxFee: bigint,
    resume: string | null,
    parked: FeeLease | null,
    wait: ChannelWait,
  ): Promise<Sender>;
}

/** Ledger time bounds of a transaction the relay builds (func+auth mode). */
const OWN_TX_TIMEOUT_SECONDS = 300;

export const jobFee = (job: Job, rate: bigint) => rate * job.feeOps + job.resourceFee;

/** A client's transaction, wrapped in a fee-bump whose fee source is a channel account. */
export function feeBumpJob(d: DecodedTx, passphrase: string): Job {
  const feeOps = BigInt(d.operations + 1);
  return {
    innerHash: d.innerHash,
    feeBump: true,
    feeOps,
    resourceFee: d.resourceFee,
    validUntil: d.validUntil,
    ...(d.order ? { order: d.order } : {}),
    sender: async (pool, maxFee, resume, parked, wait) => {
      const before = resume ? resumable(resume, passphrase, d.innerHash) : null;
      // a fee-bump waits CHANNEL_WAIT_MS at most (one channel pays for many), in its payer's turn
      const lease =
        parked ??
        ((before && pool.keep(before.feeSource, maxFee)) || (await pool.assign(maxFee, { scope: wait.scope })));
      const resumed =
        before && before.feeSource === lease.publicKey
          ? { envelope: before.envelope, rate: (before.fee - d.resourceFee) / feeOps }
          : undefined;
      return {
        resumed,
        lease,
        channel: lease.publicKey,
        envelope: (rate) => buildFeeBump(d, lease.keypair, rate, passphrase),
        end: (charged) => lease.end(charged),
      };
    },
  };
}

/** A client's invokeHostFunction operation in a transaction whose source is a channel account. */
export function operationJob(
  op: DecodedOperation,
  sim: { resourceFee: bigint; transactionData: string },
  passphrase: string,
): Job {
  return {
    innerHash: op.hash,
    feeBump: false,
    feeOps: 1n,
    resourceFee: sim.resourceFee,
    sender: async (pool, maxFee, _resume, parked, wait) => {
      // an earlier run's transaction, parked past its 504, reached no ledger (else this run would not be)
      parked?.end(0n);
      // its own transaction needs a channel of its own: it waits as long as its deadline allows, in its payer's turn
      const lease = await pool.acquire(maxFee, wait);
      return {
        channel: lease.publicKey,
        // kept past a 504 (its channel holds it as its one queued transaction) until its submission is
        // resolved: in a ledger, charged and its number used; else its number given back
        lease: {
          keypair: lease.keypair,
          publicKey: lease.publicKey,
          end: (charged) => lease.end(charged, charged > 0n),
        },
        envelope: (rate) => {
          const source = new Account(lease.publicKey, (lease.seq - 1n).toString());
          const tx = new TransactionBuilder(source, {
            fee: rate.toString(),
            networkPassphrase: passphrase,
            sorobanData: sim.transactionData, // build() adds the resource fee
          })
            .addOperation(op.operation)
            .setTimeout(OWN_TX_TIMEOUT_SECONDS)
            .build();
          signTx(tx, lease.keypair);
          return signedOf(tx);
        },
        badSeq: () => lease.resync(),
        end: (charged, consumed) => lease.end(charged, consumed),
      };
    },
  };
}

/** A stored envelope of this inner transaction that the relay can send again (a fee-bump), or null. */
function resumable(
  envelope: string,
  passphrase: string,
  innerHash: string,
): { envelope: Signed; feeSource: string; fee: bigint } | null {
  try {
    const tx = TransactionBuilder.fromXDR(envelope, passphrase);
    return "innerTransaction" in tx && Buffer.from(tx.innerTransaction.hash()).toString("hex") === innerHash
      ? { envelope: { xdr: envelope, hash: Buffer.from(tx.hash()) }, feeSource: tx.feeSource, fee: BigInt(tx.fee) }
      : null;
  } catch {
    return null;
  }
}
