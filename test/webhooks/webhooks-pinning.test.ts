/**
 * Webhook deliveries are pinned to the address the URL guard checked (no DNS rebinding): the host is
 * resolved once per attempt, by a resolver scripted here, and fetch connects to that address, with
 * the Host header, and for https the SNI and certificate check, of the URL's host name. The worker
 * runs against a stand-in for its repository (one delivery); the receivers are real servers on
 * random ports.
 */
import { afterEach, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { Webhook } from "standardwebhooks";
import { createLogger } from "../../src/kernel/log.ts";
import { WebhookWorker } from "../../src/features/webhooks/deliveries.ts";
import {
  type Lookup,
  pinnedRequest,
  resolveWebhookTarget,
  UrlRefused,
  type WebhookTarget,
} from "../../src/features/webhooks/url-guard.ts";
import type { WebhookSecrets } from "../../src/features/webhooks/webhooks.service.ts";
import type { ClaimedDelivery, WebhooksRepo } from "../../src/store/webhooks.repo.ts";

/** An address ipaddr.js calls public (example.com's): the rebinding test's first answer. */
const PUBLIC = "93.184.215.14";
const SECRET = `whsec_${Buffer.from("pinned-webhook-test-secret-32by!").toString("base64")}`;

type Attempt = { delivered: boolean; responseStatus: number | null; error: string | null };

/** Runs one delivery of `url` through a WebhookWorker and gives the attempt it recorded. */
async function deliver(
  url: string,
  opts: { lookup: Lookup; allowPrivate: boolean; timeoutMs?: number; ca?: string[] },
): Promise<Attempt & { eventId: bigint }> {
  const eventId = BigInt(Date.now());
  const d: ClaimedDelivery = {
    id: 1n,
    webhookId: "wh",
    eventId,
    type: "transaction.status",
    attempts: 0,
    createdAtMs: Date.now(),
    data: JSON.stringify({ hash: "ab".repeat(32), status: "success" }),
    eventAtMs: Date.now(),
    url,
    secret: SECRET,
  };
  let handed = false;
  const { promise, resolve } = Promise.withResolvers<Attempt>();
  const repo = {
    fanOut: async () => 0,
    dueWebhooks: async () => (handed ? [] : [d.webhookId]),
    claim: async () => {
      if (handed) return [];
      handed = true;
      return [d];
    },
    attempted: async (_id: bigint, a: Attempt) => resolve(a),
    release: async () => {},
  } as unknown as WebhooksRepo;
  const worker = new WebhookWorker({
    repo,
    secrets: { open: (_id: string, sealed: string) => sealed } as WebhookSecrets,
    log: createLogger("silent"),
    config: { pollMs: 60_000, retryBaseMs: 1000, timeoutMs: opts.timeoutMs ?? 5000, allowPrivate: opts.allowPrivate },
    lookup: opts.lookup,
    ca: opts.ca,
  });
  try {
    await worker.pass();
    return { ...(await promise), eventId };
  } finally {
    await worker.stop();
  }
}

interface Seen {
  host: string | null;
  path: string;
  headers: Record<string, string>;
  body: string;
}

const servers: Server<unknown>[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.stop(true);
});

/** A receiver on `hostname`, random port, keeping what it is sent; `answer` makes its responses. */
function receiver(
  hostname: string,
  answer: () => Response = () => new Response("ok"),
  tls?: { serverName: string; cert: string; key: string }[],
) {
  const seen: Seen[] = [];
  const server = Bun.serve({
    port: 0,
    hostname,
    tls,
    async fetch(req) {
      const u = new URL(req.url);
      seen.push({
        host: req.headers.get("host"),
        path: u.pathname + u.search,
        headers: Object.fromEntries(req.headers),
        body: await req.text(),
      });
      return answer();
    },
  });
  servers.push(server);
  return { port: server.port, seen };
}

/** A resolver answering from a table, counting its calls. */
function scripted(answer: (host: string, call: number) => string[]) {
  const calls: string[] = [];
  const lookup: Lookup = async (host) => {
    calls.push(host);
    return answer(host, calls.length);
  };
  return { lookup, calls };
}

/** Expects a delivery that verifies with the standardwebhooks library, as the receiver would check it. */
function expectSigned(got: Seen, eventId: bigint) {
  expect(got.headers["webhook-id"]).toBe(`evt_${eventId}`);
  expect(got.headers["content-type"]).toBe("application/json");
  const payload = new Webhook(SECRET).verify(got.body, got.headers) as { type: string; data: unknown };
  expect(payload).toMatchObject({ type: "transaction.status", data: { status: "success" } });
}

