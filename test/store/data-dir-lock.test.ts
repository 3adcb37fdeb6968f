/**
 * DATA_DIR's lock after a crash: a relay killed with kill -9 and started again at once on the same
 * DATA_DIR starts, while the dead relay is still a zombie (its parent has not reaped it: a
 * supervisor restarting it at once). Twenty times in a row, then the last one serves. The dead
 * relays' parents are `sleep` (a shell exec'd into it), which never reaps its children. On Postgres
 * without Redis (TEST_DATABASE_URL), the same under load: the dead relay's advisory lock on its
 * schema is gone by the time the next one asks for it, or soon after, and the next one is ready.
 */
import { afterAll, expect, test } from "bun:test";
import postgres from "postgres";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { dataDirLocked } from "../../src/store/instance-lock.ts";
import { seedPglite } from "../support/pglite.ts";
import { tempDir } from "../support/processes.ts";
import { TEST_ADMIN_TOKEN } from "../support/relay.ts";

const ROOT = join(import.meta.dir, "..", "..");
const RESTARTS = 20;
const data = tempDir("relay-lock-restart-");
const parents: Subprocess[] = [];
afterAll(async () => {
  for (const p of parents) p.kill("SIGKILL"); // their zombie children go to init, which reaps them
  await Promise.all(parents.map((p) => p.exited));
  data.done();
});

/** The relay's state letter in /proc (Z: a zombie), or null once it is gone. */
function state(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]![0]!;
  } catch {
    return null;
  }
}

/**
 * Starts `bun src/index.ts` as the child of a shell that then becomes `sleep`: nothing reaps the relay
 * when it dies. Resolves with its pid and port once it logs `until` (its output and errors, one stream).
 */
async function startUnreaped(
  until: string,
  env: Record<string, string> = {},
): Promise<{ pid: number; line: Record<string, unknown> }> {
  const parent = Bun.spawn(["sh", "-c", "bun src/index.ts 2>&1 & echo $!; exec sleep 600"], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: data.path, PORT: "0", LOG_LEVEL: "info", LEDGER_CLOSE_MS: "200", ...env },
    stdin: "ignore",
    stdout: "pipe",
  });
  parents.push(parent);
  const reader = parent.stdout.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let pid = 0;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const timeout = Bun.sleep(Math.max(0, deadline - Date.now())).then(() => "timeout" as const);
    const r = await Promise.race([reader.read(), timeout]);
    if (r === "timeout" || r.done) throw new Error(`the relay did not log "${until}": ${text.slice(-2000)}`);
    text += decoder.decode(r.value, { stream: true });
    const lines = text.split("\n");
    if (!pid && lines.length > 1) pid = Number(lines[0]);
    for (const l of lines.slice(1, -1)) {
      if (l.includes("cannot start")) throw new Error(`restart refused: ${l}`);
      const j = l.startsWith("{") ? (JSON.parse(l) as Record<string, unknown>) : null;
      if (j?.msg === until) {
        void (async () => {
          while (!(await reader.read()).done); // keep the pipe drained
        })();
        return { pid, line: j };
      }
    }
  }
}

test(`kill -9 and an immediate restart on the same DATA_DIR, ${RESTARTS} times, the dead relay a zombie`, {
  timeout: 150_000,
}, async () => {
  await seedPglite(data.path);
  let zombies = 0;
  for (let i = 0; i < RESTARTS; i++) {
    // after the lock and the database: the embedded networks' warning comes once both are taken
    const { pid } = await startUnreaped("LOCAL NETWORK: testnet is an embedded localnet, not the public testnet");
    expect(dataDirLocked(data.path)).toBe(true);
    process.kill(pid, "SIGKILL");
    for (let t = 0; t < 200 && state(pid) !== "Z"; t++) await Bun.sleep(5);
    if (state(pid) === "Z") zombies++; // still in the process table, and its pid in relay.lock
    expect(readFileSync(join(data.path, "relay.lock"), "utf8")).toBe(String(pid));
  }
  expect(zombies).toBe(RESTARTS);
  const { pid, line } = await startUnreaped("relay listening");
  const ready = await fetch(`http://127.0.0.1:${line.port}/health/ready`);
  expect(ready.status).toBe(200);
  process.kill(pid, "SIGTERM");
  for (let t = 0; t < 400 && state(pid) !== "Z"; t++) await Bun.sleep(25);
  expect(state(pid)).toBe("Z"); // exited by itself after SIGTERM
  expect(dataDirLocked(data.path)).toBe(false);
});

const DB = process.env.TEST_DATABASE_URL;
test.skipIf(!DB)(
  "on Postgres without Redis: kill -9 under load, restarted at once, ready within 30 s, 5 times",
  {
    timeout: 200_000,
  },
  async () => {
    const schema = `t_${crypto.randomUUID().replace(/-/g, "").slice(0, 16)}`;
    const dir = tempDir("relay-lock-postgres-");
    const env = { DATA_DIR: dir.path, DATABASE_URL: DB!, DATABASE_SCHEMA: schema, ADMIN_TOKEN: TEST_ADMIN_TOKEN };
    try {
      for (let i = 0; i < 5; i++) {
        const started = Date.now();
        const { pid, line } = await startUnreaped("relay listening", env);
        const ready = await fetch(`http://127.0.0.1:${line.port}/health/ready`);
        expect(ready.status).toBe(200);
        expect(Date.now() - started).toBeLessThan(30_000);
        // load: 16 writers creating projects, so that the database's sessions are busy when it dies
        let loading = true;
        const create = () =>
          fetch(`http://127.0.0.1:${line.port}/v1/admin/projects`, {
            method: "POST",
            headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, "content-type": "application/json" },
            body: JSON.stringify({ name: `load ${i}` }),
          });
        let created = 0;
        const load = Promise.all(
          Array.from({ length: 16 }, async () => {
            while (loading) if ((await create().catch(() => null))?.status === 201) created++;
          }),
        );
        await Bun.sleep(500);
        process.kill(pid, "SIGKILL");
        loading = false;
        await load;
        expect(created).toBeGreaterThan(0);
      }
    } finally {
      const sql = postgres(DB!, { max: 1, onnotice: () => {} });
      await sql.unsafe(`drop schema if exists "${schema}" cascade`);
      await sql.end();
      dir.done();
    }
  },
);
