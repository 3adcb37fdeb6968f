/**
 * The lists the operator console offers come from the relay (src/features/console/console-lists.ts): the module
 * served at /console/assets/lists.js exports the relay's own submission statuses, policy fields
 * (the admin API's policy patch but the superseded allowedContractIds), fee strategies and key scopes;
 * every module the console imports is served, and none of them repeats a list.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { STATUSES } from "../../actors/sponsor/submission.machine.ts";
import { CONSOLE_FILES, CONSOLE_CSP, consoleRoutes } from "../../src/features/console/console.routes.ts";
import { KEY_SCOPES } from "../../src/features/projects/keys/key.model.ts";
import { TransactionStatus } from "../../src/features/transactions/transaction.model.ts";
import { FEE_STRATEGIES } from "../../src/features/tx/fee-strategy.ts";
import { PolicyPatch } from "../../src/features/projects/rules/policy.ts";

const app = consoleRoutes();
const get = (file: string) => app.handle(new Request(`http://localhost/console/assets/${file}`));
const dir = mkdtempSync(join(tmpdir(), "console-lists-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The served lists.js, imported as the browser imports it. */
async function servedLists(): Promise<Record<string, string[]>> {
  const res = await get("lists.js");
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
  expect(res.headers.get("content-security-policy")).toBe(CONSOLE_CSP);
  expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  const file = join(dir, "lists.js");
  writeFileSync(file, await res.text());
  return await import(file);
}

/** The literals of a TypeBox union of literals. */
const literals = (schema: { anyOf: { const: string }[] }) => schema.anyOf.map((s) => s.const);

describe("GET /console/assets/lists.js", () => {
  test("exports the relay's statuses, policy fields, fee strategies and key scopes", async () => {
    const lists = await servedLists();
    expect(Object.keys(lists).sort()).toEqual(["FEE_STRATEGIES", "KEY_SCOPES", "POLICY_FIELDS", "STATUSES"]);
    expect(lists.STATUSES).toEqual([...STATUSES]);
    expect(lists.STATUSES).toEqual(literals(TransactionStatus as never)); // the API's wire enum
    const patchFields = Object.keys(PolicyPatch.properties);
    expect(lists.POLICY_FIELDS).toEqual(patchFields.filter((f) => f !== "allowedContractIds"));
    expect(lists.POLICY_FIELDS).toContain("feeStrategy");
    expect(lists.POLICY_FIELDS).toContain("approval");
    expect(lists.FEE_STRATEGIES).toEqual([...FEE_STRATEGIES]);
    const feeStrategy = (PolicyPatch.properties.feeStrategy as unknown as { anyOf: never[] }).anyOf[0]!;
    expect(lists.FEE_STRATEGIES).toEqual(literals(feeStrategy)); // what the policy patch accepts
    expect(lists.KEY_SCOPES).toEqual([...KEY_SCOPES]);
  });
});

describe("the console's modules", () => {
  const CONSOLE = join(import.meta.dir, "..", "..", "src", "features", "console", "static");
  const modules = readdirSync(CONSOLE).filter((f) => f.endsWith(".js"));

  test("every module in src/features/console/static, and lists.js, is served as JavaScript; another file is refused", async () => {
    expect(modules).toContain("console.js");
    for (const file of [...modules, "lists.js"]) {
      expect(CONSOLE_FILES.get(file)).toBe("text/javascript; charset=utf-8");
      const res = await get(file);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    }
    for (const file of [...CONSOLE_FILES.keys()].filter((f) => f.endsWith(".js") && f !== "lists.js"))
      expect(modules).toContain(file); // the table names no module that is not there
    expect((await get("console-lists.ts")).status).not.toBe(200);
    expect((await get("nothing.js")).status).not.toBe(200);
  });

  test("every import, from console.js on, is a module the route serves", () => {
    const seen = new Set<string>();
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      expect(CONSOLE_FILES.has(file)).toBe(true);
      if (file === "lists.js") return;
      const text = readFileSync(join(CONSOLE, file), "utf8");
      for (const [, dep] of text.matchAll(/^import .* from "\.\/([a-z-]+\.js)";$/gm)) visit(dep!);
    };
    visit("console.js");
    expect(seen).toContain("lists.js");
    expect([...seen].sort()).toEqual([...modules, "lists.js"].sort()); // none left unused
  });

  test("no module repeats a list the relay serves", () => {
    const quoted = (list: readonly string[]) => list.map((s) => `"${s}"`).join(", ");
    for (const file of modules) {
      const text = readFileSync(join(CONSOLE, file), "utf8");
      for (const list of [STATUSES, FEE_STRATEGIES, KEY_SCOPES]) expect(text).not.toContain(quoted(list));
    }
  });
});
