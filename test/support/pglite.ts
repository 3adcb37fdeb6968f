/**
 * PGlite databases for tests, made once per test process and copied: a new PGlite database runs
 * initdb (about 5 s of a core), opening a copy of one takes a tenth of that. `seedPglite(dataDir)`
 * gives a relay's DATA_DIR the database the relay's first start would create (the same openDatabase,
 * every migration applied); the relay still opens it and runs its migrations (none left) as usual.
 * The templates are made by a process of its own (pglite-template.ts), started when this module is
 * first imported: on the other core, while the tests that need none run.
 */
import { closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { flock, LOCK_EX, LOCK_NB } from "../../src/store/flock.ts";

// this process's templates are removed once it is gone, by the process that made them; those left by a
// test process that died with its maker are removed here: each holds an flock on its folder's lock file
const PREFIX = "pglite-templates-";
/** Locks `dir` for this process's life; false when another live process holds it. */
function hold(dir: string): boolean {
  const fd = openSync(join(dir, ".lock"), "a+");
  if (flock(fd, LOCK_EX | LOCK_NB) === 0) return true;
  closeSync(fd);
  return false;
}
for (const name of readdirSync(tmpdir()).filter((n) => n.startsWith(PREFIX))) {
  const dir = join(tmpdir(), name);
  try {
    if (hold(dir)) rmSync(dir, { recursive: true, force: true });
  } catch {
    /* removed meanwhile by another test process */
  }
}
const root = join(tmpdir(), `${PREFIX}${process.pid}`);
rmSync(root, { recursive: true, force: true });
// locked before it has its name, so that no other process finds it unlocked
const making = mkdtempSync(join(tmpdir(), "pglite-making-"));
hold(making);
renameSync(making, root);

// the maker stays to remove the templates once this process is gone (see pglite-template.ts)
const maker = Bun.spawn(["bun", join(import.meta.dir, "pglite-template.ts"), root, String(process.pid)], {
  stdout: "pipe",
  stderr: "pipe",
});
maker.unref();
let made: Promise<void> | undefined;
/** The templates, once their process says they are ready. */
export function pgliteTemplates(): Promise<void> {
  made ??= (async () => {
    const reader = maker.stdout.getReader();
    let said = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (value) said += new TextDecoder().decode(value);
      if (said.includes("ready\n")) break;
      if (done) {
        const [code, err] = [await maker.exited, await new Response(maker.stderr).text()];
        throw new Error(`making the PGlite templates failed (exit ${code}): ${err}`);
      }
    }
    void reader.cancel();
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
  await pgliteTemplates();
  await copyDir(join(root, "migrated", "pglite"), join(dataDir, "pglite"));
}

/** A new PGlite data directory at `dir`, just after initdb (no migration applied). */
export async function emptyPglite(dir: string): Promise<void> {
  await pgliteTemplates();
  await copyDir(join(root, "empty"), dir);
}
