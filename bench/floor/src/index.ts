/**
 * The floor: what bench:e2e's load costs a server that does none of the relay's work. Started in the
 * relay's place (`BENCH_RELAY_DIR=bench/floor`), it reads each POST /v1/sponsor body as JSON, hashes
 * its transaction, holds the answer until the next 1 s tick (a ledger) and answers a JSON body of the
 * relay's size; the admin calls the bench makes get what it needs. Its CPU per answer is what the
 * HTTP server, the connections and the timers cost under the same load: docs/performance.md.
 */
const port = Number(process.env.PORT);
let ledger = 1;
let tick = Promise.withResolvers<void>();
setInterval(() => {
  ledger++;
  const t = tick;
  tick = Promise.withResolvers<void>();
  t.resolve();
}, 1000);
const RESULT = "AAAAAAAAAMgAAAAAAAAAAQAAAAAAAAABAAAAAAAAAAA=";

async function sponsor(req: Request): Promise<Response> {
  if (!req.headers.get("x-api-key")) return Response.json({ error: { code: "UNAUTHORIZED" } }, { status: 401 });
  const body = (await req.json()) as { transaction: string };
  const hash = new Bun.CryptoHasher("sha256").update(body.transaction).digest("hex");
  await tick.promise;
  return Response.json({
    hash,
    innerHash: hash,
    status: "success",
    ledger,
    feeCharged: "200",
    network: "mainnet",
    resultXdr: RESULT,
    createdAt: new Date().toISOString(),
    requestId: crypto.randomUUID(),
  });
}

const admin: Record<string, unknown> = {
  "/v1/admin/channels": { target: 8, totals: { active: 8, creating: 0 }, lastError: null },
  "/v1/admin/projects": { id: "floor" },
};

Bun.serve({
  port,
  hostname: "127.0.0.1",
  fetch(req) {
    const path = new URL(req.url).pathname;
    if (path === "/v1/sponsor") return sponsor(req);
    if (path === "/metrics") return new Response("");
    if (path.endsWith("/keys")) return Response.json({ key: "floor" });
    return Response.json(admin[path] ?? { status: "ok" });
  },
});
process.on("SIGTERM", () => process.exit(0));
console.log(JSON.stringify({ level: 30, msg: "relay listening", port }));
