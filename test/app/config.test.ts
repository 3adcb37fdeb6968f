/** Configuration errors: every problem on a line of its own, allowed values listed, secrets never echoed, exit 1 without a stack. */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { ConfigError, loadConfig } from "../../src/config.ts";

const problems = (env: Record<string, string>) => {
  try {
    loadConfig(env);
    return [];
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    return e.problems;
  }
};

test("each bad value is one problem that says what is allowed", () => {
  const p = problems({ FEE_PERCENTILE: "bogus", PORT: "70000", LOG_LEVEL: "loud" });
  expect(p).toHaveLength(3);
  expect(p).toContain(
    'FEE_PERCENTILE must be one of p10, p20, p30, p40, p50, p60, p70, p80, p90, p95, p99 (got "bogus")',
  );
  expect(p).toContain("PORT must be a whole number from 0 to 65535 (got 70000)");
  expect(p.find((x) => x.startsWith("LOG_LEVEL"))).toContain("trace, debug, info, warn, error, fatal, silent");
});

test("policies, keys and URLs are checked too, and secrets are never echoed", () => {
  const secret = "SBADSEED";
  const key = "0123456789abcdef0123456789abcdef";
  const p = problems({
    ANONYMOUS_POLICY: '{"x":1}',
    CHANNEL_ENCRYPTION_KEY: key,
    MAINNET_FUNDER_SECRET: secret,
    DATABASE_URL: "mysql://u:pw@h/db",
  });
  expect(p.map((x) => x.split(/[ :]/)[0])).toEqual([
    "MAINNET_FUNDER_SECRET",
    "ANONYMOUS_POLICY",
    "CHANNEL_ENCRYPTION_KEY",
    "DATABASE_URL",
  ]);
  for (const line of p) for (const s of [secret, key, "pw@h"]) expect(line).not.toContain(s);
});

test("a good configuration has defaults", () => {
  expect(loadConfig({}).PORT).toBe(3000);
  expect(loadConfig({ PORT: "0", LOG_LEVEL: "warn" }).LOG_LEVEL).toBe("warn");
});

test("bun run start with bad configuration: one line per problem on stderr, exit 1, no stack, nothing started", async () => {
  const dataDir = join(import.meta.dir, "..", "..", `.config-test-${crypto.randomUUID()}`);
  const p = Bun.spawn(["bun", "src/index.ts"], {
    cwd: join(import.meta.dir, "..", ".."),
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, FEE_PERCENTILE: "bogus", PORT: "70000", DATA_DIR: dataDir, DATABASE_URL: "" },
  });
  const [err, code] = [await new Response(p.stderr).text(), await p.exited];
  expect(code).toBe(1);
  const lines = err.trim().split("\n");
  expect(lines).toHaveLength(2);
  for (const line of lines) expect(line).toStartWith("invalid configuration: ");
  expect(err).not.toMatch(/\n\s+at /);
  expect(await Bun.file(dataDir).exists()).toBe(false);
});

test("a database the relay cannot reach is one line and exit 1", async () => {
  const p = Bun.spawn(["bun", "src/index.ts"], {
    cwd: join(import.meta.dir, "..", ".."),
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, PORT: "0", DATABASE_URL: "postgres://nobody@127.0.0.1:1/none", LOG_LEVEL: "silent" },
  });
  const [err, code] = [await new Response(p.stderr).text(), await p.exited];
  expect(code).toBe(1);
  expect(err.trim().split("\n")).toHaveLength(1);
  expect(err).toStartWith("cannot start: ");
  expect(err).toContain("ECONNREFUSED");
});

test("CHANNEL_ENCRYPTION_KEY: a key of the wrong size says what it must be (32 bytes, base64 or hex), never echoed", () => {
  for (const key of ["abc", "0123456789abcdef0123456789abcdef", "c2hvcnQ="]) {
    const p = problems({ CHANNEL_ENCRYPTION_KEY: key });
    expect(p).toHaveLength(1);
    expect(p[0]).toStartWith("CHANNEL_ENCRYPTION_KEY: must be a 32-byte key, written in base64 (44 characters) or hex");
    expect(p[0]).toContain("openssl rand -base64 32");
    expect(p[0]).not.toContain("string length");
    expect(p[0]).not.toContain(key);
  }
  expect(loadConfig({ CHANNEL_ENCRYPTION_KEY: "ab".repeat(32) }).CHANNEL_ENCRYPTION_KEY).toBe("ab".repeat(32));
  expect(loadConfig({ CHANNEL_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString("base64") })).toBeDefined();
});

test("a too short token says how long it must be, never echoed", () => {
  const p = problems({ ADMIN_TOKEN: "short" });
  expect(p).toEqual(["ADMIN_TOKEN must be at least 16 characters"]);
});
