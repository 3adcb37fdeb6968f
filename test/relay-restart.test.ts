/** Outcomes survive a restart: idempotent replay and inner-hash dedupe come from the database; localnet keeps its ledger. */
import { expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { startTestRelay, databaseKind } from "./support/relay.ts";

// embedded PGlite always; Postgres too when the suite has one (TEST_DATABASE_URL)
const kinds = databaseKind === "postgres" ? ["pglite", "postgres"] : ["pglite"];

test.each(kinds)(
  "a restart keeps idempotency keys and sponsored transactions (%s)",
  { timeout: 20_000 },
  async (kind) => {
    const first = await startTestRelay(kind === "pglite" ? { DATABASE_URL: "", DATABASE_SCHEMA: "" } : {});
    const user = await first.funded();
    const body = { transaction: (await first.payment(user)).toEnvelope().toXdr("base64"), network: "testnet" };
    const key = { "x-idempotency-key": "restart-key" };
    const a = await first.post("/v1/sponsor", body, key);
    expect(a.status).toBe(200);
    await first.stop({ keepData: true });

    const second = await startTestRelay(first.env);
    try {
      const replay = await second.post("/v1/sponsor", body, key);
      expect(replay.status).toBe(200);
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      expect(replay.body).toEqual(a.body);
      const again = await second.post("/v1/sponsor", body); // no key: the inner hash was sponsored already
      expect(again.body).toEqual(a.body);
      expect((await second.rpc.getTransaction(a.body.hash)).status).toBe("SUCCESS" as never);
      const health = (await (await fetch(`${second.url}/health`)).json()) as {
        storage: { database: string; status: string; checkpoints: string };
      };
      expect(health.storage).toEqual({ database: kind, status: "ok", checkpoints: "memory" });
    } finally {
      await second.stop();
    }
    expect(existsSync(second.env.DATA_DIR!)).toBe(false); // tests leave nothing behind
  },
);
