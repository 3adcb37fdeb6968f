/** The README's client examples work as written against a running relay. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { startTestRelay, type TestRelay } from "../support/relay.ts";

let r: TestRelay;
beforeAll(async () => {
  // its webhooks may go to this machine: the README's blocks register one
  r = await startTestRelay({ WEBHOOK_ALLOW_PRIVATE: "true" });
});
afterAll(() => r.stop());

const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
const run = async (cmd: string[]) => {
  const p = Bun.spawn(cmd, {
    cwd: new URL("../..", import.meta.url).pathname,
    env: { ...process.env, RELAY_URL: r.url },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = [await new Response(p.stdout).text(), await new Response(p.stderr).text(), await p.exited];
  return { out, err, code };
};

test("the TypeScript example sponsors a payment", async () => {
  expect(readme).toContain(readFileSync(new URL("../../examples/sponsor-payment.ts", import.meta.url), "utf8").trim());
  const { out, code, err } = await run(["bun", "examples/sponsor-payment.ts"]);
  expect(err).toBe("");
  expect(code).toBe(0);
  expect(out).toMatch(/^200 \{/);
  expect(JSON.parse(out.slice(4)).feePaid).toBe("300"); // 100 x (2 operations + 1)
});

test("the curl example sponsors a payment", async () => {
  const line = readme.split("\n").find((l) => l.startsWith("curl -s http://localhost:3000/v1/sponsor"));
  expect(line).toBeDefined();
  const { out, code } = await run([
    "bash",
    "-c",
    `TX=$(bun examples/signed-payment.ts) && ${line!.replaceAll("http://localhost:3000", r.url)}`,
  ]);
  expect(code).toBe(0);
  const body = JSON.parse(out);
  expect(body.feePaid).toBe("300");
  expect(body.hash).toMatch(/^[0-9a-f]{64}$/);
});

test("the README's admin walkthrough runs as written, top to bottom", { timeout: 30_000 }, async () => {
  const start = readme.indexOf("The walkthrough below runs as written");
  const block = readme.slice(
    readme.indexOf("```sh\n", start) + 6,
    readme.indexOf("```", readme.indexOf("```sh\n", start) + 6),
  );
  const p = Bun.spawn(["bash", "-e", "-o", "pipefail", "-c", block], {
    cwd: new URL("../..", import.meta.url).pathname,
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, RELAY_URL: r.url, ADMIN_TOKEN: r.env.ADMIN_TOKEN! },
  });
  const [out, err, code] = [await new Response(p.stdout).text(), await new Response(p.stderr).text(), await p.exited];
  expect(err).toBe("");
  expect(code).toBe(0);
  expect(out).toContain('"feePaid":"300"'); // the mainnet payment was sponsored with the live key
  expect(out).toContain('"revokedAt":"'); // and the key was revoked at the end
});

test("the asynchronous example: 202 with a Location, then a long poll until success", async () => {
  expect(readme).toContain(readFileSync(new URL("../../examples/sponsor-async.ts", import.meta.url), "utf8").trim());
  const { out, code, err } = await run(["bun", "examples/sponsor-async.ts"]);
  expect(err).toBe("");
  expect(code).toBe(0);
  const [accepted, done] = out.trim().split("\n");
  expect(accepted).toMatch(/^202 \{"hash":"[0-9a-f]{64}","innerHash":"[0-9a-f]{64}","status":"(submitted|success)"\}$/);
  expect(done).toMatch(/^200 success \d+$/);
});

test("every shell block of the README's API by example runs as written, in order, in one shell", {
  timeout: 90_000,
}, async () => {
  const part = readme.slice(readme.indexOf("## The API by example"), readme.indexOf("## Configuration"));
  const blocks = [...part.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  expect(blocks.length).toBeGreaterThanOrEqual(6);
  const script = blocks
    .join("\n")
    .replaceAll("http://localhost:3000", r.url)
    .replace("https://example.com/relay-hook", "http://127.0.0.1:9/relay-hook"); // this machine: nothing listens
  const p = Bun.spawn(["bash", "-o", "pipefail", "-c", script], {
    cwd: new URL("../..", import.meta.url).pathname,
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, RELAY_URL: r.url, ADMIN_TOKEN: r.env.ADMIN_TOKEN! },
  });
  const [out, err, code] = [await new Response(p.stdout).text(), await new Response(p.stderr).text(), await p.exited];
  // curl -N ends with 28 when --max-time stops the stream, as the README says; nothing else may fail
  expect(err).not.toMatch(/curl: \((?!28\))\d+\)|error:|command not found|unbound/i);
  expect(code).toBe(0); // the last block's last command
  expect(out).toContain('"feePaid":"300"'); // sponsored
  expect(out).toMatch(/"status":"success"/); // looked up by its hash
  // estimated: 3 operations (the fee-bump's own too) at the likely rate, bid at 10x a market rate (fast); each rate is
  // what the last ledgers the relay read cleared at (100), or the network's fee statistics (150 here: README)
  const estimate = /"estimatedFee":"(\d+)","bidFee":"(\d+)".*?"rates":\{"likely":"(\d+)","bid":"(\d+)"/.exec(out);
  expect(estimate).not.toBeNull();
  const [fee, bidFee, likely, bid] = estimate!.slice(1).map(BigInt) as [bigint, bigint, bigint, bigint];
  expect([100n, 150n]).toContain(likely);
  expect([1000n, 1500n]).toContain(bid);
  expect([fee, bidFee]).toEqual([3n * likely, 3n * bid]);
  expect(out).toContain('"revokedAt":"'); // the admin walkthrough, to the end
  expect(out).toContain(": connected"); // the event stream, with the walkthrough's project's key
  expect(out).toMatch(/"secret":"whsec_/); // a webhook registered
});
