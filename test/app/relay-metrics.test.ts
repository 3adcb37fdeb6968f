/**
 * GET /metrics against a whole relay (embedded testnet, ledgers closed on demand): sponsor requests
 * answered 200, 400, 422 and 429 show up with the counts sent, fees paid equal the fees answered,
 * the channel gauges equal GET /v1/admin/channels, pending submissions and in-flight leases are
 * seen while a submission waits for its ledger; the token protects the endpoint; labels are route
 * patterns and never keys, ids, IPs, accounts or hashes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { until, xdrOf } from "../support/harness.ts";
import { startTestRelay, type TestRelay } from "../support/relay.ts";

const TOKEN = "metrics-token-0123456789";
let r: TestRelay;
beforeAll(
  async () => {
    r = await startTestRelay({ LEDGER_CLOSE_MS: "0", METRICS_TOKEN: TOKEN });
  },
  { timeout: 30_000 },
);
afterAll(() => r.stop());

/** The exposition text parsed: `get(name, labels)` is the sample whose labels include `labels` (summed over the rest). */
function parse(text: string) {
  const samples: { name: string; labels: Record<string, string>; value: number }[] = [];
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not an exposition line: ${line}`);
    const labels = Object.fromEntries(
      [...(m[2] ?? "").matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1]!, x[2]!]),
    );
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  const matching = (name: string, labels: Record<string, string>) =>
    samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return {
    samples,
    has: (name: string, labels: Record<string, string> = {}) => matching(name, labels).length > 0,
    get: (name: string, labels: Record<string, string> = {}) => matching(name, labels).reduce((a, s) => a + s.value, 0),
  };
}

async function scrape(token: string | null = TOKEN) {
  const res = await r.http.raw("/metrics", token === null ? {} : { headers: { authorization: `Bearer ${token}` } });
  const text = await res.text();
  return { res, text, ...(res.status === 200 ? parse(text) : { samples: [], has: () => false, get: () => 0 }) };
}

const sponsor = (body: unknown, headers: Record<string, string> = {}) => r.post("/v1/sponsor", body, headers);
const SPONSOR_200 = { method: "POST", route: "/v1/sponsor", status: "200" };

describe("GET /metrics", () => {
  test(
    "sponsor requests (200, 400, 422, 429): counts, outcomes, fees paid, rate-limit rejections, channel gauges, pending submissions",
    async () => {
      const net = r.networks.get("testnet").localnet!;
      const feesPaid: bigint[] = [];

      // 200, watched while it waits for its ledger: one pending submission, one lease in flight
      const user = await r.funded();
      const first = sponsor({ transaction: xdrOf(await r.payment(user)), network: "testnet" });
      await until("the submission to be queued", () => net.queue.size > 0, 5000);
      const waiting = await scrape();
      const view = (await r.admin("GET", "/channels?network=testnet")).body;
      expect(waiting.get("relay_submissions_pending", { network: "testnet" })).toBe(1);
      expect(waiting.get("relay_channels_in_flight", { network: "testnet" })).toBe(1);
      expect(view.totals.inFlight.count).toBe(1);
      expect(waiting.get("relay_channels_in_flight_fees_stroops", { network: "testnet" })).toBe(
        Number(view.totals.inFlight.fees),
      );
      expect(Number(view.totals.inFlight.fees)).toBeGreaterThan(0);
      r.close();
      const ok1 = await first;
      expect(ok1.status).toBe(200);
      feesPaid.push(BigInt(ok1.body.feePaid));

      // another 200
      const user2 = await r.funded();
      const second = sponsor({ transaction: xdrOf(await r.payment(user2)), network: "testnet" });
      await until("the submission to be queued", () => net.queue.size > 0, 5000);
      r.close();
      const ok2 = await second;
      expect(ok2.status).toBe(200);
      feesPaid.push(BigInt(ok2.body.feePaid));

      // 422: the network refuses the sequence number (nothing is charged)
      const bad = await sponsor({
        transaction: xdrOf(await r.payment(await r.funded(), { seqOffset: -1n })),
        network: "testnet",
      });
      expect(bad.status).toBe(422);
      expect(bad.body.error.details.result_codes.transaction).toBe("tx_bad_seq");

      // a project with a bucket of 1: 400 from the sponsor service, then 429
      const p = await r.project({ policy: { requestsPerSecond: 0.001, burst: 1 } });
      const invalid = await sponsor({ transaction: "AAAA", network: "testnet" }, { "x-api-key": p.testKey });
      expect(invalid.status).toBe(400);
      const limited = await sponsor({ transaction: "AAAA", network: "testnet" }, { "x-api-key": p.testKey });
      expect(limited.status).toBe(429);

      const m = await scrape();
      expect(m.res.status).toBe(200);
      expect(m.res.headers.get("content-type")).toStartWith("text/plain; version=0.0.4");
      // the process's own series beside the relay's
      expect(m.get("process_cpu_seconds_total")).toBeGreaterThan(0);
      expect(m.get("process_resident_memory_bytes")).toBeGreaterThan(10_000_000);
      expect(m.get("process_open_fds")).toBeGreaterThan(0);
      for (const name of ["nodejs_eventloop_lag_seconds", "nodejs_active_handles_total", "nodejs_heap_size_used_bytes"])
        expect(m.has(name)).toBe(true);
      // not the heap spaces: Bun walks the whole heap for them (tens of ms at each scrape, every request stalled)
      expect(m.has("nodejs_heap_space_size_used_bytes")).toBe(false);
      // requests and latency by route pattern and status
      expect(m.get("relay_http_requests_total", SPONSOR_200)).toBe(2);
      expect(m.get("relay_http_requests_total", { ...SPONSOR_200, status: "400" })).toBe(1);
      expect(m.get("relay_http_requests_total", { ...SPONSOR_200, status: "422" })).toBe(1);
      expect(m.get("relay_http_requests_total", { ...SPONSOR_200, status: "429" })).toBe(1);
      expect(m.get("relay_http_request_duration_seconds_count", SPONSOR_200)).toBe(2);
      expect(m.get("relay_http_request_duration_seconds_bucket", { ...SPONSOR_200, le: "+Inf" })).toBe(2);
      expect(m.get("relay_http_request_duration_seconds_sum", SPONSOR_200)).toBeGreaterThan(0);
      expect(m.get("relay_http_request_duration_seconds_count", { ...SPONSOR_200, status: "429" })).toBe(1);
      expect(m.get("relay_http_requests_total", { route: "/metrics", status: "200" })).toBeGreaterThanOrEqual(1);
      // sponsor outcomes by result code
      expect(
        m.get("relay_sponsor_outcomes_total", { network: "testnet", outcome: "success", tx_result: "tx_success" }),
      ).toBe(2);
      expect(
        m.get("relay_sponsor_outcomes_total", {
          network: "testnet",
          outcome: "SUBMISSION_FAILED",
          tx_result: "tx_bad_seq",
        }),
      ).toBe(1);
      expect(
        m.get("relay_sponsor_outcomes_total", { network: "testnet", outcome: "VALIDATION_ERROR", tx_result: "none" }),
      ).toBe(1);
      expect(m.get("relay_sponsor_outcomes_total")).toBe(4); // the 429 never reached the service
      // fees paid: what the answers said was paid
      expect(m.get("relay_fees_paid_stroops_total", { network: "testnet" })).toBe(
        Number(feesPaid.reduce((a, b) => a + b, 0n)),
      );
      expect(m.has("relay_fees_paid_stroops_total", { network: "mainnet" })).toBe(false);
      // rate-limit rejections, by whose bucket
      expect(m.get("relay_rate_limited_total", { scope: "project" })).toBe(1);
      expect(m.get("relay_rate_limited_total", { scope: "anonymous" })).toBe(0);
      // confirmation delay after ledger close: both sponsored transactions (and the pool's own) were seen, each within seconds
      const delays = m.get("relay_confirmation_delay_seconds_count", { network: "testnet" });
      expect(delays).toBeGreaterThanOrEqual(2);
      expect(m.get("relay_confirmation_delay_seconds_sum", { network: "testnet" }) / delays).toBeLessThan(5);
      expect(m.get("relay_confirmation_delay_seconds_bucket", { network: "testnet", le: "30" })).toBe(delays);
      // the watcher's reads of those ledgers' transactions (one page each here), timed
      const reads = m.get("relay_ledger_read_seconds_count", { network: "testnet" });
      expect(reads).toBeGreaterThanOrEqual(1);
      expect(m.get("relay_ledger_read_seconds_bucket", { network: "testnet", le: "2.5" })).toBe(reads);
      // nothing pending now
      expect(m.get("relay_submissions_pending", { network: "testnet" })).toBe(0);
      // RPC requests and the calls they carried (sends of one turn share a request, as a batch)
      const sends = m.get("relay_rpc_calls_total", { network: "testnet", method: "sendTransaction" });
      expect(sends).toBeGreaterThanOrEqual(feesPaid.length);
      const sendRequests = m.get("relay_rpc_requests_total", { network: "testnet", method: "sendTransaction" });
      expect(sendRequests).toBeGreaterThanOrEqual(1);
      expect(sendRequests).toBeLessThanOrEqual(sends);
      expect(m.get("relay_rpc_calls_total", { network: "testnet", method: "getLatestLedger" })).toBeGreaterThan(0);
      // database statement latency
      for (const statement of ["select", "insert", "update"])
        expect(m.get("relay_db_statement_duration_seconds_count", { statement })).toBeGreaterThan(0);
      expect(m.get("relay_db_statement_duration_seconds_sum")).toBeGreaterThan(0);
    },
    { timeout: 30_000 },
  );

  test("the channel gauges equal GET /v1/admin/channels", async () => {
    for (const network of ["testnet", "mainnet"]) {
      const m = await scrape();
      const v = (await r.admin("GET", `/channels?network=${network}`)).body;
      expect(m.get("relay_channels", { network, state: "active" })).toBe(v.totals.active);
      expect(m.get("relay_channels", { network, state: "creating" })).toBe(v.totals.creating);
      expect(m.get("relay_channels", { network, state: "draining" })).toBe(v.totals.draining);
      expect(m.get("relay_channels", { network })).toBe(v.totals.count);
      expect(m.get("relay_channels_target", { network })).toBe(v.target);
      expect(m.get("relay_channels_balance_stroops", { network })).toBe(Number(v.totals.balance));
      expect(m.get("relay_channels_in_flight", { network })).toBe(v.totals.inFlight.count);
      expect(m.get("relay_channels_in_flight_fees_stroops", { network })).toBe(Number(v.totals.inFlight.fees));
      expect(m.get("relay_funder_balance_stroops", { network })).toBe(Number(v.funder.balance));
      expect(v.totals.active).toBeGreaterThan(0);
      expect(Number(v.totals.balance)).toBeGreaterThan(0);
    }
  });

  test("routes are patterns, also for requests refused before routing; unknown paths are 'unmatched'", async () => {
    const id = crypto.randomUUID();
    expect((await r.admin("GET", `/projects/${id}`)).status).toBe(404);
    expect(
      (await r.http.get(`/v1/admin/projects/${id}`, { authorization: "Bearer wrong-token-0123456789" })).status,
    ).toBe(401);
    expect(
      (await sponsor({ transaction: "AAAA", network: "testnet" }, { "x-api-key": "sr_test_notakey" })).status,
    ).toBe(401);
    expect((await r.http.get(`/no/such/${id}`)).status).toBe(404);
    const m = await scrape();
    expect(m.get("relay_http_requests_total", { method: "GET", route: "/v1/admin/projects/:id", status: "404" })).toBe(
      1,
    );
    expect(m.get("relay_http_requests_total", { method: "GET", route: "/v1/admin/projects/:id", status: "401" })).toBe(
      1,
    );
    expect(m.get("relay_http_requests_total", { method: "POST", route: "/v1/sponsor", status: "401" })).toBe(1);
    expect(m.get("relay_http_requests_total", { method: "GET", route: "unmatched", status: "404" })).toBe(1);
    const routes = new Set(m.samples.filter((s) => s.name === "relay_http_requests_total").map((s) => s.labels.route));
    expect([...routes].every((route) => route === "unmatched" || route.startsWith("/"))).toBe(true);
    expect([...routes].some((route) => route.includes(id))).toBe(false);
  });

  test("no API keys, project ids, IPs, accounts or hashes in the exposition", async () => {
    const p = await r.project();
    // over a socket: the relay sees the client's address
    await r.tcp.post(
      "/v1/sponsor",
      { transaction: xdrOf(await r.payment(await r.funded(), { seqOffset: -1n })), network: "testnet" },
      { "x-api-key": p.testKey },
    );
    const { text } = await scrape();
    for (const secret of [p.testKey, p.liveKey, p.id, TOKEN, "127.0.0.1"]) expect(text).not.toContain(secret);
    expect(text).not.toMatch(/\b[0-9a-f]{64}\b/); // transaction hashes
    expect(text).not.toMatch(/\b[GS][A-Z2-7]{55}\b/); // account ids, secret seeds
  });

  test("METRICS_TOKEN: no or a wrong bearer token is 401 in the error envelope; /metrics needs no API key and has no rate limit", async () => {
    for (const token of [null, "wrong-token-0123456789", `${TOKEN}x`]) {
      const { res, text } = await scrape(token);
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe("Bearer");
      expect(JSON.parse(text).error.code).toBe("UNAUTHORIZED");
    }
    const ok = await scrape();
    expect(ok.res.status).toBe(200);
    expect(ok.res.headers.get("ratelimit-limit")).toBeNull();
    expect(ok.res.headers.get("x-request-id")).toBeTruthy();
    expect(ok.get("relay_http_requests_total", { method: "GET", route: "/metrics", status: "401" })).toBe(3);
  });
});
