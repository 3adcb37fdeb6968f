/**
 * `bun run test:slowest [bun test's arguments]`: runs the suite (or the files named) as `bun run test`
 * does, with bun's JUnit report in a temporary file, then prints the 25 slowest tests and the 25 slowest
 * files with their times, and the whole run's time. Exits as the test run did.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const SHOWN = 25;
const dir = mkdtempSync(join(tmpdir(), "test-timings-"));
const report = join(dir, "junit.xml");
const script = JSON.parse(readFileSync(join(import.meta.dir, "..", "..", "package.json"), "utf8")).scripts
  .test as string;
const started = performance.now();
const run = Bun.spawn(
  [...script.split(/\s+/), "--reporter=junit", `--reporter-outfile=${report}`, ...process.argv.slice(2)],
  { stdout: "inherit", stderr: "inherit" },
);
const code = await run.exited;
const wall = (performance.now() - started) / 1000;

/** An attribute of an XML start tag, unescaped. */
const attr = (tag: string, name: string): string => {
  const m = new RegExp(`\\s${name}="([^"]*)"`).exec(tag);
  return (m?.[1] ?? "")
    .replaceAll("&quot;", '"')
    .replaceAll("&apos;", "'")
    .replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">")
    .replaceAll("&amp;", "&");
};

let xml = "";
try {
  xml = readFileSync(report, "utf8");
} catch {
  console.error("no JUnit report was written");
} finally {
  rmSync(dir, { recursive: true, force: true });
}
// a file's own suite (its name is the file) times the whole file: its hooks (a relay started in beforeAll) too
const files = new Map<string, number>();
for (const [tag] of xml.matchAll(/<testsuite\b[^>]*>/g))
  if (attr(tag, "file") && attr(tag, "name") === attr(tag, "file"))
    files.set(attr(tag, "file"), Number(attr(tag, "time")) || 0);
const tests: { seconds: number; file: string; name: string }[] = [];
for (const [tag] of xml.matchAll(/<testcase\b[^>]*>/g))
  tests.push({ seconds: Number(attr(tag, "time")) || 0, file: attr(tag, "file"), name: attr(tag, "name") });
const seconds = (s: number) => `${s.toFixed(1).padStart(6)} s`;
console.log(`\nthe ${SHOWN} slowest tests:`);
for (const t of tests.sort((a, b) => b.seconds - a.seconds).slice(0, SHOWN))
  console.log(`${seconds(t.seconds)}  ${t.file} > ${t.name}`);
console.log(`\nthe ${SHOWN} slowest files (with their hooks):`);
for (const [file, s] of [...files].sort((a, b) => b[1] - a[1]).slice(0, SHOWN)) console.log(`${seconds(s)}  ${file}`);
const total = [...files.values()].reduce((a, s) => a + s, 0);
console.log(
  `\n${tests.length} tests in ${files.size} files: ${total.toFixed(0)} s of files, ${wall.toFixed(0)} s wall clock`,
);
process.exit(code);
