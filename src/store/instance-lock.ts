/**
 * The embedded defaults serve one relay instance: PGlite and the embedded networks keep their data
 * in DATA_DIR, and without Redis the rate limits, credit holds and channel leases live in one
 * process. A second instance on them is refused:
 * - DATA_DIR by an exclusive `flock` on DATA_DIR/relay.lock, held on an open descriptor for the
 *   relay's life. The kernel drops it when the descriptor closes, however the process ends (kill -9
 *   included, before the process is even reaped), and only the process holding it can appear to:
 *   nothing is inferred from a pid, which may be a zombie's or a stranger's. The file also records
 *   the holder's pid, for the refusal's message only.
 * - a Postgres database used without Redis by a session-level advisory lock (store/db.ts), which
 *   Postgres releases when the holder's connection closes.
 */
import { closeSync, ftruncateSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { flock, LOCK_EX, LOCK_NB, LOCK_UN, lockBusy } from "./flock.ts";

export const SCALING_HINT =
  "the embedded defaults (PGlite, in-memory Redis, embedded networks) serve one instance; " +
  "to run several, give all of them DATABASE_URL, REDIS_URL and upstream networks (docs/scaling.md)";

export const LOCK_FILE = "relay.lock";
/** What versions before the flock wrote: removed once the lock is taken. */
const OLD_PID_FILE = "relay.pid";

/**
 * Takes DATA_DIR for this process; throws when another live relay holds it (`why`: what this one
 * embeds, named in the refusal). Answers the release.
 */
export function lockDataDir(dataDir: string, why: string[] = []): () => void {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, LOCK_FILE);
  // never removed: a lock on a file that is unlinked and made again would lock two different files
  const fd = openSync(file, "a+");
  const error = flock(fd, LOCK_EX | LOCK_NB);
  if (error !== 0) {
    const holder = readFileSync(file, "utf8").trim();
    closeSync(fd);
    if (!lockBusy(error)) throw new Error(`cannot lock DATA_DIR ${dataDir} (${file}): flock failed, errno ${error}`);
    const who = /^\d+$/.test(holder) ? `pid ${holder}` : "a process that has not said its pid yet";
    const because = why.length ? `, and this one must run alone because it uses ${why.join(", ")}` : "";
    throw new Error(`another relay instance (${who}) is running on DATA_DIR ${dataDir}${because}: ${SCALING_HINT}`);
  }
  ftruncateSync(fd, 0);
  writeSync(fd, String(process.pid));
  rmSync(join(dataDir, OLD_PID_FILE), { force: true });
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    try {
      ftruncateSync(fd, 0);
      flock(fd, LOCK_UN);
    } finally {
      closeSync(fd);
    }
  };
}

/** Whether a live process holds DATA_DIR's lock (for tools and tests: takes it and gives it back when free). */
export function dataDirLocked(dataDir: string): boolean {
  try {
    lockDataDir(dataDir)();
    return false;
  } catch {
    return true;
  }
}
