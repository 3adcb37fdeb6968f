/**
 * The requests that arrive in one turn of the event loop go on together. Left alone, Bun runs each
 * request as far as it can go before it starts the next: the whole request path (routing, auth,
 * the project actor, decoding, the error envelope, logging) runs once per request with other code
 * in between, and on a small machine most of its time goes to fetching that code and its data
 * again. Waiting here for the end of the turn (setImmediate: after the turn's I/O) resumes them one
 * after another in arrival order, so each stage runs for all of them back to back. The wait is the
 * rest of the turn; docs/performance.md has what it bought.
 */
let turn: Promise<void> | null = null;

/** Resolves once the current turn's I/O is done; every caller of one turn shares one promise. */
export function endOfTurn(): Promise<void> {
  turn ??= new Promise<void>((resolve) =>
    setImmediate(() => {
      turn = null;
      resolve();
    }),
  );
  return turn;
}
