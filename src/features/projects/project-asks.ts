/**
 * A turn's asks of one project actor, one event each kind: the rate-limit tokens (ADMIT) and the
 * reservations (RESERVE) that requests ask for while the event loop's jobs run (the requests of one
 * turn go on together, src/http/turn.ts) reach the actor as one event, in the order asked, and each
 * request gets its own answer. The actor's interpretation of an event, not the request's own check,
 * is most of what an ask costs (bench:path prints both).
 */
import DataLoader from "dataloader";
import { ask } from "../../../actors/ask.ts";
import type {
  Answer,
  EachReply,
  ProjectActor,
  ReplyError,
  SpendAsk,
} from "../../../actors/projects/project.machine.ts";
import { RelayError } from "../../kernel/errors.ts";

/** An actor's refusal as the relay's error. */
export function replyError(e: ReplyError): RelayError {
  return new RelayError(e.code, e.message, e.details, e.retryAfterSeconds ? { retryAfter: e.retryAfterSeconds } : {});
}

export class ProjectAsks {
  private readonly admits: DataLoader<true, Answer>;
  private readonly reserves: DataLoader<SpendAsk, Answer>;

  /** `before`: what is owed to the actor before it answers (the settlements not yet sent). */
  constructor(actor: ProjectActor, before: () => void) {
    const each = async (event: { type: "ADMIT"; count: number } | { type: "RESERVE"; asks: SpendAsk[] }) => {
      before();
      const id = crypto.randomUUID();
      return (await ask<EachReply>(actor, { ...event, id, now: Date.now() })).each;
    };
    this.admits = new DataLoader((ks) => each({ type: "ADMIT", count: ks.length }), { cache: false });
    this.reserves = new DataLoader((asks) => each({ type: "RESERVE", asks: [...asks] }), { cache: false });
  }

  /** One rate-limit token. */
  admit(): Promise<Answer> {
    return this.admits.load(true);
  }

  /** The policy checked and the fee reserved. */
  reserve(a: SpendAsk): Promise<Answer> {
    return this.reserves.load(a);
  }
}
