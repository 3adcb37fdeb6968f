/**
 * The embedded defaults serve one relay instance: PGlite and the embedded networks keep their data
 * in DATA_DIR, and without Redis the rate limits, credit holds and channel leases live in one
 * process. A second instance on them is refused: DATA_DIR holds the running instance's pid (a
 * file, taken over when that process is gone), and a Postgres database used without Redis is held
 * by a session-level advisory lock (released by Postgres when the holder's connection closes, also
 * after a kill -9).
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const SCALING_HINT =
  "the embedded defaults (PGlite, in-memory Redis, embedded networks) serve one instance; " +
  "to run several, give all of them DATABASE_URL, REDIS_URL and upstream networks (docs/scaling.md)";

const PID_FILE = "relay.pid";

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
};

/** Takes DATA_DIR for this process; throws when another live process holds it. Answers the release. */
export function lockDataDir(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, PID_FILE);
  let holder = Number.NaN;
  try {
    holder = Number(readFileSync(file, "utf8").trim());
  } catch {}
  if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && alive(holder))
    throw new Error(`another relay instance (pid ${holder}) is running on DATA_DIR ${dataDir}: ${SCALING_HINT}`);
  writeFileSync(file, String(process.pid));
  return () => {
    try {
      if (Number(readFileSync(file, "utf8").trim()) === process.pid) rmSync(file, { force: true });
    } catch {}
  };
}
