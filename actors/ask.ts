/**
 * The ask pattern: send an event carrying a request id and wait for the actor's emitted `reply`
 * with that id. Actors process an event at once when idle, so the reply usually arrives during
 * `send`; the timeout guards an actor that never answers.
 */
import type { AnyActorRef } from "xstate";

export interface Reply {
  type: "reply";
  id: string;
}

export function ask<R extends Reply>(
  actor: AnyActorRef,
  event: { type: string; id: string; [field: string]: unknown },
  timeoutMs = 5000,
): Promise<R> {
  return new Promise<R>((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let settled = false;
    const sub = actor.on("reply", (r: R) => {
      if (r.id !== event.id || settled) return;
      settled = true;
      sub.unsubscribe();
      if (timer) clearTimeout(timer);
      resolve(r);
    });
    actor.send(event);
    if (!settled) {
      timer = setTimeout(() => {
        sub.unsubscribe();
        reject(new Error(`actor ${actor.id} did not answer ${event.type} within ${timeoutMs} ms`));
      }, timeoutMs);
    }
  });
}
