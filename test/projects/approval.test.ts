/**
 * A policy's approval server: asked (a signed POST, verified here with the standardwebhooks library)
 * once per submission, after the cheap checks; yes sponsors, no is 403 SPONSORSHIP_DENIED with its
 * reason and nothing sent; a slow or failing server follows onFailure.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { xdrOf } from "../support/harness.ts";
import { startTestRelay, type TestRelay } from "../support/relay.ts";

interface Asked {
  verified: boolean;
  body: any;
}

let r: TestRelay;
let answer: (body: any) => Promise<Response> | Response = () => Response.json({ approved: true });
let secret = "";
const asked: Asked[] = [];
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    const raw = await req.text();
    let verified = false;
    try {
      new Webhook(secret).verify(raw, Object.fromEntries(req.headers));
      verified = true;
    } catch {}
    const body = JSON.parse(raw);
    asked.push({ verified, body });
    return answer(body);
  },
});
const approvalUrl = `http://127.0.0.1:${server.port}/approve`;

beforeAll(async () => {
  r = await startTestRelay({ WEBHOOK_ALLOW_PRIVATE: "true" });
});
afterAll(async () => {
  await r.stop();
  server.stop(true);
});

async function approvedProject(approval: Record<string, unknown>, policy: Record<string, unknown> = {}) {
  const p = await r.project();
  const res = await r.admin("PATCH", `/projects/${p.id}`, {
    policy: { ...policy, approval: { url: approvalUrl, ...approval } },
  });
  expect(res.status).toBe(200);
  expect(res.body.policy.approval.secret).toMatch(/^whsec_/);
  secret = res.body.policy.approval.secret;
  return p;
}
const sponsor = (key: string, transaction: string) =>
  r.post("/v1/sponsor", { transaction, network: "testnet" }, { "x-api-key": key });

describe("approval", () => {
  test("set once: the secret is shown once; yes sponsors, with a signed request describing the transaction", async () => {
    const p = await approvedProject({});
    const view = await r.admin("GET", `/projects/${p.id}`);
    expect(view.body.policy.approval).toEqual({ url: approvalUrl, timeoutMs: 2000, onFailure: "deny" });
    answer = () => Response.json({ approved: true });
    const user = await r.funded();
    const tx = await r.payment(user, { amount: "7" });
    const n = asked.length;
    const res = await sponsor(p.testKey, xdrOf(tx));
    expect(res.status).toBe(200);
    expect(asked.length).toBe(n + 1);
    const a = asked.at(-1)!;
    expect(a.verified).toBe(true);
    expect(a.body.type).toBe("sponsorship.requested");
    expect(a.body.data).toMatchObject({
      project: p.id,
      network: "testnet",
      innerHash: Buffer.from(tx.hash()).toString("hex"),
      source: user.publicKey(),
      operations: [
        {
          type: "payment",
          destination: r.networks.get("testnet").localnet!.root.publicKey(),
          asset: "native",
          amount: "7.0000000",
        },
      ],
    });
    expect(BigInt(a.body.data.estimatedFee)).toBeGreaterThan(0n);
    // the same transaction again: its outcome, not a second question
    expect((await sponsor(p.testKey, xdrOf(tx))).status).toBe(200);
    expect(asked.length).toBe(n + 1);
  });

  test("no: 403 SPONSORSHIP_DENIED with the server's reason, nothing sent; sent again, asked again", async () => {
    const p = await approvedProject({});
    answer = () => Response.json({ approved: false, reason: "kyc_required" });
    const user = await r.funded();
    const tx = await r.payment(user);
    const seq = async () => BigInt((await r.rpc.getAccount(user.publicKey())).sequenceNumber());
    const before = await seq();
    const n = asked.length;
    const res = await sponsor(p.testKey, xdrOf(tx));
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("SPONSORSHIP_DENIED");
    expect(res.body.error.details.reason).toBe("kyc_required");
    expect(await seq()).toBe(before);
    const look = await r.http.get(`/v1/transactions/${Buffer.from(tx.hash()).toString("hex")}`, {
      "x-api-key": p.testKey,
    });
    expect(look.body.status).toBe("rejected");
    answer = () => Response.json({ approved: true });
    expect((await sponsor(p.testKey, xdrOf(tx))).status).toBe(200);
    expect(asked.length).toBe(n + 2);
  });

  test("a slow server: onFailure deny is 403 approval_unavailable; approve sponsors", async () => {
    answer = async () => {
      await Bun.sleep(1000);
      return Response.json({ approved: true });
    };
    const deny = await approvedProject({ timeoutMs: 100 });
    const user = await r.funded();
    const res = await sponsor(deny.testKey, xdrOf(await r.payment(user)));
    expect(res.status).toBe(403);
    expect(res.body.error.details.reason).toBe("approval_unavailable");
    answer = () => new Response("no", { status: 500 });
    const approve = await approvedProject({ timeoutMs: 100, onFailure: "approve" });
    expect((await sponsor(approve.testKey, xdrOf(await r.payment(user, { amount: "2" })))).status).toBe(200);
  });

  test("an unreachable server: 403 saying the server did not answer, no socket error text (it is logged)", async () => {
    const closed = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
    const port = closed.port;
    closed.stop(true); // nothing listens there now: the connection is refused
    const p = await r.project();
    const set = await r.admin("PATCH", `/projects/${p.id}`, {
      policy: { approval: { url: `http://127.0.0.1:${port}/approve`, timeoutMs: 1000 } },
    });
    expect(set.status).toBe(200);
    const res = await sponsor(p.testKey, xdrOf(await r.payment(await r.funded())));
    expect(res.status).toBe(403);
    expect(res.body.error.details.reason).toBe("approval_unavailable");
    expect(res.body.error.message).toBe("the project's approval server did not answer (within 1000 ms)");
    expect(JSON.stringify(res.body)).not.toMatch(/ECONNREFUSED|connect|socket/i);
  });

  test("the cheap checks first: a request the policy refuses costs the server nothing", async () => {
    const p = await approvedProject({}, { allowedOperations: ["createAccount"] });
    answer = () => Response.json({ approved: true });
    const n = asked.length;
    const user = await r.funded();
    expect((await sponsor(p.testKey, xdrOf(await r.payment(user)))).status).toBe(403);
    expect(asked.length).toBe(n);
  });

  test("the same URL again keeps the secret; a private URL without WEBHOOK_ALLOW_PRIVATE is refused (other relay)", async () => {
    const p = await approvedProject({});
    const again = await r.admin("PATCH", `/projects/${p.id}`, {
      policy: { approval: { url: approvalUrl, timeoutMs: 300 } },
    });
    expect(again.body.policy.approval.secret).toBeUndefined();
    expect(again.body.policy.approval.timeoutMs).toBe(300);
    const strict = await startTestRelay();
    try {
      const res = await strict.admin("POST", "/projects", { name: "x", policy: { approval: { url: approvalUrl } } });
      expect(res.status).toBe(400);
      expect(res.body.error.details.field).toBe("policy.approval.url");
      expect(res.body.error.message).toContain("WEBHOOK_ALLOW_PRIVATE");
    } finally {
      await strict.stop();
    }
  });
});
