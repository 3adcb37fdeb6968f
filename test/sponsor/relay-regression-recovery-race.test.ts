/**
 * Regression (found in review; the test failed before the fix): recovery checks the in-process inflight map once, before its network lookup. A client's
 * retry that arrives while recovery is looking the inner hash up resolves the same submission: both
 * settle it. The network lookup (getTransaction) is held here until both have asked, so that the
 * interleaving is deterministic; nothing else is changed.
 */
import { afterEach, expect, test } from "bun:test";
import postgres from "postgres";
import { AFTER_504_ENV, startTestRelay, type TestRelay } from "../support/relay.ts";
import { fundedMainnetUser, journalSum, mainnetPayment } from "../support/mainnet.ts";

let r: TestRelay;
afterEach(() => r?.stop());
const CREDITS = 100_000_000n;

// on PGlite the statements run one at a time and the journal stays right; the race needs Postgres
test.skipIf(!process.env.TEST_DATABASE_URL)(
  "recovery and a client's retry settling the same applied submission: the journal nets to the fee",
  { timeout: 30_000 },
  async () => {
    r = await startTestRelay(AFTER_504_ENV);
    const net = r.networks.get("mainnet").localnet!;
    const p = await r.project({ credits: CREDITS, policy: { requestsPerSecond: 1000, burst: 1000 } });
    const user = await fundedMainnetUser(r);
    const { innerHash, body } = mainnetPayment(r, user, { timeoutSeconds: 300 });
    const headers = { "x-api-key": p.liveKey };

    // hold getTransaction lookups of this inner hash until two callers (recovery, then the retry) have asked
    const gw = r.networks.get("mainnet").gateway!;
    const find = gw.find.bind(gw);
    let callers = 0;
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    gw.find = async (hash: string) => {
      if (hash === innerHash) {
        callers++;
        await gate;
      }
      return find(hash);
    };

    const first = await r.post("/v1/sponsor", body, headers);
    expect(first.status).toBe(504); // queued, no ledger yet
    net.closeLedger(); // applied now; nobody is waiting

    // recovery picks the unanswered submission up and asks the network
    for (let i = 0; i < 100 && callers < 1; i++) await Bun.sleep(20);
    expect(callers).toBe(1);
    const retry = r.post("/v1/sponsor", body, headers); // the client comes back meanwhile
    for (let i = 0; i < 100 && callers < 2; i++) await Bun.sleep(20);
    expect(callers).toBe(2);
    {
      // Postgres: hold the row for a moment so that both settlements are under way at once (deterministic)
      const pg = postgres(process.env.TEST_DATABASE_URL!, { max: 1, onnotice: () => {} });
      await pg.begin(async (t) => {
        await t.unsafe(
          `select 1 from "${r.env.DATABASE_SCHEMA}".submissions where inner_hash = '${innerHash}' for update`,
        );
        open();
        await Bun.sleep(300);
      });
      await pg.end();
    }
    expect((await retry).status).toBe(200);
    await Bun.sleep(300);

    const view = (await r.admin("GET", `/projects/${p.id}`)).body;
    expect({
      journal: await journalSum(r, p.id),
      actor: BigInt(view.creditBalance),
      reserved: BigInt(view.creditReserved),
    }).toEqual({ journal: CREDITS - 200n, actor: CREDITS - 200n, reserved: 0n });
  },
);
