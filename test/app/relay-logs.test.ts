/** Request ids and log lines: a client's own id is kept; sponsor lines carry project, network, hash and result; admin changes are audited. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { capturingLogger, startTestRelay, type TestRelay } from "../support/relay.ts";

let r: TestRelay;
const captured = capturingLogger();
beforeAll(async () => {
  r = await startTestRelay({}, captured.log);
});
afterAll(() => r.stop());

const lineOf = (requestId: string) => captured.lines.find((l) => l.msg === "request" && l.requestId === requestId);

test("a valid client X-Request-Id is kept and echoed (also in the error envelope); an invalid one is replaced", async () => {
  const own = `client-${crypto.randomUUID()}`;
  const ok = await r.http.get("/health", { "x-request-id": own });
  expect(ok.headers.get("x-request-id")).toBe(own);
  const bad = await r.post("/v1/sponsor", { network: "testnet" }, { "x-request-id": own });
  expect(bad.headers.get("x-request-id")).toBe(own);
  expect(bad.body.error.requestId).toBe(own);
  for (const invalid of ["has space", "x".repeat(129), "semi;colon"]) {
    const res = await r.http.get("/health", { "x-request-id": invalid });
    expect(res.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  }
});

test("a sponsor log line names the project, the network, the hash and the result code", async () => {
  const p = await r.project();
  const user = await r.funded();
  const tx = await r.payment(user);
  const id = crypto.randomUUID();
  const res = await r.post(
    "/v1/sponsor",
    { transaction: tx.toEnvelope().toXDR("base64"), network: "testnet" },
    { "x-api-key": p.testKey, "x-request-id": id },
  );
  expect(res.status).toBe(200);
  await Bun.sleep(20);
  expect(lineOf(id)).toMatchObject({
    route: "/v1/sponsor",
    status: 200,
    projectId: p.id,
    network: "testnet",
    hash: res.body.hash,
    result: "success",
  });
  const again = crypto.randomUUID();
  const stale = await r.post(
    "/v1/sponsor",
    { transaction: (await r.payment(user, { seqOffset: -1n })).toEnvelope().toXDR("base64"), network: "testnet" },
    { "x-api-key": p.testKey, "x-request-id": again },
  );
  expect(stale.status).toBe(422);
  await Bun.sleep(20);
  expect(lineOf(again)).toMatchObject({ status: 422, projectId: p.id, result: "tx_bad_seq" });
  expect(JSON.stringify(captured.lines)).not.toContain(p.testKey);
});

test("admin changes leave an audit line with the ids they changed, never keys", async () => {
  const id = crypto.randomUUID();
  const admin = (requestId: string) => ({ authorization: `Bearer ${r.env.ADMIN_TOKEN}`, "x-request-id": requestId });
  const res = await r.http.post("/v1/admin/projects", { name: "audited" }, admin(id));
  expect(res.status).toBe(201);
  const project = res.body as { id: string };
  const keyId = crypto.randomUUID();
  const key = await r.http.post(`/v1/admin/projects/${project.id}/keys`, { environment: "test" }, admin(keyId));
  const secret = (key.body as { key: string }).key;
  await Bun.sleep(20);
  const audits = captured.lines.filter((l) => l.audit === true);
  expect(audits.find((l) => l.requestId === id)).toMatchObject({
    method: "POST",
    route: "/v1/admin/projects",
    status: 201,
  });
  expect(audits.find((l) => l.requestId === keyId)).toMatchObject({
    route: "/v1/admin/projects/:id/keys",
    params: { id: project.id },
  });
  expect(JSON.stringify(captured.lines)).not.toContain(secret);
  expect(JSON.stringify(captured.lines)).not.toContain(r.env.ADMIN_TOKEN);
});
