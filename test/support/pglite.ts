/**
 * PGlite databases for tests, made once per test process and copied: a new PGlite database runs
 * initdb (about 5 s of a core), opening a copy of one takes a tenth of that. `seedPglite(dataDir)`
 * gives a relay's DATA_DIR the database the relay's first start would create (the same openDatabase,
 * every migration applied); the relay still opens it and runs its migrations (none left) as usual.
 * The templates are made by a process of its own (pglite-template.ts), started when this module is
 * first imported: on the other core, while the tests that need none run.
 */
import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

// test/support/cleanup.ts removes this process's templates after its last test; those of test processes that died are removed here
const PREFIX = "pglite-templates-";
for (const name of readdirSync(tmpdir()).filter((n) => n.startsWith(PREFIX))) {
  const pid = Number(name.slice(PREFIX.length));
  if (pid !== process.pid && !alive(pid)) rmSync(join(tmpdir(), name), { recursive: true, force: true });
}
const root = join(tmpdir(), `${PREFIX}${process.pid}`);
rmSync(root, { recursive: true, force: true });
mkdirSync(root);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const making = Bun.spawn(["bun", join(import.meta.dir, "pglite-template.ts"), root], {
  stdout: "ignore",
  stderr: "pipe",
});
let made: Promise<void> | undefined;
/** The templates, once their process is done. */
function templates(): Promise<void> {
  made ??= (async () => {
    const [code, err] = [await making.exited, await new Response(making.stderr).text()];
    if (code !== 0) throw new Error(`making the PGlite templates failed (exit ${code}): ${err}`);
  })();
  return made;
}

/** `cp -a`: several times faster than fs.cpSync on PGlite's thousand small files. */
async function copyDir(from: string, to: string): Promise<void> {
  const cp = Bun.spawn(["cp", "-a", from, to], { stdout: "ignore", stderr: "pipe" });
  if ((await cp.exited) !== 0) throw new Error(`cp -a ${from} ${to}: ${await new Response(cp.stderr).text()}`);
}

/** Puts a migrated, empty PGlite database where a relay started with `dataDir` (and no DATABASE_URL) opens it. */
export async function seedPglite(dataDir: string): Promise<void> {
  mkdirSync(dataDir, { recursive: true });
  await templates();
  await copyDir(join(root, "migrated", "pglite"), join(dataDir, "pglite"));
}

/** A new PGlite data directory at `dir`, just after initdb (no migration applied). */
export async function emptyPglite(dir: string): Promise<void> {
  await templates();
  await copyDir(join(root, "empty"), dir);
}
