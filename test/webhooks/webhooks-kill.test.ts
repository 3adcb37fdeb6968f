/**
 * A relay killed (-9) in the middle of a webhook request: after its restart the delivery is sent
 * again, with the same webhook-id, once its lease (WEBHOOK_TIMEOUT_MS and 10 s) has ended. The
 * event is a credits.low, made through the admin API (the relay runs in a process of its own).
 */
import { afterAll, expect, test } from "bun:test";
import { until } from "../support/harness.ts";
import { type Proc, spawnRelay, tempDir } from "../support/processes.ts";
import { TEST_ADMIN_TOKEN } from "../support/relay.ts";
import { startReceiver } from "../support/webhook-receiver.ts";

const dir = tempDir("relay-webhooks-kill-");
const rx = startReceiver();
let relay: (Proc & { url: string }) | null = null;
afterAll(async () => {
  await relay?.kill("SIGKILL");
  rx.stop();
  dir.done();
});

const env: Record<string, string> = {
  DATA_DIR: dir.path,
  ADMIN_TOKEN: TEST_ADMIN_TOKEN,
  LEDGER_CLOSE_MS: "200",
  WEBHOOK_ALLOW_PRIVATE: "true",
  WEBHOOK_POLL_MS: "50",
  WEBHOOK_TIMEOUT_MS: "1000",
  // the child's own: never the suite's Postgres schema or Redis
  DATABASE_URL: "",
  DATABASE_SCHEMA: "",
  REDIS_URL: "",
};

const admin = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${relay!.url}/v1/admin${path}`, {
    method,
    headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as any };
};

test("kill -9 mid-request: delivered after the restart, once the lease ends, with the same webhook-id", async () => {
  relay = await spawnRelay(env);
  const p = await admin("POST", "/projects", { name: "killed", policy: { lowBalanceAlert: "500" } });
  expect(p.status).toBe(201);
  const hook = await admin("POST", `/projects/${p.body.id}/webhooks`, { url: rx.url });
  expect(hook.status).toBe(201);
  rx.secret = hook.body.secret;
  rx.answer = () => new Promise<Response>(() => {}); // the first request never ends
  expect((await admin("POST", `/projects/${p.body.id}/credits`, { amount: "1000" })).status).toBe(200);
  expect((await admin("POST", `/projects/${p.body.id}/credits`, { amount: "-600", reason: "x" })).status).toBe(200);
  await until("the request under way", () => rx.received.length >= 1, 10_000);
  await relay.kill("SIGKILL");
  const killedAt = Date.now();

  rx.answer = () => new Response(null, { status: 204 });
  relay = await spawnRelay(env);
  await until("delivered again", () => rx.received.length >= 2, 30_000, 50);
  const [first, again] = rx.received;
  expect(again!.id).toBe(first!.id);
  expect(again!.error).toBeNull();
  expect(again!.verified?.data).toEqual({ projectId: p.body.id, balance: "400", lowBalanceAlert: "500" });
  // not before the dead instance's lease ended (its request's timeout and the margin)
  expect(again!.at - first!.at).toBeGreaterThanOrEqual(10_000);
  expect(again!.at - killedAt).toBeLessThan(25_000);
  await until("recorded", async () => {
    const x = await admin("GET", `/projects/${p.body.id}/webhooks/${hook.body.id}/deliveries`);
    return x.body.deliveries[0]?.state === "delivered";
  });
}, 60_000);
