/**
 * The embedded defaults serve one instance: a second relay process on the same DATA_DIR, or on the
 * same Postgres schema without Redis, exits 1 with a clear message; once the first is gone (stopped
 * or dead), its DATA_DIR and schema are free again.
 */
import { afterEach, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { databaseKind, startTestRelay, type TestRelay } from "../support/relay.ts";

const ROOT = join(import.meta.dir, "..", "..");
let first: TestRelay | null = null;
const dirs: string[] = [];
const tempDir = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
};
afterEach(async () => {
  await first?.stop();
  first = null;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Starts `bun src/index.ts` with `env` and answers its exit code and stderr (it must exit within 20 s). */
async function second(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const proc = Bun.spawn(["bun", "src/index.ts"], {
    cwd: ROOT,
    env: { ...process.env, PORT: "0", LOG_LEVEL: "error", ...env },
    stdout: "ignore",
    stderr: "pipe",
  });
  const timer = setTimeout(() => proc.kill("SIGKILL"), 20_000);
  const code = await proc.exited;
  clearTimeout(timer);
  return { code, stderr: await new Response(proc.stderr).text() };
}

test("a second instance on the same DATA_DIR (PGlite, in-memory, embedded networks) is refused", async () => {
  first = await startTestRelay({ DATABASE_URL: "", DATABASE_SCHEMA: "" });
  const r = await second({ DATA_DIR: first.env.DATA_DIR!, DATABASE_URL: "" });
  expect(r.code).toBe(1);
  expect(r.stderr).toContain(`another relay instance (pid ${process.pid}) is running on DATA_DIR`);
  expect(r.stderr).toContain("REDIS_URL");
  // the first one is unharmed
  expect((await first.app.handle(new Request("http://x/v1/health"))).status).toBe(200);
});

test("a lock file naming a live process that holds no lock does not block a start", async () => {
  const stopped = await startTestRelay({ DATABASE_URL: "", DATABASE_SCHEMA: "" });
  await stopped.stop({ keepData: true });
  // pids are reused: the dead relay's may now be anybody's, here a live process unrelated to the relay
  const stranger = Bun.spawn(["sleep", "30"]);
  try {
    writeFileSync(join(stopped.env.DATA_DIR!, "relay.lock"), String(stranger.pid));
    writeFileSync(join(stopped.env.DATA_DIR!, "relay.pid"), String(stranger.pid)); // what older versions left
    first = await startTestRelay(stopped.env);
    expect((await first.app.handle(new Request("http://x/v1/health"))).status).toBe(200);
    expect(readFileSync(join(stopped.env.DATA_DIR!, "relay.lock"), "utf8")).toBe(String(process.pid));
    expect(existsSync(join(stopped.env.DATA_DIR!, "relay.pid"))).toBe(false);
  } finally {
    stranger.kill();
  }
});

test.skipIf(databaseKind !== "postgres")(
  "a second instance on the same Postgres schema without Redis is refused; after a stop it starts",
  async () => {
    first = await startTestRelay();
    const { DATABASE_URL, DATABASE_SCHEMA } = first.env;
    const env = { DATABASE_URL: DATABASE_URL!, DATABASE_SCHEMA: DATABASE_SCHEMA!, DATA_DIR: tempDir("relay-2nd-") };
    const r = await second(env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`another relay instance is using this database`);
    expect(r.stderr).toContain("in-memory limits and leases (no REDIS_URL)");
    const stopped = first;
    first = null;
    await stopped.stop({ keepData: true });
    first = await startTestRelay(stopped.env);
    expect((await first.app.handle(new Request("http://x/v1/health"))).status).toBe(200);
  },
  60_000, // 13 s on a quiet machine (a second relay started as a process of its own)
);