describe("pinnedRequest", () => {
  const target = (url: string, address: string): WebhookTarget => ({ url: new URL(url), address });

  test("http: the address replaces the host name; the Host header, port, path, query and credentials are kept", () => {
    expect(pinnedRequest(target("http://u:p@hook.test:8080/a/b?c=d&e=f%20g", "203.0.114.9"))).toEqual({
      url: "http://u:p@203.0.114.9:8080/a/b?c=d&e=f%20g",
      headers: { host: "hook.test:8080" },
    });
  });

  test("IPv6 addresses go in brackets; https keeps the host name for SNI and the certificate", () => {
    expect(pinnedRequest(target("https://hook.test/h", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"))).toEqual({
      url: "https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/h",
      headers: { host: "hook.test" },
      tls: { serverName: "hook.test" },
    });
  });

  test("an IP literal is sent as it is (nothing to resolve); an address a URL cannot take is refused", () => {
    expect(pinnedRequest(target("https://[2606:2800::1]:8443/h", "2606:2800::1"))).toEqual({
      url: "https://[2606:2800::1]:8443/h",
      headers: {},
    });
    expect(pinnedRequest(target("http://93.184.215.14/h", "93.184.215.14")).url).toBe("http://93.184.215.14/h");
    expect(() => pinnedRequest(target("http://hook.test/h", "fe80::1%eth0"))).toThrow("cannot connect");
  });

  test("resolveWebhookTarget: one look-up; every address checked; the first one pinned", async () => {
    const one = scripted(() => [PUBLIC, "2606:2800::1"]);
    expect((await resolveWebhookTarget("https://hook.test/h", false, one.lookup)).address).toBe(PUBLIC);
    expect(one.calls).toEqual(["hook.test"]);
    const mixed = scripted(() => [PUBLIC, "10.0.0.7"]);
    const refused = await resolveWebhookTarget("https://hook.test/h", false, mixed.lookup).catch((e) => e);
    expect(refused).toBeInstanceOf(UrlRefused);
    expect(refused).toMatchObject({ reason: "private_address", details: { address: "10.0.0.7", range: "private" } });
  });
});

describe("webhook deliveries are pinned to the checked address", () => {
  test("DNS rebinding: a public answer to the check, 127.0.0.1 after: nothing reaches the local server", async () => {
    const local = receiver("127.0.0.1");
    // "localhost": were fetch to resolve the name itself, the system's resolver would send it to the local server
    const dns = scripted((_host, call) => (call === 1 ? [PUBLIC] : ["127.0.0.1"]));
    const url = `http://localhost:${local.port}/hook`;
    const first = await deliver(url, { lookup: dns.lookup, allowPrivate: false, timeoutMs: 300 });
    expect(dns.calls).toEqual(["localhost"]); // resolved once: the request went to PUBLIC, not to the name
    expect(first.delivered).toBe(false);
    const second = await deliver(url, { lookup: dns.lookup, allowPrivate: false, timeoutMs: 300 });
    expect(second).toMatchObject({ delivered: false, responseStatus: null });
    expect(second.error).toStartWith("private_address: url: localhost is or resolves to a non-public address");
    expect(local.seen).toHaveLength(0);
  });

  test("WEBHOOK_ALLOW_PRIVATE, http: delivered to the resolved address with the Host, path, query and signature", async () => {
    const rx = receiver("127.0.0.1");
    const dns = scripted(() => ["127.0.0.1"]);
    const got = await deliver(`http://hook.test:${rx.port}/in/hook?tenant=42&q=a%20b`, {
      lookup: dns.lookup,
      allowPrivate: true,
    });
    expect(got).toMatchObject({ delivered: true, responseStatus: 200, error: null });
    expect(dns.calls).toEqual(["hook.test"]);
    expect(rx.seen).toHaveLength(1);
    expect(rx.seen[0]).toMatchObject({ host: `hook.test:${rx.port}`, path: "/in/hook?tenant=42&q=a%20b" });
    expect(rx.seen[0]!.headers["user-agent"]).toBe("stellar-sponsor-relay-webhooks");
    expectSigned(rx.seen[0]!, got.eventId);
  });

  test("an address that refuses the connection: the host's next checked address gets the delivery, once", async () => {
    const rx = receiver("127.0.0.1"); // nothing listens on ::1 at its port: a dual-stack name whose IPv6 side is down
    const port = rx.port;
    const got = await deliver(`http://dual.test:${port}/hook`, {
      lookup: scripted(() => ["::1", "127.0.0.1"]).lookup,
      allowPrivate: true,
    });
    expect(got).toMatchObject({ delivered: true, responseStatus: 200 });
    expect(rx.seen).toHaveLength(1);
    expect(rx.seen[0]!.host).toBe(`dual.test:${port}`);
    expectSigned(rx.seen[0]!, got.eventId);
  });

  test("an IPv6 address is connected to in brackets", async () => {
    const rx = receiver("::1");
    const got = await deliver(`http://v6.test:${rx.port}/hook`, {
      lookup: scripted(() => ["::1"]).lookup,
      allowPrivate: true,
    });
    expect(got).toMatchObject({ delivered: true, responseStatus: 200 });
    expect(rx.seen[0]!.host).toBe(`v6.test:${rx.port}`);
    expectSigned(rx.seen[0]!, got.eventId);
  });

  test("a redirect is not followed: not delivered, and its target gets nothing", async () => {
    const elsewhere = receiver("127.0.0.1");
    const rx = receiver(
      "127.0.0.1",
      () => new Response(null, { status: 307, headers: { location: `http://127.0.0.1:${elsewhere.port}/x` } }),
    );
    const got = await deliver(`http://hook.test:${rx.port}/hook`, {
      lookup: scripted(() => ["127.0.0.1"]).lookup,
      allowPrivate: true,
    });
    expect(got).toMatchObject({ delivered: false, responseStatus: 307, error: "HTTP 307" });
    expect(rx.seen).toHaveLength(1);
    expect(elsewhere.seen).toHaveLength(0);
  });

  test("https: connected to the address; SNI and the certificate check use the host name", async () => {
    // the server's default certificate is wrong.test's: hook.test's is served only when SNI asks for it,
    // and neither names 127.0.0.1, so a delivery verifies only if the name was sent and checked
    const rx = receiver("127.0.0.1", undefined, [
      { serverName: "wrong.test", cert: WRONG_CERT, key: WRONG_KEY },
      { serverName: "hook.test", cert: HOOK_CERT, key: HOOK_KEY },
    ]);
    const lookup = scripted(() => ["127.0.0.1"]).lookup;
    const ca = [HOOK_CERT, WRONG_CERT];
    const got = await deliver(`https://hook.test:${rx.port}/secure?x=1`, { lookup, allowPrivate: true, ca });
    expect(got).toMatchObject({ delivered: true, responseStatus: 200, error: null });
    expect(rx.seen[0]).toMatchObject({ host: `hook.test:${rx.port}`, path: "/secure?x=1" });
    expectSigned(rx.seen[0]!, got.eventId);

    // another name on the same address gets the wrong.test certificate: refused before any request
    const other = await deliver(`https://other.test:${rx.port}/secure`, { lookup, allowPrivate: true, ca });
    expect(other).toMatchObject({ delivered: false, responseStatus: null });
    expect(other.error).toContain("ALTNAME");
    expect(rx.seen).toHaveLength(1);
  });
});

// Throwaway self-signed P-256 certificates (valid 2020 to 2120) and their keys, for the https test only.
const HOOK_CERT = `-----BEGIN CERTIFICATE-----
MIIBYTCCAQegAwIBAgIBATAKBggqhkjOPQQDAjAUMRIwEAYDVQQDDAlob29rLnRl
c3QwIBcNMjAwMTAxMDAwMDAwWhgPMjEyMDAxMDEwMDAwMDBaMBQxEjAQBgNVBAMM
CWhvb2sudGVzdDBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABEmD4PINLKCCFcGV
RGg/2V/Am0Zt3iiEyg96C8S0AUuBj1W3EG6Hjexrbgnm+yaM8TVJneW3/Zu66alj
2PP4huWjSDBGMBQGA1UdEQQNMAuCCWhvb2sudGVzdDAPBgNVHRMBAf8EBTADAQH/
MB0GA1UdDgQWBBTwQMIV1TLV8iDgUx4IhiAE7iyX9DAKBggqhkjOPQQDAgNIADBF
AiAj8i+5H8N5WdS1C2n73wfj8Ez0u9gtk5Z3LD7/9pcY+AIhANffTDStyvu2ZNSZ
vqVfWxMf9YClhHWATPCzg22QvQXM
-----END CERTIFICATE-----`;
const HOOK_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgBMAaA+Xi1ENB2/tS
IMyZEevVekGdMFbAwPTOvna7mjOhRANCAARJg+DyDSygghXBlURoP9lfwJtGbd4o
hMoPegvEtAFLgY9VtxBuh43sa24J5vsmjPE1SZ3lt/2buumpY9jz+Ibl
-----END PRIVATE KEY-----`;
const WRONG_CERT = `-----BEGIN CERTIFICATE-----
MIIBZDCCAQqgAwIBAgIBATAKBggqhkjOPQQDAjAVMRMwEQYDVQQDDAp3cm9uZy50
ZXN0MCAXDTIwMDEwMTAwMDAwMFoYDzIxMjAwMTAxMDAwMDAwWjAVMRMwEQYDVQQD
DAp3cm9uZy50ZXN0MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE3FSOChLl6/yb
lSxcMEqxgGZEkfFhZlj0CJldWn0h/4pSFXIhDlOVNYj+tkk3sKPrhqAx96HLXKZn
VmPN5zTBVaNJMEcwFQYDVR0RBA4wDIIKd3JvbmcudGVzdDAPBgNVHRMBAf8EBTAD
AQH/MB0GA1UdDgQWBBQN1abUlAVxrGtVCaw2QIHgCaFfGjAKBggqhkjOPQQDAgNI
ADBFAiEAh65uxBb4hWsoqR3yiCRzf6zNAhVkbNmMwFdRCHB8pqkCIDMu54llGbjA
2XkFbENqRr2Sp0aibZ5pd72A3y2m2gYR
-----END CERTIFICATE-----`;
const WRONG_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgXIoccFCKsgLGg+q/
G/jVbOmEw1AcZBMiqLtc83yDNxOhRANCAATcVI4KEuXr/JuVLFwwSrGAZkSR8WFm
WPQImV1afSH/ilIVciEOU5U1iP62STewo+uGoDH3octcpmdWY83nNMFV
-----END PRIVATE KEY-----`;
