/** `bun run start`: boot the relay from the environment; graceful shutdown on SIGTERM/SIGINT. */
import { loadConfig } from "./config.ts";
import { createLogger } from "./log.ts";
import { startRelay } from "./boot.ts";

const log = createLogger();
const relay = await startRelay(loadConfig(), log);

async function shutdown(signal: string): Promise<void> {
  log.info({ signal }, "shutting down");
  await relay.stop();
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
