/**
 * A transaction held for its predecessor is a submission row from the moment it is held (its
 * `held`: the client's transaction, account and sequence number). After a crash, or when the
 * instance that held it is gone, recovery sends it as it would have been: its job decoded again from
 * the row, and its reservation the one the row journaled (its credits settle through the project's
 * journal, as any recovered submission's).
 */
import { type NetworkName, chargesCredits } from "../../../stellar/networks.ts";
import type { HeldTx, SettledCredits, SubmissionRecord } from "../../../store/types.ts";
import { decodeTransaction } from "../../tx/decode.ts";
import type { Reservation } from "../admission.ts";
import { feeBumpJob, type Job } from "../jobs.ts";
import { innerRate } from "../../tx/fee-bump.ts";
import { BASE_FEE } from "../../../stellar/protocol.ts";

const max = (a: bigint, b: bigint) => (a > b ? a : b);

export type HeldRow = SubmissionRecord & { held: HeldTx };

/** Held rows in the order they are sent in: by account, then sequence number. */
export function inAccountOrder(rows: HeldRow[]): HeldRow[] {
  const seq = (r: HeldRow) => BigInt(r.held.sequence);
  return [...rows].sort((a, b) =>
    a.held.account === b.held.account ? Number(seq(a) - seq(b)) : a.held.account < b.held.account ? -1 : 1,
  );
}

/** The job of a held row: its transaction decoded again (throws a RelayError if it no longer decodes). */
export function heldJob(row: HeldRow, passphrase: string): { job: Job; floor: bigint; soroban: boolean } {
  const decoded = decodeTransaction(row.held.transaction, passphrase, { signatures: true, sorobanData: true });
  const job: Job = {
    ...feeBumpJob(decoded, passphrase),
    about: { user: decoded.source, operations: () => [] },
  };
  return { job, floor: max(BASE_FEE, innerRate(decoded)), soroban: decoded.isSoroban };
}

/**
 * The reservation a held row carries: its grant (the row's max fee) journaled with it on a credit
 * network, its end user's hold on the row. Nothing is reserved again and no policy asked again (it
 * was admitted, and approved, before it was held); what its settlement releases and charges goes to
 * its project's actor as the journal did it.
 */
export function heldReservation(
  row: HeldRow,
  network: NetworkName,
  projects: { settleJournaled(projectId: string, s: SettledCredits): void },
): Reservation {
  const { projectId } = row;
  const credits = chargesCredits(network) && projectId !== null;
  return {
    id: crypto.randomUUID(),
    payer: {
      projectId,
      scope: row.caller,
      reserve: async () => row.maxFee,
      settle: (_id, s) => {
        if (projectId && s.journaled && (s.released !== 0n || s.charged !== 0n))
          projects.settleJournaled(projectId, { projectId, released: s.released, charged: s.charged });
      },
    },
    credits,
    grant: row.maxFee,
    journaled: credits,
    done: false,
    userOnRow: row.userHold !== null,
  };
}
