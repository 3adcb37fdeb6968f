/**
 * A relay that fails to start after it opened its database closes what it opened: the process
 * that tried it (a tool, a test, anything that survives the error) can exit. The failure here is
 * a channel encryption key file that holds no key, read after the database is open. So does a start
 * called off by its signal (index.ts aborts it on SIGTERM).
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { seedPglite } from "../support/pglite.ts";
import { dataDirLocked } from "../../src/store/instance-lock.ts";

const dataDir = mkdtempSync(join(tmpdir(), "relay-boot-failure-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** Runs startRelay in a process of its own; answers its exit code (or "still running" after 20 s) and output. */
async function startInChild(env: Record<string, string>, signal = "undefined") {
  const src = (f: string) => JSON.stringify(join(import.meta.dir, "../../src", f));
  const script = `import { startRelay } from ${src("boot/boot.ts")};
    import { loadConfig } from ${src("config.ts")};
    import { createLogger } from ${src("kernel/log.ts")};
    await startRelay(loadConfig(${JSON.stringify(env)}), createLogger("silent"), ${signal}).then(
      () => console.log("started"), (e) => console.log("refused:", e.message));`;
  const child = Bun.spawn(["bun", "-e", script], { stdout: "pipe", stderr: "ignore" });
  const exited = await Promise.race([child.exited, Bun.sleep(20_000).then(() => "still running")]);
  if (exited === "still running") child.kill();
  return { exited, output: await new Response(child.stdout).text() };
}

const env = { DATA_DIR: dataDir, PORT: "0", ADMIN_TOKEN: "boot-failure-admin-token-0123456789" };

test("a relay that cannot start leaves nothing that keeps its process alive", async () => {
  await seedPglite(dataDir);
  writeFileSync(join(dataDir, "channel-encryption.key"), "not a key\n");
  const { exited, output } = await startInChild(env);
  expect(exited).toBe(0);
  expect(output).toContain("refused: ");
  rmSync(join(dataDir, "channel-encryption.key"));
}, 30_000);

test("a start called off (SIGTERM while starting) closes what it opened and unlocks DATA_DIR", async () => {
  await seedPglite(dataDir);
  const { exited, output } = await startInChild(env, 'AbortSignal.abort(new Error("called off"))');
  expect(exited).toBe(0);
  expect(output).toContain("refused: called off");
  expect(dataDirLocked(dataDir)).toBe(false);
}, 30_000);
