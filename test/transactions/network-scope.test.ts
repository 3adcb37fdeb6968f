/**
 * A key reads its own network only (a test key sits in front-end code: it must not read mainnet).
 * One project sponsors a mainnet transaction with its sr_live_ key and a testnet one with its
 * sr_test_ key; then each key's look-up (with and without ?wait), event stream (from
 * Last-Event-ID 0, and live) and the channels protocol's getTransaction see their own network's
 * only: the other network's hash is the same 404 as an unknown one, and credits.low (mainnet
 * credits) is on the live key's stream only. PGlite, and Postgres too when TEST_DATABASE_URL is set.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectError, xdrOf } from "../support/harness.ts";
import { mainnetOf } from "../support/mainnet.ts";
import { databaseEnv, databaseKinds, startTestRelay, type TestRelay } from "../support/relay.ts";
import { SseClient, type SseItem } from "../support/sse.ts";

const keyed = (key: string, extra: Record<string, string> = {}) => ({ "x-api-key": key, ...extra });
/** The events of a stream so far: type and network (credits.low has none in its data: mainnet's). */
const seen = (items: SseItem[]) =>
  items
    .filter((i) => i.event !== undefined)
    .map((i) => ({
      type: i.event!,
      ...(JSON.parse(i.data!) as { innerHash?: string; network?: string; status?: string }),
    }));

describe.each(databaseKinds)("a key reads its own network only (%s)", (kind) => {
  let r: TestRelay;
  let p: { id: string; testKey: string; liveKey: string };
  let mainnetHash: string;
  let testnetHash: string;
  const clients: SseClient[] = [];
  const sponsorBoth = async () => {
    const main = mainnetOf(r);
    const [mainUser] = await main.fund(1);
    const mainTx = await main.payment(mainUser!);
    const m = await main.sponsor(p.liveKey, mainTx);
    expect(m.status).toBe(200);
    const testUser = await r.funded();
    const t = await r.post(
      "/v1/sponsor",
      { transaction: xdrOf(await r.payment(testUser)), network: "testnet" },
      keyed(p.testKey),
    );
    expect(t.status).toBe(200);
    return { mainnet: m.body.innerHash as string, testnet: t.body.innerHash as string };
  };
  beforeAll(
    async () => {
      r = await startTestRelay({ ...databaseEnv(kind), EVENTS_POLL_MS: "50" });
      // the top-up leaves the balance below the alert: a credits.low event (a mainnet one)
      p = await r.project({ credits: 10_000_000n, policy: { lowBalanceAlert: "20000000" } });
      ({ mainnet: mainnetHash, testnet: testnetHash } = await sponsorBoth());
    },
    { timeout: 60_000 },
  );
  afterAll(async () => {
    for (const c of clients) c.close();
    await r.stop();
  });
  const open = async (key: string, headers: Record<string, string> = {}) => {
    const c = await SseClient.open(r.url, keyed(key, headers));
    expect(c.res.status).toBe(200);
    clients.push(c);
    return c;
  };

  test("GET /v1/transactions/{hash}: the other network's hash is the unknown hash's 404, ?wait too", async () => {
    const unknown = await r.http.get(`/v1/transactions/${"cd".repeat(32)}`, keyed(p.testKey));
    expectError(unknown, 404, "NOT_FOUND");
    for (const [key, hash] of [
      [p.testKey, mainnetHash],
      [p.liveKey, testnetHash],
    ] as const) {
      for (const wait of ["", "?wait=1"]) {
        const other = await r.http.get(`/v1/transactions/${hash}${wait}`, keyed(key));
        expectError(other, 404, "NOT_FOUND");
        expect(other.body.error.message).toBe(unknown.body.error.message);
        expect(other.body.error.details).toEqual(unknown.body.error.details);
      }
    }
    const own = await r.http.get(`/v1/transactions/${mainnetHash}`, keyed(p.liveKey));
    expect(own.status).toBe(200);
    expect(own.body.network).toBe("mainnet");
    const ownTest = await r.http.get(`/v1/transactions/${testnetHash}`, keyed(p.testKey));
    expect(ownTest.status).toBe(200);
    expect(ownTest.body.network).toBe("testnet");
  });

  test("GET /v1/events from Last-Event-ID 0: the test key's backlog is testnet's, the live key's mainnet's and credits.low", async () => {
    const test = await open(p.testKey, { "last-event-id": "0" });
    const live = await open(p.liveKey, { "last-event-id": "0" });
    const testEvents = seen(
      await test.until((items) => (seen(items).some((e) => e.status === "success") ? items : undefined)),
    );
    const liveEvents = seen(
      await live.until((items) =>
        seen(items).some((e) => e.status === "success") && seen(items).some((e) => e.type === "credits.low")
          ? items
          : undefined,
      ),
    );
    expect(testEvents.length).toBeGreaterThan(0);
    for (const e of testEvents) expect(e).toMatchObject({ type: "transaction.status", network: "testnet" });
    expect(testEvents.map((e) => e.innerHash)).toContain(testnetHash);
    for (const e of liveEvents.filter((x) => x.type === "transaction.status")) {
      expect(e.network).toBe("mainnet");
      expect(e.innerHash).toBe(mainnetHash);
    }
    expect(liveEvents.filter((e) => e.type === "credits.low")).toHaveLength(1);

    // live events too: new transactions on both networks, each on its own key's stream only
    const next = await sponsorBoth();
    const late = (c: SseClient, hash: string) =>
      c.until((items) => (seen(items).some((e) => e.innerHash === hash && e.status === "success") ? items : undefined));
    await late(test, next.testnet);
    await late(live, next.mainnet);
    // the testnet stream has the testnet transaction's success, which came after the mainnet one's: none of mainnet's
    expect(seen(await late(test, next.testnet)).every((e) => e.network === "testnet")).toBe(true);
    expect(seen(await late(live, next.mainnet)).some((e) => e.network === "testnet")).toBe(false);
  }, 30_000);

  test("the channels protocol's getTransaction on testnet: the mainnet transaction is NOT_FOUND as an unknown one", async () => {
    const get = async (network: string, key: string, transactionId: string) => {
      const res = await fetch(`${r.url}/compat/channels/${network}`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
        body: JSON.stringify({ params: { getTransaction: { transactionId } } }),
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    const unknown = await get("testnet", p.testKey, "ef".repeat(32));
    const mainnet = await get("testnet", p.testKey, mainnetHash);
    expect(mainnet.status).toBe(404);
    expect(mainnet.body.data.code).toBe("NOT_FOUND");
    expect({ ...mainnet.body, metadata: null }).toEqual({ ...unknown.body, metadata: null });
    const own = await get("mainnet", p.liveKey, mainnetHash);
    expect(own.status).toBe(200);
    expect(own.body.data.transactionId).toBe(mainnetHash);
  });
});
