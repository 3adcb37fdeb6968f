/**
 * A second relay on a port in use fails to start (exit 1, a message naming the port) instead of
 * sharing it with the first (Elysia asks for SO_REUSEPORT; the relay does not), and says so before
 * it opens or creates anything: its data directory stays empty.
 */
import { afterAll, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { startTestRelay, type TestRelay } from "../support/relay.ts";
import { tempDir } from "../support/processes.ts";

let first: TestRelay | undefined;
const dir = tempDir("relay-port-");
afterAll(async () => {
  await first?.stop();
  dir.done();
});

test("a second relay on the first one's port exits 1 naming the port, creating nothing; the first still answers", async () => {
  first = await startTestRelay();
  const port = new URL(first.url).port;
  const second = Bun.spawn(["bun", "src/index.ts"], {
    cwd: join(import.meta.dir, "..", ".."),
    env: { ...process.env, PORT: port, DATA_DIR: dir.path, DATABASE_URL: "", LOG_LEVEL: "error" },
    stdout: "ignore",
    stderr: "pipe",
  });
  // bounded far above the few seconds it takes (Bun's start and the configuration), for a busy machine
  const timer = setTimeout(() => second.kill("SIGKILL"), 20_000);
  const code = await second.exited;
  clearTimeout(timer);
  const stderr = await new Response(second.stderr).text();
  expect(code).toBe(1);
  expect(stderr).toContain(`port ${port} is already in use`);
  expect(readdirSync(dir.path)).toEqual([]); // no database, no lock file
  for (let i = 0; i < 20; i++) expect((await fetch(`${first.url}/health/live`)).status).toBe(200);
}, 30_000);
