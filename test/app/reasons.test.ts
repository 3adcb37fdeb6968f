/**
 * details.reason is always a code of src/kernel/reasons.ts (the prose is the message), and docs/api.md
 * lists every one: each `reason: "..."` the relay's source answers is checked against the list.
 */
import { expect, test } from "bun:test";
import { Glob } from "bun";
import { join } from "node:path";
import { REASONS } from "../../src/kernel/reasons.ts";

const root = join(import.meta.dir, "..", "..");

test("every reason literal in src/ and actors/ is a snake_case code of src/kernel/reasons.ts", async () => {
  const found = new Map<string, string>();
  for (const dir of ["src", "actors"]) {
    for await (const file of new Glob("**/*.ts").scan(join(root, dir))) {
      if (file.startsWith("localnet/")) continue; // the embedded network answers Horizon's own shape
      if (file === "pool/channel.machine.ts") continue; // a channel actor's replies to the pool, never answered
      const text = await Bun.file(join(root, dir, file)).text();
      for (const m of text.matchAll(/\breason: "([^"]*)"/g)) found.set(m[1]!, `${dir}/${file}`);
    }
  }
  expect(found.size).toBeGreaterThan(10);
  const unknown = [...found].filter(([reason]) => !(reason in REASONS)).map(([r, file]) => `${r} (${file})`);
  expect(unknown).toEqual([]);
  for (const code of Object.keys(REASONS)) expect(code).toMatch(/^[a-z][a-z0-9]*(_[a-z0-9]+)*$/);
});

test("docs/api.md lists every reason code", async () => {
  const doc = await Bun.file(join(root, "docs/api.md")).text();
  expect(Object.keys(REASONS).filter((code) => !doc.includes(`\`${code}\``))).toEqual([]);
});
