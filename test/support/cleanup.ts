/**
 * Preloaded by bun test (bunfig.toml): after the last test of the process, removes the PGlite
 * templates test/support/pglite.ts made for it, so that no test run leaves a folder behind.
 */
import { afterAll } from "bun:test";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

afterAll(() => rmSync(join(tmpdir(), `pglite-templates-${process.pid}`), { recursive: true, force: true }));
