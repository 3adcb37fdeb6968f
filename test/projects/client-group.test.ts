/**
 * Anonymous callers are counted per IPv4 address or per IPv6 /64 (relay/client-group.ts): one
 * subscriber's /64 holds 2^64 addresses, so a limit per IPv6 address was none. The anonymous rate
 * bucket and daily allowance (one actor per client) and the count of wrong admin tokens go by it;
 * an IPv4-mapped IPv6 address counts as its IPv4 address.
 */
import { afterAll, expect, test } from "bun:test";
import { clientGroup } from "../../src/features/projects/client-group.ts";
import { lightApp } from "../support/app.ts";
import { parsed } from "../support/harness.ts";

const light = lightApp({ anonymousPolicy: { requestsPerSecond: 0.001, burst: 2 }, trustProxy: true });
afterAll(() => light.stop());

const estimate = (ip: string) =>
  light.app
    .handle(
      new Request("http://localhost/v1/estimate", {
        method: "POST",
        headers: { "content-type": "application/json", "x-forwarded-for": ip },
        body: "{}",
      }),
    )
    .then(parsed);

test("clientGroup: IPv4 as is, IPv4-mapped IPv6 as its IPv4, other IPv6 by its /64", () => {
  expect(clientGroup("203.0.113.7")).toBe("203.0.113.7");
  expect(clientGroup("::ffff:203.0.113.7")).toBe("203.0.113.7");
  expect(clientGroup("::ffff:cb00:7107")).toBe("203.0.113.7");
  expect(clientGroup("2001:db8:1:2::a")).toBe("2001:db8:1:2::/64");
  expect(clientGroup("2001:0db8:0001:0002:ffff:ffff:ffff:ffff")).toBe("2001:db8:1:2::/64");
  expect(clientGroup("2001:db8:1:3::a")).toBe("2001:db8:1:3::/64");
  expect(clientGroup("::1")).toBe("::/64");
  expect(clientGroup("unknown")).toBe("unknown");
});

test("one IPv6 /64 is one anonymous client: its addresses share the rate bucket and the actor (daily allowance)", async () => {
  const statuses = [];
  for (const ip of ["2001:db8:aa:1::1", "2001:db8:aa:1::2", "2001:db8:aa:1:ffff:ffff:ffff:fffe"])
    statuses.push((await estimate(ip)).status);
  expect(statuses.slice(0, 2)).not.toContain(429);
  expect(statuses[2]).toBe(429);
  // another /64 has its own bucket
  expect((await estimate("2001:db8:aa:2::1")).status).not.toBe(429);
  const a = await light.actors.anonymousFor("2001:db8:bb:1::1");
  expect(await light.actors.anonymousFor("2001:db8:bb:1:1234::9")).toBe(a);
  expect(await light.actors.anonymousFor("2001:db8:bb:2::1")).not.toBe(a);
});

test("an IPv4-mapped IPv6 address shares its IPv4 address's bucket", async () => {
  expect((await estimate("198.51.100.77")).status).not.toBe(429);
  expect((await estimate("::ffff:198.51.100.77")).status).not.toBe(429);
  expect((await estimate("::ffff:198.51.100.77")).status).toBe(429);
  expect((await estimate("198.51.100.77")).status).toBe(429);
});

test("wrong admin tokens are counted per IPv6 /64: another address of the /64 is locked out too", async () => {
  const wrong = (ip: string) =>
    light.app
      .handle(
        new Request("http://localhost/v1/admin/projects", {
          headers: { authorization: "Bearer wrong-token-0123456789", "x-forwarded-for": ip },
        }),
      )
      .then((r) => r.status);
  for (let i = 1; i <= 5; i++) expect(await wrong(`2001:db8:cc:1::${i}`)).toBe(401);
  expect(await wrong("2001:db8:cc:1:abcd::1")).toBe(429);
  expect(await wrong("2001:db8:cc:2::1")).toBe(401);
});
