/**
 * A turn's asks of one project actor as one event: the reservations (RESERVE) that requests ask for
 * while the event loop's jobs run (the requests of one turn go on together, src/http/turn.ts) reach
 * the actor as one event, in the order asked, and each request gets its own answer. The actor's
 * interpretation of an event, not the request's own check, is most of what an ask costs (bench:path
 * prints both). The event goes when those jobs have run: an event sent to the actor directly
 * meanwhile (a credit adjustment, a suspension) is taken first.
 */
import DataLoader from "dataloader";
import { ask } from "../../../actors/ask.ts";
import type {
  Answer,
  EachReply,
  ProjectActor,
  ProjectEvent,
  ReplyError,
  SpendAsk,
} from "../../../actors/projects/project.machine.ts";
import { RelayError } from "../../kernel/errors.ts";

/** An actor's refusal as the relay's error. */
export function replyError(e: ReplyError): RelayError {
  return new RelayError(e.code, e.message, e.details, e.retryAfterSeconds ? { retryAfter: e.retryAfterSeconds } : {});
}

/** A reservation's answer, and the time the actor made it at (its day is the day's spend it counts in). */
export interface Reserved {
  answer: Answer;
  now: number;
}

export class ProjectAsks {
  private readonly reserves: DataLoader<SpendAsk, Reserved>;

  /** `before`: what is owed to the actor before it answers (the settlements not yet sent). */
  constructor(actor: ProjectActor, before: () => void) {
    this.reserves = new DataLoader(
      async (asks) => {
        before();
        const now = Date.now();
        const event = { type: "RESERVE", id: crypto.randomUUID(), now, asks: [...asks] } satisfies ProjectEvent;
        return (await ask<EachReply>(actor, event)).each.map((answer) => ({ answer, now }));
      },
      { cache: false },
    );
  }

  /** The policy checked and the fee reserved. */
  reserve(a: SpendAsk): Promise<Reserved> {
    return this.reserves.load(a);
  }
}
