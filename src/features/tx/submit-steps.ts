/**
 * Drives a submission's run (src/network/submitter.ts; its steps in submit-protocol.ts): the run
 * asks for what it needs as steps, and the relay answers each from its own parts here (its envelope
 * built and signed by the channel, its intent written to the store, its acceptance told, its
 * channel's sequence number re-read, its applied transaction looked up). The network's loop holds
 * no function of the relay's: control comes back here at every step.
 */
import type { Confirmed } from "../../network/ledger-watcher.ts";
import type { Step, StepAnswer, Steps, Verdict } from "../../network/submit-protocol.ts";
import type { Signed } from "../../stellar/envelope.ts";

/** How the relay answers each step of one run. */
export interface StepAnswers {
  build(rate: bigint): Signed;
  /** Runs before the envelope is sent: writes the intent (its attempt) first. */
  record(envelope: Signed, hash: string, rate: bigint): Promise<void>;
  accepted?(hash: string, answer: "PENDING" | "DUPLICATE"): void;
  resync?(): Promise<void>;
  lookup(hash: string): Promise<Confirmed | null>;
}

/** Runs `steps` to their end, answering each; a failed answer is thrown into the run. */
export async function drive(steps: Steps, answers: StepAnswers): Promise<Verdict> {
  let next = await steps.next();
  while (!next.done) {
    let answer: StepAnswer;
    try {
      // a step answered at once (a build, an acceptance) is not awaited: no promise and no turn of its own
      const now = answerOf(next.value, answers);
      answer = now instanceof Promise ? await now : now;
    } catch (e) {
      next = await steps.throw(e);
      continue;
    }
    next = await steps.next(answer);
  }
  return next.value;
}

/** A step's answer: a value for the steps the relay answers at once, a promise for those that wait. */
function answerOf(step: Step, a: StepAnswers): StepAnswer | Promise<StepAnswer> {
  switch (step.kind) {
    case "build":
      return a.build(step.rate);
    case "record":
      return a.record(step.envelope, step.hash, step.rate).then(() => undefined);
    case "accepted":
      a.accepted?.(step.hash, step.answer);
      return undefined;
    case "resync":
      return a.resync ? a.resync().then(() => undefined) : undefined;
    case "lookup":
      return a.lookup(step.hash);
    default:
      return step satisfies never;
  }
}
