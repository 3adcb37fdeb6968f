/**
 * Graceful shutdown and readiness, with the relay in a process of its own: SIGTERM with sponsor
 * requests in flight answers every one of them (the embedded networks and watchers stay up until
 * they are done), refuses new ones, exits 0 within SHUTDOWN_GRACE_MS, without a flood of warnings.
 */
import { afterAll, expect, test } from "bun:test";
import { Asset, Keypair, Operation, rpc, TransactionBuilder } from "@stellar/stellar-sdk";
import { seedPglite } from "../support/pglite.ts";
import { join } from "node:path";
import { dataDirLocked } from "../../src/store/instance-lock.ts";
import { spawn, spawnRelay, tempDir, type Proc } from "../support/processes.ts";

const data = tempDir("relay-shutdown-");
let relay: (Proc & { url: string }) | undefined;
afterAll(async () => {
  if (relay && relay.proc.exitCode === null) await relay.kill();
  data.done();
});

test("SIGTERM with sponsor requests in flight: every one answered 200, new ones 503, exit 0 within the grace", {
  timeout: 60_000,
}, async () => {
  await seedPglite(data.path); // on PGlite: the database a first start creates (initdb once per test process)
  relay = await spawnRelay({
    DATA_DIR: data.path,
    LEDGER_CLOSE_MS: "500",
    SHUTDOWN_GRACE_MS: "10000",
    ANONYMOUS_POLICY: JSON.stringify({ requestsPerSecond: 1000, burst: 1000 }),
  });
  const ready = await fetch(`${relay.url}/health/ready`);
  expect(ready.status).toBe(200);
  expect(await ready.json()).toEqual({ status: "ready", starting: [] });
  expect((await fetch(`${relay.url}/health/live`)).status).toBe(200);

  const server = new rpc.Server(`${relay.url}/localnet/testnet/rpc`, { allowHttp: true });
  const { passphrase } = await server.getNetwork();
  const users = Array.from({ length: 8 }, () => Keypair.random());
  await Promise.all(
    users.map(async (u) =>
      expect((await fetch(`${relay!.url}/localnet/testnet/friendbot?addr=${u.publicKey()}`)).status).toBe(200),
    ),
  );
  const bodies = await Promise.all(
    users.map(async (u) => {
      const tx = new TransactionBuilder(await server.getAccount(u.publicKey()), {
        fee: "100",
        networkPassphrase: passphrase,
      })
        .addOperation(Operation.payment({ destination: users[7]!.publicKey(), asset: Asset.native(), amount: "1" }))
        .setTimeout(60)
        .build();
      tx.sign(u);
      return JSON.stringify({ transaction: tx.toEnvelope().toXDR("base64"), network: "testnet" });
    }),
  );
  const post = (body: string) =>
    fetch(`${relay!.url}/v1/sponsor`, { method: "POST", headers: { "content-type": "application/json" }, body });
  // sent just after a ledger closed: they wait for the next one, half a second later, while SIGTERM arrives
  const latest = (await server.getLatestLedger()).sequence;
  while ((await server.getLatestLedger()).sequence === latest) await Bun.sleep(5);
  const inFlight = bodies.slice(0, 6).map(async (b) => (await post(b)).status);
  await Bun.sleep(100); // sent
  const warningsBefore = relay.warnings.length;
  const started = Date.now();
  relay.proc.kill("SIGTERM");
  await Bun.sleep(50);
  const late = await post(bodies[6]!)
    .then(async (r) => ({ status: r.status, body: (await r.json()) as any }))
    .catch(() => null);
  expect(await Promise.all(inFlight)).toEqual([200, 200, 200, 200, 200, 200]);
  // a request that reached it while shutting down is refused (or the socket was already closed)
  if (late)
    expect(late).toMatchObject({
      status: 503,
      body: { error: { code: "NETWORK_UNAVAILABLE", details: { reason: "shutting_down" } } },
    });
  expect(await relay.proc.exited).toBe(0);
  const took = Date.now() - started;
  console.log(
    `SIGTERM: 6 requests in flight answered 200, exit 0 after ${took} ms, ${relay.warnings.length - warningsBefore} warnings`,
  );
  expect(took).toBeLessThan(10_000);
  expect(relay.warnings.length - warningsBefore).toBeLessThan(3);
});

test("readiness is 503 naming the pool still starting (the channels route says why), then 200", {
  timeout: 30_000,
}, async () => {
  const { startLocalnet } = await import("../support/localnet.ts");
  const { startTestRelay } = await import("../support/relay.ts");
  const net = await startLocalnet();
  const funder = Keypair.random(); // not funded yet: the mainnet pool cannot start
  const r = await startTestRelay({
    MAINNET_RPC_URL: `${net.url}/rpc`,
    MAINNET_PASSPHRASE: net.passphrase,
    MAINNET_FUNDER_SECRET: funder.secret(),
  });
  try {
    const starting = await fetch(`${r.url}/health/ready`);
    expect(starting.status).toBe(503);
    expect(await starting.json()).toEqual({ status: "starting", starting: ["mainnet channel pool"] });
    // the operator is told why: the funder does not exist yet
    let channels = await r.admin("GET", "/channels?network=mainnet");
    for (let i = 0; i < 50 && !channels.body.lastError; i++) {
      await Bun.sleep(50); // its first attempt is still under way
      channels = await r.admin("GET", "/channels?network=mainnet");
    }
    expect(channels.status).toBe(200);
    expect(channels.body.lastError).toContain("does not exist on the network");
    expect((await fetch(`${net.url}/friendbot?addr=${funder.publicKey()}`)).status).toBe(200);
    let ready = 503;
    for (let i = 0; i < 100 && ready !== 200; i++) {
      await Bun.sleep(100);
      ready = (await fetch(`${r.url}/health/ready`)).status;
    }
    expect(ready).toBe(200);
  } finally {
    await r.stop();
    await net.stop();
  }
});

