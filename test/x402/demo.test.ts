/**
 * `bun run x402:demo`, as a new user runs it on a fresh clone: one command starts a relay on its
 * embedded network, serves its RPC over https, and a buyer pays examples/x402/server.ts's endpoint.
 */
import { expect, test } from "bun:test";

test("bun run x402:demo: 200 with the weather, and the settlement's receipt", async () => {
  const p = Bun.spawn(["bun", "run", "x402:demo"], {
    cwd: new URL("../..", import.meta.url).pathname,
    env: { ...process.env, TEST_DATABASE_URL: "", DATABASE_URL: "", REDIS_URL: "" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = [await new Response(p.stdout).text(), await new Response(p.stderr).text(), await p.exited];
  expect(code, err).toBe(0);
  const [first, receipt] = out.trim().split("\n");
  expect(first).toBe('200 {"weather":"sunny"}');
  expect(JSON.parse(receipt!)).toMatchObject({ success: true, network: "stellar:testnet" });
  expect(err).not.toContain("NODE_TLS_REJECT_UNAUTHORIZED"); // its certificate is trusted, not every one
}, 180_000);
