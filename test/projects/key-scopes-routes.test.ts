/**
 * Every route of the app that needs a scope, from the router's own table, in every spelling a router
 * might still match (trailing slash, dot segments, doubled slashes, case, percent-escapes), with a
 * key of each scope: a key without the route's scope is refused 403 SCOPE_REQUIRED or the spelling
 * is 404, never served, never redirected, never a 5xx. In this process and over a socket (where the
 * path arrives as the client sent it).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { KEY_SCOPES, type KeyScope } from "../../src/kernel/scopes.ts";
import { scopeFor } from "../../src/server/auth.plugin.ts";
import { expectOk, type Http, type Res } from "../support/harness.ts";
import { startTestRelay, type TestRelay } from "../support/relay.ts";

let r: TestRelay;
const keys = {} as Record<KeyScope, string>;
beforeAll(async () => {
  r = await startTestRelay();
  const project = await r.project({ policy: { requestsPerSecond: 100_000, burst: 100_000 } });
  for (const scope of KEY_SCOPES) {
    const res = await r.admin("POST", `/projects/${project.id}/keys`, { environment: "test", scopes: [scope] });
    expectOk(res, 201);
    keys[scope] = res.body.key;
  }
});
afterAll(() => r?.stop());

/** A route pattern's path with each parameter filled (`:hash` a hash, `:network` testnet). */
const concrete = (pattern: string) =>
  pattern.replace(/:(\w+)/g, (_, name: string) => (name === "network" ? "testnet" : "0".repeat(64)));

/** The spellings of `path` (`/v1/sponsor`) that name the same route to a forgiving router. */
function spellings(path: string): string[] {
  const last = path.length - 1;
  const escaped = `${path.slice(0, last)}%${path.charCodeAt(last).toString(16)}`;
  return [
    path,
    `${path}/`,
    `${path}/.`,
    `${path}//`,
    `/${path}`,
    path.replace(/\/([^/]+)$/, "//$1"),
    path.replace(/\/([^/]+)$/, "/./$1"),
    `${path}/x/..`,
    path.toUpperCase(),
    path.replace(/\/([^/]+)$/, (_, s: string) => `/${s[0]!.toUpperCase()}${s.slice(1)}`),
    escaped,
    `${escaped}/`,
  ];
}

/** The scoped routes of the app's own table. */
const scoped = () =>
  r.app.routes
    .map((route) => ({ method: route.method, path: route.path, scope: scopeFor(route.method, route.path) }))
    .filter((route): route is { method: string; path: string; scope: KeyScope } => route.scope !== null)
    .filter((route) => !route.path.startsWith("/v1/admin")); // the admin token's, not a key's

test("the router's table has the scoped routes this test walks", () => {
  const names = scoped().map((s) => `${s.method} ${s.path} ${s.scope}`);
  for (const expected of [
    "POST /v1/sponsor sponsor",
    "POST /v1/simulate simulate",
    "POST /v1/estimate estimate",
    "POST /x402/settle sponsor",
    "POST /x402/verify sponsor",
    "GET /v1/transactions/:hash read",
    "GET /v1/events read",
  ])
    expect(names).toContain(expected);
});

async function walk(via: Http): Promise<string[]> {
  const wrong: string[] = [];
  let refused = 0;
  for (const route of scoped())
    for (const spelling of spellings(concrete(route.path)))
      for (const scope of KEY_SCOPES) {
        if (scope === route.scope) continue; // served (an event stream would stay open): the last test's
        const res: Res = await via.request(route.method, spelling, route.method === "GET" ? undefined : {}, {
          "x-api-key": keys[scope],
        });
        const code = res.body?.error?.code;
        const what = `${route.method} ${spelling} with a ${scope} key: ${res.status} ${code ?? ""}`;
        if (res.status >= 300 && res.status < 400) wrong.push(`${what} (a redirect)`);
        if (res.status >= 500) wrong.push(what);
        if (res.status === 403 && code === "SCOPE_REQUIRED") {
          if (res.body.error.details.scope !== route.scope) wrong.push(`${what} names ${res.body.error.details.scope}`);
          refused++;
        } else if (res.status !== 404) wrong.push(what);
      }
  expect(refused).toBeGreaterThan(scoped().length * 3); // the exact spelling at least, for each other scope
  return wrong;
}

test("in this process: every spelling of every scoped route refuses a key without its scope (403 or 404)", async () => {
  expect(await walk(r.http)).toEqual([]);
});

test("over a socket: the same", async () => {
  expect(await walk(r.tcp)).toEqual([]);
});

test("a key with the route's scope is served on the exact spelling", async () => {
  const tx = r.http.get(`/v1/transactions/${"0".repeat(64)}`, { "x-api-key": keys.read });
  expect((await tx).status).toBe(404); // looked up: no such transaction
  expect((await tx).body.error.message).toContain("transaction");
  for (const scope of ["sponsor", "simulate", "estimate"] as const) {
    const res = await r.post(`/v1/${scope}`, {}, { "x-api-key": keys[scope] });
    expect(res.status).toBe(400); // past the key: the body is checked
  }
});