test("SIGTERM while starting: the start is called off, what it opened is closed, exit 0; the next start works", {
  timeout: 60_000,
}, async () => {
  const dir = tempDir("relay-shutdown-starting-");
  try {
    await seedPglite(dir.path);
    // /health answers before the relay is started: the channel pools wait for a first ledger, 10 s away
    const starting = await spawn(
      "src/index.ts",
      { DATA_DIR: dir.path, PORT: "0", LOG_LEVEL: "debug", LEDGER_CLOSE_MS: "10000" }, // debug: ledger closes
      "LOCAL NETWORK: testnet is an embedded localnet, not the public testnet",
    );
    const rpc = String(starting.ready.rpc);
    expect((await fetch(new URL("/health/live", rpc))).status).toBe(200);
    // not ready to sponsor yet: /health says so (503 starting, naming what), as /health/ready does
    const health = await fetch(new URL("/health", rpc));
    expect(health.status).toBe(503);
    expect(await health.json()).toMatchObject({
      status: "starting",
      starting: ["testnet channel pool", "mainnet channel pool"],
    });
    expect(dataDirLocked(dir.path)).toBe(true);
    const signalled = Date.now();
    starting.proc.kill("SIGTERM");
    expect(await starting.proc.exited).toBe(0);
    const took = Date.now() - signalled;
    await starting.drained;
    const said = starting.lines.map((l) => JSON.parse(l).msg);
    expect(said).toContain("shutting down");
    expect(said).not.toContain("relay listening");
    expect(said).not.toContain("ledger closed"); // it did not wait for the pool's first ledger
    expect(took).toBeLessThan(8000);
    expect(dataDirLocked(dir.path)).toBe(false); // the data directory was unlocked
    // what the called-off start left (database, localnet data) is a relay's data directory
    const again = await spawnRelay({ DATA_DIR: dir.path, LEDGER_CLOSE_MS: "200" });
    try {
      expect((await fetch(`${again.url}/health/ready`)).status).toBe(200);
    } finally {
      await again.kill("SIGTERM");
    }
    console.log(`SIGTERM while starting: exit 0 after ${took} ms`);
  } finally {
    dir.done();
  }
});

/** A TCP server that accepts connections and never answers: a database that hangs. */
function blackhole() {
  const sockets = new Set<import("bun").Socket>();
  let opened = 0;
  const server = Bun.listen({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open: (s) => {
        sockets.add(s);
        opened++;
      },
      data: () => {},
      close: (s) => void sockets.delete(s),
    },
  });
  return {
    url: `postgres://postgres@127.0.0.1:${server.port}/relay`,
    /** Resolves once a connection after the `n`th has come in. */
    async after(n: number) {
      while (opened <= n) await Bun.sleep(10);
      return opened;
    },
    /** Refuses new connections and closes the open ones: the database is gone. */
    drop: () => {
      server.stop(true);
      for (const s of sockets) s.end();
    },
    stop: () => server.stop(true),
  };
}

/** `bun run start` against a database that hangs, its stdout and stderr read as they come. */
function startAgainst(databaseUrl: string, dir: string) {
  const proc = Bun.spawn(["bun", "src/index.ts"], {
    cwd: join(import.meta.dir, "..", ".."),
    env: { ...process.env, DATA_DIR: dir, PORT: "0", LOG_LEVEL: "info", DATABASE_URL: databaseUrl },
    stdout: "pipe",
    stderr: "pipe",
  });
  const out = { stdout: "", stderr: "" };
  const drained = Promise.all([
    new Response(proc.stdout).text().then((t) => (out.stdout = t)),
    new Response(proc.stderr).text().then((t) => (out.stderr = t)),
  ]);
  return { proc, out, drained };
}

test("while a start step hangs, a second SIGTERM exits at once; a start that fails after the first says why", {
  timeout: 30_000,
}, async () => {
  const dir = tempDir("relay-shutdown-hang-");
  const db = blackhole();
  try {
    // the relay is connecting to a database that never answers (postgres-js waits 30 s for it)
    let relay = startAgainst(db.url, dir.path);
    const seen = await db.after(0);
    relay.proc.kill("SIGTERM");
    await Bun.sleep(300);
    expect(relay.proc.exitCode).toBeNull(); // the first one waits for the step under way
    relay.proc.kill("SIGTERM");
    expect(await relay.proc.exited).toBe(143);
    await relay.drained;
    expect(relay.out.stdout).toContain("a second signal while starting: exiting now");

    // the same, but the database then fails: the start's own error is reported, not hidden by the signal
    relay = startAgainst(db.url, dir.path);
    await db.after(seen);
    relay.proc.kill("SIGTERM");
    await Bun.sleep(300);
    db.drop();
    expect(await relay.proc.exited).toBe(1);
    await relay.drained;
    expect(relay.out.stderr).toContain("cannot start: ");
  } finally {
    db.stop();
    dir.done();
  }
});
