/**
 * `bun run start`: boot the relay from the environment; graceful shutdown on SIGTERM/SIGINT, also
 * while it is starting.
 * Bad configuration, or a database or network the relay cannot start with, is one line per problem
 * on stderr and exit code 1 (no stack trace).
 */
import { ConfigError, loadConfig, type Config } from "./config.ts";
import { createLogger } from "./kernel/log.ts";
import { startRelay, type Relay } from "./boot/boot.ts";

let config: Config;
try {
  config = loadConfig();
} catch (e) {
  for (const p of e instanceof ConfigError ? e.problems : [String(e)]) console.error(`invalid configuration: ${p}`);
  process.exit(1);
}

const log = createLogger(config.LOG_LEVEL, undefined, config.LOG_FORMAT ?? (process.stdout.isTTY ? "pretty" : "json"));
// the signals are heard from the start on: one while starting calls the start off (what it had
// opened is closed, the data directory unlocked; a step under way, such as a database connection,
// runs to its timeout first), a second one then exits at once; one after the start stops the relay
const starting = new AbortController();
let relay: Relay | undefined;
let stopping = false;
const SIGNAL_EXIT: Record<string, number> = { SIGINT: 130, SIGTERM: 143 };
async function shutdown(signal: string): Promise<void> {
  if (stopping && !relay) {
    log.warn({ signal }, "a second signal while starting: exiting now");
    process.exit(SIGNAL_EXIT[signal]);
  }
  if (stopping) return;
  stopping = true;
  log.info({ signal, starting: !relay }, "shutting down");
  if (!relay) return starting.abort(new Error(`${signal} while starting`)); // the start's own catch exits
  await relay.stop();
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));

try {
  relay = await startRelay(config, log, starting.signal);
} catch (e) {
  if (e === starting.signal.reason) process.exit(0); // called off: what it opened is closed
  console.error(`cannot start: ${rootCause(e)}`);
  process.exit(1);
}
if (starting.signal.aborted) {
  // the signal came as the start ended
  await relay.stop();
  process.exit(0);
}

/** The innermost cause's message (a database driver's, not the ORM's wrapper with the query). */
function rootCause(e: unknown): string {
  let cur = e;
  while (cur instanceof Error && cur.cause) cur = cur.cause;
  const outer = e instanceof Error && e !== cur && !/query/i.test(e.message) ? `${e.message}: ` : "";
  return `${outer}${cur instanceof Error ? cur.message : String(cur)}`;
}
