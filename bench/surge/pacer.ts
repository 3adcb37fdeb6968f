/**
 * A steady sender: every tick (20 ms) it owes `rate()` x tick sends and makes them with `send`,
 * which answers false when it cannot send now (every user is busy): what is owed waits for the next tick.
 */
const TICK_MS = 20;

export function pace(rate: () => number, send: () => boolean): { stop(): void } {
  let owed = 0;
  const timer = setInterval(() => {
    owed += (rate() * TICK_MS) / 1000;
    for (; owed >= 1; owed -= 1) if (!send()) break;
  }, TICK_MS);
  return { stop: () => clearInterval(timer) };
}
