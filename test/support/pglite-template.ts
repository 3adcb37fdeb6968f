/**
 * Makes the PGlite templates of test/support/pglite.ts in the folder given as its argument, in a
 * process of its own (PGlite's initdb keeps a core busy for seconds): `empty`, a data directory just
 * after initdb, and `migrated/pglite`, a relay's database after its first start (every migration
 * applied by the relay's own openDatabase, no rows). It prints `ready`, then stays to remove the
 * folder once the test process (the pid given second) is gone: bun test ends its processes (its
 * --parallel workers) without running their exit handlers.
 */
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { openDatabase } from "../../src/store/db.ts";

const [root, owner] = [process.argv[2], Number(process.argv[3])];
if (!root || !owner) throw new Error("usage: bun test/support/pglite-template.ts <folder> <test process pid>");
const client = new PGlite(join(root, "empty"));
await client.waitReady;
await client.close();
mkdirSync(join(root, "migrated"));
const cp = Bun.spawnSync(["cp", "-a", join(root, "empty"), join(root, "migrated", "pglite")]);
if (cp.exitCode !== 0) throw new Error(`cp -a: ${cp.stderr.toString()}`);
const db = await openDatabase({ dataDir: join(root, "migrated") });
await db.close();
process.stdout.write("ready\n");

const alive = () => {
  try {
    process.kill(owner, 0);
    return true;
  } catch {
    return false;
  }
};
while (alive()) await Bun.sleep(250);
rmSync(root, { recursive: true, force: true });
process.exit(0);
