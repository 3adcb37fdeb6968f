/**
 * Webhook deliveries live in the database: a relay stopped while a delivery waits for its retry,
 * or while its request hangs, delivers it after its restart with the same webhook-id.
 */
import { afterAll, expect, test } from "bun:test";
import { events } from "../../src/store/schema.ts";
import { expectOk, until } from "../support/harness.ts";
import { startTestRelay, type TestRelay } from "../support/relay.ts";
import { startReceiver } from "../support/webhook-receiver.ts";

const rx = startReceiver();
let r: TestRelay | null = null;
afterAll(async () => {
  await r?.stop();
  rx.stop();
});

test("a pending delivery and one cut off in flight are delivered after a restart, with their webhook-ids", async () => {
  const env = { WEBHOOK_ALLOW_PRIVATE: "true", WEBHOOK_POLL_MS: "50", WEBHOOK_RETRY_BASE_MS: "300" };
  r = await startTestRelay(env);
  const p = await r.project();
  const hook = await r.admin("POST", `/projects/${p.id}/webhooks`, { url: rx.url });
  expectOk(hook, 201);
  rx.secret = hook.body.secret;
  const insert = async (status: string) => {
    const [row] = await r!.database
      .insert(events)
      .values({ type: "transaction.status", projectId: p.id, network: "testnet", data: { status } })
      .returning({ id: events.id });
    return `evt_${row!.id}`;
  };
  // the first event's first attempt fails (a retry is due later); the second's request never ends
  rx.answer = (_n, got) =>
    got.verified?.data.status === "hang" ? new Promise<Response>(() => {}) : new Response(null, { status: 500 });
  const failing = await insert("failing");
  await until("the failed attempt", () => rx.received.some((x) => x.id === failing));
  const hanging = await insert("hang");
  await until("the hanging request", () => rx.received.some((x) => x.id === hanging));
  const saved = r.env;
  await r.stop({ keepData: true });

  rx.answer = () => new Response(null, { status: 200 });
  const t0 = Date.now();
  r = await startTestRelay(saved);
  await until("both delivered", async () => {
    const d = await r!.admin("GET", `/projects/${p.id}/webhooks/${hook.body.id}/deliveries`);
    return d.body.deliveries.every((x: { state: string }) => x.state === "delivered");
  });
  expect(Date.now() - t0).toBeLessThan(10_000); // not after the lease (the hanging one was given back)
  const ok = rx.received.filter((x) => x.at >= t0);
  expect(new Set(ok.map((x) => x.id))).toEqual(new Set([failing, hanging]));
  for (const x of rx.received) expect(x.error).toBeNull();
});
