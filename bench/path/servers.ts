/**
 * Servers in processes of their own, each answering POST /v1/sponsor 400, from the least to the
 * relay: a bare Bun.serve, an Elysia app with one route, and the relay with a project's key and a
 * malformed envelope (its whole HTTP path: auth, rate limit, input screening, the error envelope,
 * the access log, metrics; no sponsoring).
 */
import { freePort, spawnChild, tempDir, type Child } from "../e2e/procs.ts";

export interface Server {
  name: string;
  child: Child;
  url: string;
  /** Headers of each request (the relay's API key). */
  headers: Record<string, string>;
}

const ANSWER = `{ error: { code: "VALIDATION_ERROR", message: "not base64" } }`;
const BARE = `Bun.serve({ port: Number(process.env.PORT), fetch: async (r) => { await r.text();
  return Response.json(${ANSWER}, { status: 400 }); } }); console.log("listening");`;
const ELYSIA = `import { Elysia } from "elysia";
  new Elysia().post("/v1/sponsor", ({ set }) => { set.status = 400; return ${ANSWER}; })
    .listen(Number(process.env.PORT)); console.log("listening");`;

/** Starts `cmd` and waits for a stdout line that matches `ready` (or fails if it exits first). */
async function start(name: string, cmd: string[], env: Record<string, string>, ready: RegExp): Promise<Child> {
  let up: () => void = () => {};
  const started = new Promise<void>((resolve) => {
    up = resolve;
  });
  const child = spawnChild(cmd, env, (line) => ready.test(line) && up());
  const failed = child.exited.then((code) => {
    throw new Error(`${name} exited (${code}): ${child.stderrTail.join("\n")}`);
  });
  await Promise.race([started, failed]);
  return child;
}

export async function bareServer(): Promise<Server> {
  const port = freePort();
  const child = await start("bare", ["bun", "-e", BARE], { PORT: String(port) }, /^listening/);
  return { name: "a bare Bun.serve", child, url: `http://127.0.0.1:${port}`, headers: {} };
}

export async function elysiaServer(): Promise<Server> {
  const port = freePort();
  const child = await start("elysia", ["bun", "-e", ELYSIA], { PORT: String(port) }, /^listening/);
  return { name: "an Elysia app, one route", child, url: `http://127.0.0.1:${port}`, headers: {} };
}

export async function relayServer(): Promise<Server> {
  const port = freePort();
  const adminToken = "bench-path-admin-token-0123456789";
  const env = { PORT: String(port), DATA_DIR: tempDir("relay-bench-path-"), ADMIN_TOKEN: adminToken };
  const child = await start("relay", ["bun", "src/index.ts"], { ...env, LOG_LEVEL: "info" }, /"relay listening"/);
  const url = `http://127.0.0.1:${port}`;
  const admin = async (path: string, body: unknown) => {
    const r = await fetch(`${url}/v1/admin${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!r.ok) throw new Error(`admin ${path}: ${r.status} ${await r.text()}`);
    return (await r.json()) as Record<string, string>;
  };
  const policy = { requestsPerSecond: 1_000_000, burst: 1_000_000 };
  const { id } = await admin("/projects", { name: "bench", policy });
  const { key } = await admin(`/projects/${id}/keys`, { environment: "live", label: "bench" });
  return { name: "the relay, a keyed request refused at input", child, url, headers: { "x-api-key": key! } };
}
