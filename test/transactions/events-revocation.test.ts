/**
 * An open event stream lasts no longer than its access: revoking its key ends it (after a last
 * comment saying why), and nothing is sent after it, while the project's other key's stream goes
 * on; suspending the project ends every stream of it. Reconnecting is then refused. The cluster
 * side (a revocation through another instance, a notice missed) is test/cluster-revocation.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { EventsRepo } from "../../src/store/events.repo.ts";
import { expectError } from "../support/harness.ts";
import { startTestRelay, type TestRelay } from "../support/relay.ts";
import { SseClient } from "../support/sse.ts";

const status = (projectId: string, network: string, n: number) => ({
  type: "transaction.status",
  projectId,
  network,
  data: { hash: n.toString(16).padStart(64, "0"), status: "pending", network, n },
});

describe("an event stream ends with its access", () => {
  let r: TestRelay;
  let repo: EventsRepo;
  const clients: SseClient[] = [];
  beforeAll(
    async () => {
      r = await startTestRelay({ EVENTS_POLL_MS: "50" });
      repo = new EventsRepo(r.database);
    },
    { timeout: 60_000 },
  );
  afterAll(async () => {
    for (const c of clients) c.close();
    await r.stop();
  });
  const open = async (key: string) => {
    const c = await SseClient.open(r.url, { "x-api-key": key });
    expect(c.res.status).toBe(200);
    clients.push(c);
    await c.until((items) => (items.some((i) => i.comment === "connected") ? true : undefined));
    return c;
  };
  const events = (c: SseClient) => c.until((items) => items.filter((i) => i.event !== undefined));

  test("revoking the key ends its stream at once, with a last comment; the other key's stream goes on", async () => {
    const p = await r.project();
    const [test, live] = [await open(p.testKey), await open(p.liveKey)];
    await repo.append(status(p.id, "testnet", 1), status(p.id, "mainnet", 2));
    await test.events(1);
    await live.events(1);
    const keys = (await r.admin("GET", `/projects/${p.id}/keys`)).body.keys as { id: string; environment: string }[];
    const testKeyId = keys.find((k) => k.environment === "test")!.id;
    expect((await r.admin("DELETE", `/projects/${p.id}/keys/${testKeyId}`)).status).toBe(200);
    await test.done(); // the server ended it
    expect(test.items.at(-1)).toEqual({ comment: "ended: the API key was revoked" });
    // written after the revocation: on the live key's stream, never on the revoked one's
    await repo.append(status(p.id, "testnet", 3), status(p.id, "mainnet", 4));
    expect(await live.events(2)).toHaveLength(2);
    expect((await events(test)).map((e) => JSON.parse(e.data!).n)).toEqual([1]);
    expectError(await r.http.get("/v1/events", { "x-api-key": p.testKey }), 401, "UNAUTHORIZED");
    expect(live.ended).toBe(false);
  });

  test("suspending the project ends every stream of it; reconnecting is refused", async () => {
    const p = await r.project();
    const other = await r.project();
    const [test, live, others] = [await open(p.testKey), await open(p.liveKey), await open(other.testKey)];
    expect((await r.admin("PATCH", `/projects/${p.id}`, { status: "suspended" })).status).toBe(200);
    await Promise.all([test.done(), live.done()]);
    for (const c of [test, live]) expect(c.items.at(-1)).toEqual({ comment: "ended: the project is suspended" });
    const refused = await r.http.get("/v1/events", { "x-api-key": p.liveKey });
    expect(refused.status).toBe(403);
    await repo.append(status(other.id, "testnet", 5));
    expect(await others.events(1)).toHaveLength(1); // another project's stream is untouched
  });
});
