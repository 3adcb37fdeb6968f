/**
 * The code's shape, measured from the code (docs/architecture.md): no file over 350 lines in src/
 * and actors/, no import circle, and every import pointing down the layers:
 *
 *   app, boot, server  ->  features  ->  actors, network, store, localnet, http  ->  stellar  ->  kernel
 *
 * (src/http holds the HTTP plugins and shapes every route uses; src/server what puts the features
 * together as one API: authentication, health, the OpenAPI document, metrics)
 *
 * Folders are layers too: nothing below src/features imports from it. A wire model (`*.model.ts`,
 * in its feature's folder) is a leaf: it imports TypeBox, the kernel, the protocol's constants and
 * other models only.
 * `bun test test/app/structure.test.ts` prints what breaks a rule.
 */
import { expect, test } from "bun:test";
import { Glob } from "bun";
import { dirname, join, normalize, relative } from "node:path";

const root = join(import.meta.dir, "..", "..");
const MAX_LINES = 350;

async function sources(): Promise<Map<string, { lines: number; imports: string[] }>> {
  const files = new Map<string, { lines: number; imports: string[] }>();
  for (const dir of ["src", "actors"])
    for await (const file of new Glob("**/*.{ts,js}").scan(join(root, dir))) {
      const path = `${dir}/${file}`;
      const text = await Bun.file(join(root, path)).text();
      const imports = [...text.matchAll(/(?:from|import)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g)].map((m) =>
        relative(root, normalize(join(root, dirname(path), m[1]!))),
      );
      files.set(path, { lines: text.split("\n").length - (text.endsWith("\n") ? 1 : 0), imports });
    }
  return files;
}

/** A file's layer: an import may only go to the same layer or a lower one. */
function layer(path: string): number {
  if (path.startsWith("src/kernel/")) return 0;
  if (path.startsWith("src/stellar/")) return 1;
  if (/^(actors|src\/(network|store|localnet|http))\//.test(path)) return 3;
  if (path.startsWith("src/features/")) return 4;
  return 5; // src/server, src/boot, src/app.ts, src/index.ts, src/config.ts
}

test(`no file in src/ and actors/ is over ${MAX_LINES} lines`, async () => {
  const long = [...(await sources())].filter(([, f]) => f.lines > MAX_LINES).map(([p, f]) => `${p}: ${f.lines}`);
  expect(long).toEqual([]);
});

test("every import points down the layers; a model is a leaf", async () => {
  const files = await sources();
  const up: string[] = [];
  for (const [path, f] of files)
    for (const target of f.imports) {
      if (!files.has(target)) continue;
      if (layer(target) > layer(path)) up.push(`${path} -> ${target}`);
      if (path.endsWith(".model.ts") && layer(target) > 1 && !target.endsWith(".model.ts"))
        up.push(`${path} -> ${target} (a model is a leaf)`);
    }
  expect(up).toEqual([]);
});

test("no import circle", async () => {
  const files = await sources();
  const circles: string[] = [];
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const visit = (file: string) => {
    state.set(file, "open");
    path.push(file);
    for (const next of files.get(file)!.imports) {
      if (!files.has(next)) continue;
      if (state.get(next) === "open") circles.push([...path.slice(path.indexOf(next)), next].join(" -> "));
      else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(file, "done");
  };
  for (const file of files.keys()) if (!state.has(file)) visit(file);
  expect(circles).toEqual([]);
});
