/**
 * axe-core's WCAG 2.2 AA rules on the page a browser test shows. The console's CSP allows no inline
 * script, so axe's source goes in through the protocol (`page.evaluate`), not a script tag.
 */
import { readFileSync } from "node:fs";
import type { Page } from "puppeteer-core";

const AXE = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");
const TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"];

declare const axe: { run(ctx: unknown, opts: unknown): Promise<{ violations: Violation[] }> };
interface Violation {
  id: string;
  impact: string | null;
  nodes: { target: unknown[] }[];
}

/** The page's violations, as "rule (impact): the elements" lines (none: []). */
export async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  const found = await page.evaluate(
    (tags) =>
      axe
        .run(document, { runOnly: { type: "tag", values: tags } })
        .then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => n.target) }))),
    TAGS,
  );
  return found.map((v) => `${v.id} (${v.impact}): ${JSON.stringify(v.targets)}`);
}

declare const document: unknown;
