/**
 * One attempt to sponsor a transaction, the value every stage takes and passes on (admission made
 * it; sending, dispatch and settlement read it): the network, the run its requests share, the
 * decoded transaction and how to build it (the job), the fee plan, the credit reservation and the
 * submission's row it is recorded as; and what sending it ends with (`Sent`), a value.
 */
import type { Outcome, SubmissionRecord } from "../../store/types.ts";
import type { Network } from "../networks/networks.ts";
import type { FeePlan } from "../tx/fee-plan.ts";
import type { Reservation } from "./admission.ts";
import type { Job } from "./jobs.ts";
import type { Run } from "./run.ts";

export interface Attempt {
  network: Network;
  run: Run;
  job: Job;
  plan: FeePlan;
  reservation: Reservation;
  /** Its submission's row: its id, the earlier run's intent it resumes (sent again first), whether it is new. */
  row: { id: string; resume: SubmissionRecord | null; fresh: boolean };
}

/**
 * What sending an attempt ended with: its outcome, and whether settlement has recorded it (the
 * network applied it) or the run still has to (refused, rejected, expired, not known yet, busy).
 */
export interface Sent {
  outcome: Outcome;
  recorded: boolean;
}

/** An attempt before its submission is known (the run looks the inner hash up first). */
export type Admitted = Omit<Attempt, "row">;
