/**
 * The image starts: there is no Docker engine here, so the image's file layout is built from the
 * Dockerfile's own COPY and RUN lines into a temporary folder, and the relay is started from there
 * with the image's ENV and CMD, until /health answers.
 */
import { expect, test } from "bun:test";
import { cpSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { seedPglite } from "../support/pglite.ts";
import { spawn, tempDir } from "../support/processes.ts";

const ROOT = join(import.meta.dir, "..", "..");
const lines = readFileSync(join(ROOT, "Dockerfile"), "utf8")
  .split("\n")
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith("#"));

test("the Dockerfile's layout starts the relay and /health answers", { timeout: 60_000 }, async () => {
  const dir = tempDir("relay-image-");
  const app = join(dir.path, "app");
  mkdirSync(app);
  const env: Record<string, string> = {};
  let cmd: string[] = [];
  try {
    for (const line of lines) {
      const [op, ...rest] = line.split(/\s+/);
      if (op === "COPY") {
        const dest = join(app, rest.at(-1)!);
        for (const src of rest.slice(0, -1)) {
          expect(existsSync(join(ROOT, src))).toBe(true); // every COPY source exists in the repo
          cpSync(join(ROOT, src), rest.length > 2 ? join(dest, src) : dest, { recursive: true });
        }
      } else if (op === "RUN" && rest[0] === "bun") {
        const r = Bun.spawnSync(rest, { cwd: app, stdout: "ignore", stderr: "pipe" });
        expect(r.exitCode).toBe(0);
      } else if (op === "ENV") {
        for (const kv of rest) env[kv.split("=")[0]!] = kv.slice(kv.indexOf("=") + 1);
      } else if (op === "CMD") {
        cmd = JSON.parse(rest.join(" "));
      }
    }
    expect(cmd).toEqual(["bun", "src/index.ts"]); // the relay itself is the main process
    const script = cmd[1]!;
    const healthcheck = /^HEALTHCHECK .* CMD (\[.*\])$/.exec(lines.find((l) => l.startsWith("HEALTHCHECK")) ?? "");
    expect(healthcheck).not.toBeNull();
    const check = JSON.parse(healthcheck![1]!) as string[];
    const healthy = (port: string) =>
      Bun.spawnSync(check, { cwd: app, env: { ...process.env, PORT: port }, stdout: "ignore", stderr: "ignore" })
        .exitCode;
    expect(healthy("1")).toBe(1); // nothing listens there: unhealthy
    // the image's ENV, with a free port and a data folder of the test's own: it holds the database a first
    // start creates (PGlite's initdb, done once per test process: test/support/pglite.ts)
    const dataDir = join(dir.path, "data");
    await seedPglite(dataDir);
    const relay = await spawn(
      script,
      { ...env, PORT: "0", DATA_DIR: dataDir, LEDGER_CLOSE_MS: "50", LOG_LEVEL: "info" },
      "relay listening",
      60_000,
      app,
    );
    try {
      const res = await fetch(`http://127.0.0.1:${relay.ready.port}/health`);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { status: string }).status).toBe("ok");
      expect(healthy(String(relay.ready.port))).toBe(0); // the image's HEALTHCHECK says healthy
    } finally {
      await relay.kill("SIGTERM");
    }
  } finally {
    dir.done();
  }
});
