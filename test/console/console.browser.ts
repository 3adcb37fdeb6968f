/**
 * The operator console in a real browser (Debian's chromium, driven by puppeteer-core), against a
 * relay this test starts: sign in, create a project and keys (one revoked), top up, a policy error
 * beside its field, resize the pool and watch it converge, watch a sponsored transaction appear
 * live and open it, sign out, sign out everywhere; the cookie's attributes, nothing kept in storage, no request to any
 * other host (offline), a cross-site form post refused, and the old cookie refused after sign-out.
 * Screenshots of each page go to docs/console/. Run with `bun run test:browser` (not in `bun run test`).
 */
import { Keypair } from "@stellar/stellar-sdk";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { startTestRelay, TEST_ADMIN_TOKEN, type TestRelay } from "../support/relay.ts";
import { webhookDeliveries } from "../../src/store/schema.ts";
import { axeViolations } from "../support/axe.ts";

// the callbacks of page.evaluate run in the page: its globals (the project's types have no DOM)
declare const document: any;
declare const window: any;
declare const location: any;

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
/** Where the screenshots go: docs/console with SCREENSHOTS=1 (to refresh the docs), else a temporary folder. */
const SHOTS = process.env.SCREENSHOTS
  ? join(import.meta.dir, "..", "..", "docs", "console")
  : mkdtempSync(join(tmpdir(), "console-shots-"));
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844, isMobile: true, hasTouch: true, deviceScaleFactor: 1 };
const STEP = { timeout: 60_000 };

let r: TestRelay;
let browser: Browser;
let page: Page;
/** Requests the page made to a host other than the relay's (refused: the console must work offline). */
const elsewhere: string[] = [];
/** The console's icon asked for and not found (a browser asks for /favicon.ico on its own). */
const missing: string[] = [];
/** A host the test allows for one step (the cross-site page). */
let alsoAllowed: string | null = null;
let evil: ReturnType<typeof Bun.serve> | null = null;

const button = (name: string) => `aria/${name}[role="button"]`;
const link = (name: string) => `aria/${name}[role="link"]`;
const input = (label: string) => `aria/${label}`;
// innerText, not textContent: the text shown (the hidden sections left out)
// biome-ignore lint/performance/useDomNodeTextContent: the rendered text is meant
const bodyText = () => page.evaluate(() => document.body.innerText);
const untilText = (text: string, timeout = 20_000, on: Page = page) =>
  // biome-ignore lint/performance/useDomNodeTextContent: the rendered text is meant
  on.waitForFunction((t) => document.body.innerText.includes(t), { timeout, polling: 100 }, text);
/** axe-core's WCAG 2.2 AA violations of each page a screenshot was taken of, by screenshot. */
const violations: Record<string, string[]> = {};
/** A screenshot of the page as it is, and axe-core's look at it. */
async function shot(name: string) {
  await page.screenshot({ path: join(SHOTS, `${name}.png`) as `${string}.png` });
  violations[name] = await axeViolations(page);
}
/**
 * Clicks a control once it is shown and its page has drawn every section (a section drawn later
 * moves the ones below it: a click aimed before that lands elsewhere on a busy machine).
 */
async function press(selector: string) {
  await page.waitForSelector("#view:not([aria-busy])");
  await page.locator(selector).setVisibility("visible").click();
}
async function fill(label: string, value: string) {
  const el = await page.waitForSelector(input(label));
  await el!.click({ count: 3 });
  await page.keyboard.press("Backspace");
  await el!.type(value);
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`no browser at ${CHROMIUM}: apt-get install chromium (see docs/console.md)`);
  mkdirSync(SHOTS, { recursive: true });
  r = await startTestRelay();
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--lang=en-US"],
  });
  page = await browser.newPage();
  await page.setViewport(DESKTOP);
  // confirm() accepted; prompt() (a key rotation's overlap) answered with its default value
  page.on("dialog", (d) => void (d.type() === "prompt" ? d.accept(d.defaultValue()) : d.accept()));
  const relayHost = new URL(r.url).host;
  await page.setRequestInterception(true);
  page.on("response", (res) => {
    if (res.status() === 404 && new URL(res.url()).pathname.includes("favicon")) missing.push(res.url());
  });
  page.on("request", (req) => {
    const host = new URL(req.url()).host;
    if (host === relayHost || host === alsoAllowed) return void req.continue();
    elsewhere.push(req.url());
    void req.abort("internetdisconnected");
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  evil?.stop(true);
  await r?.stop();
  if (!process.env.SCREENSHOTS) rmSync(SHOTS, { recursive: true, force: true });
}, 60_000);

describe("the operator console in Chromium", () => {
  let projectId = "";
  let apiKey = "";
  let cookie = "";
  let csrfSeen = "";

  test(
    "a wrong token is refused; signing in sets an HttpOnly, SameSite=Strict session cookie; the token is kept nowhere",
    async () => {
      await page.goto(`${r.url}/console`, { waitUntil: "load" });
      await page.waitForSelector(input("Admin token"));
      await shot("sign-in");
      await fill("Admin token", "not-the-admin-token-000");
      await press(button("Sign in"));
      await untilText("That is not the admin token.");
      await fill("Admin token", TEST_ADMIN_TOKEN);
      await press(button("Sign in"));
      await page.waitForSelector(link("Overview"), { visible: true });
      await untilText("Latest ledger");
      const cookies = await page.cookies(`${r.url}/v1/admin/projects`);
      const session = cookies.find((c) => c.name === "relay_console");
      expect(session).toBeDefined();
      expect(session!.httpOnly).toBe(true);
      expect(session!.sameSite).toBe("Strict");
      expect(session!.secure).toBe(false); // plain HTTP here; Secure behind TLS (test/console/console-session.test.ts)
      expect(session!.path).toBe("/v1/admin");
      const left = session!.expires - Date.now() / 1000;
      expect(left).toBeGreaterThan(8 * 3600 - 120);
      expect(left).toBeLessThanOrEqual(8 * 3600 + 5);
      expect((await page.cookies(`${r.url}/console`)).map((c) => c.name)).not.toContain("relay_console");
      cookie = `${session!.name}=${session!.value}`;
      const kept = await page.evaluate(
        (token) => ({
          local: localStorage.length,
          session: sessionStorage.length,
          inPage: document.documentElement.outerHTML.includes(token),
          inCookie: document.cookie.includes("relay_console"),
        }),
        TEST_ADMIN_TOKEN,
      );
      expect(kept).toEqual({ local: 0, session: 0, inPage: false, inCookie: false });
    },
    STEP,
  );

  test(
    "overview: each network's health and ledger, the pools, submissions and credits spent today",
    async () => {
      const text = await bodyText();
      for (const s of ["testnet", "mainnet", "Latest ledger", "Pool", "credits spent today"]) expect(text).toContain(s);
      expect(text).toMatch(/4 of 4 channels, \d free/);
    },
    STEP,
  );

  test(
    "projects: create a project, create two keys (the secret shown once, with Copy), revoke one",
    async () => {
      await press(link("Projects"));
      await press(button("New project"));
      await fill("Project name", "Console demo");
      await press(button("Create project"));
      await page.waitForFunction(() => /#\/projects\/.+/.test(location.hash));
      projectId = decodeURIComponent((await page.evaluate(() => location.hash)).split("/")[2]!);
      await page.waitForSelector(button("Create key"));
      await press(button("Create key"));
      const first = await page.waitForSelector("#new-key");
      apiKey = (await first!.evaluate((e) => e.textContent ?? "")).trim();
      expect(apiKey).toMatch(/^sr_test_/);
      expect(await page.$(button("Copy"))).not.toBeNull();
      await fill("Key label", "to revoke");
      await press(button("Create key"));
      await page.waitForFunction((k) => document.querySelector("#new-key")?.textContent !== k, {}, apiKey);
      await page.waitForFunction(() => document.querySelectorAll("button.danger").length === 2);
      // the second key (the newest first? either way: revoke the one labelled "to revoke")
      const revoked = await page.evaluate(() => {
        const row = [...document.querySelectorAll("tr")].find((tr) => tr.textContent?.includes("to revoke"));
        (row?.querySelector("button.danger") as { click(): void } | null)?.click();
        return Boolean(row);
      });
      expect(revoked).toBe(true);
      await page.waitForFunction(() => document.querySelectorAll("button.danger").length === 1);
      const keys = (await r.admin("GET", `/projects/${projectId}/keys`)).body.keys;
      expect(keys.filter((k: { revokedAt: unknown }) => k.revokedAt !== null)).toHaveLength(1);
      expect(keys.find((k: { label: unknown }) => k.label === "to revoke").revokedAt).not.toBeNull();
      expect(await page.$(button("Revoke"))).not.toBeNull();
    },
    STEP,
  );

  test(
    "keys: a read-only key expiring in 7 days; the list shows scopes, expiry, last use; Rotate shows the new key once",
    async () => {
      const before = (await page.$eval("#new-key", (e) => e.textContent ?? "")).trim();
      await fill("Key label", "reader");
      for (const scope of ["sponsor", "simulate", "estimate"]) await press(`aria/${scope}[role="checkbox"]`);
      await fill("Expires in (days, optional)", "7");
      await press(button("Create key"));
      await page.waitForFunction((k) => document.querySelector("#new-key")?.textContent !== k, {}, before);
      const reader = (await page.$eval("#new-key", (e) => e.textContent ?? "")).trim();
      const listed = async () => (await r.admin("GET", `/projects/${projectId}/keys`)).body.keys;
      const made = (await listed()).find((k: { label: string | null }) => k.label === "reader");
      expect(made.scopes).toEqual(["read"]);
      expect(Math.abs(Date.parse(made.expiresAt) - Date.now() - 7 * 86_400_000)).toBeLessThan(120_000);
      // used once (a look-up: read), so that its last use is written
      const used = await r.http.get(`/v1/transactions/${"0".repeat(64)}`, { "x-api-key": reader });
      expect(used.status).toBe(404);
      while (!(await listed()).find((k: { id: string }) => k.id === made.id).lastUsedAt) await Bun.sleep(50);
      // Rotate (the overlap asked: the dialog's default, 3600 s, accepted), once the list shows the new key
      const rowOf = (prefix: string) =>
        [...document.querySelectorAll("tr")].some((tr) => tr.textContent?.includes(prefix));
      await page.waitForFunction(rowOf, {}, made.prefix);
      const rotated = await page.evaluate((prefix) => {
        const row = [...document.querySelectorAll("tr")].find((tr) => tr.textContent?.includes(prefix));
        const b = [...(row?.querySelectorAll("button") ?? [])].find((x) => x.textContent === "Rotate");
        (b as { click(): void } | undefined)?.click();
        return Boolean(b);
      }, made.prefix);
      expect(rotated).toBe(true);
      await page.waitForFunction((k) => document.querySelector("#new-key")?.textContent !== k, {}, reader);
      const fresh = (await page.$eval("#new-key", (e) => e.textContent ?? "")).trim();
      expect(fresh).toMatch(/^sr_test_/);
      const after = await listed();
      const successor = after.find((k: { id: string; label: string }) => k.label === "reader" && k.id !== made.id);
      expect(successor.scopes).toEqual(["read"]);
      expect(fresh.startsWith(successor.prefix)).toBe(true);
      const old = after.find((k: { id: string }) => k.id === made.id);
      expect(Math.abs(Date.parse(old.expiresAt) - Date.now() - 3600_000)).toBeLessThan(120_000);
      // the list: the old key's row has its scopes, an expiry and a last use (no "never")
      await page.waitForFunction(
        (prefix) => {
          const row = [...document.querySelectorAll("tr")].find((tr) => tr.textContent?.includes(prefix));
          return row && !row.textContent.includes("never") && row.textContent.includes("read");
        },
        { timeout: 20_000, polling: 100 },
        made.prefix,
      );
      expect(await page.$$(button("Rotate"))).toHaveLength(3);
      await shot("keys");
    },
    STEP,
  );

  test(
    "credits: top up, the balance and the journal follow",
    async () => {
      await fill("Amount (stroops)", "50000000");
      await press(button("Top up"));
      await untilText("5 XLM (50,000,000 stroops)");
      expect(await bodyText()).toContain("topup");
      expect((await r.admin("GET", `/projects/${projectId}`)).body.creditBalance).toBe("50000000");
      // a negative adjustment needs a reason: refused without, applied with it, and the journal shows it
      await fill("Amount (stroops)", "-10000000");
      await press(button("Top up"));
      await untilText("a negative adjustment needs a reason");
      await fill("Reason (needed for a negative amount)", "refund of a duplicate top-up");
      await press(button("Top up"));
      await untilText("4 XLM (40,000,000 stroops)");
      expect(await bodyText()).toContain("refund of a duplicate top-up");
      expect((await r.admin("GET", `/projects/${projectId}`)).body.creditBalance).toBe("40000000");
    },
    STEP,
  );

  test(
    "policy: a VALIDATION_ERROR is shown beside its field",
    async () => {
      await fill("Burst", "0");
      await press(button("Save policy"));
      await page.waitForFunction(() => (document.querySelector("#policy-error-burst")?.textContent ?? "") !== "");
      expect(await page.$eval("#policy-burst", (e) => e.getAttribute("aria-invalid"))).toBe("true");
      await fill("Burst", "20");
      await press(button("Save policy"));
      await untilText("Saved.");
      expect((await r.admin("GET", `/projects/${projectId}`)).body.policy.burst).toBe(20);
      // the fee strategy: a select of the allowed values
      const options = await page.$$eval("#policy-feeStrategy option", (os) => os.map((o: any) => o.value));
      expect(options).toEqual(["", "fast", "economy"]);
      await page.select(input("Fee strategy"), "economy");
      await press(button("Save policy"));
      const strategy = async () => (await r.admin("GET", `/projects/${projectId}`)).body.policy.feeStrategy;
      for (let i = 0; i < 100 && (await strategy()) !== "economy"; i++) await Bun.sleep(100);
      expect(await strategy()).toBe("economy");
      await shot("project");
    },
    STEP,
  );

  test(
    "policy: sponsorship rules as JSON and ISO times (an error beside the field); an end user's usage today",
    async () => {
      await fill(
        'Per end-user caps a day (JSON: {"maxTransactionsPerDay", "maxFeePerDay"})',
        '{"maxTransactionsPerDay": 0}',
      );
      await press(button("Save policy"));
      await page.waitForFunction(() => (document.querySelector("#policy-error-perUser")?.textContent ?? "") !== "");
      await fill(
        'Per end-user caps a day (JSON: {"maxTransactionsPerDay", "maxFeePerDay"})',
        '{"maxTransactionsPerDay": 3}',
      );
      await fill("Active until (ISO 8601)", "2099-01-01T00:00:00Z");
      await press(button("Save policy"));
      const policy = async () => (await r.admin("GET", `/projects/${projectId}`)).body.policy;
      for (let i = 0; i < 100 && (await policy()).perUser === null; i++) await Bun.sleep(100);
      expect((await policy()).perUser).toEqual({ maxTransactionsPerDay: 3 });
      expect((await policy()).activeUntil).toBe("2099-01-01T00:00:00.000Z");
      await fill("End user account", Keypair.random().publicKey());
      await press(button("Look up"));
      await untilText("0 transactions, 0 stroops charged");
    },
    STEP,
  );

  test(
    "x402: the addresses the project accepts payments to, saved and shown",
    async () => {
      const merchant = Keypair.random().publicKey();
      await fill("Accepted payTo addresses", merchant);
      await press(button("Save"));
      await untilText("Saved: 1 address(es).");
      expect((await r.admin("GET", `/projects/${projectId}`)).body.x402).toEqual({ payTo: [merchant] });
    },
    STEP,
  );

  test(
    "webhooks: one added from the console (its secret shown once); a delivery shows each attempt, in order, with its status or error and duration",
    async () => {
      // added from the console: its signing secret shown once
      await fill("Webhook URL", "https://93.184.215.14/hook");
      await press(button("Add webhook"));
      await page.waitForSelector("#new-webhook-secret", { timeout: 20_000 });
      const secret = await page.$eval("#new-webhook-secret", (e) => e.textContent ?? "");
      expect(secret).toMatch(/^whsec_/);
      const listed = await r.admin("GET", `/projects/${projectId}/webhooks`);
      const hook = { body: listed.body.webhooks.find((w: { url: string }) => w.url === "https://93.184.215.14/hook") };
      expect(hook.body).toBeDefined();
      const at = (s: number) => new Date(Date.UTC(2026, 0, 2, 3, 4, s)).toISOString();
      // a delivery as the worker records it (delivered: the worker leaves it alone)
      await r.database.insert(webhookDeliveries).values({
        webhookId: hook.body.id,
        eventId: 1n,
        type: "transaction.status",
        state: "delivered",
        attempts: 3,
        responseStatus: 200,
        attemptLog: [
          { at: at(1), status: 503, error: "HTTP 503", durationMs: 41 },
          { at: at(2), status: null, error: "no answer within 10000 ms", durationMs: 10002 },
          { at: at(3), status: 200, error: null, durationMs: 17 },
        ],
      });
      await page.reload({ waitUntil: "load" });
      await press(button("Deliveries"));
      await untilText("(10002 ms)");
      const items = await page.$$eval("ol.attempts li", (li) => li.map((e) => e.textContent ?? ""));
      expect(items).toHaveLength(3);
      expect(items[0]).toContain("503 (41 ms)");
      expect(items[1]).toContain("no answer within 10000 ms (10002 ms)");
      expect(items[2]).toContain("200 (17 ms)");
    },
    STEP,
  );

  test(
    "a state-changing request with the cookie but without the CSRF token is refused (403); a cross-site form post is refused",
    async () => {
      const headers = { cookie, "content-type": "application/json" };
      const noCsrf = await fetch(`${r.url}/v1/admin/projects`, {
        method: "POST",
        headers,
        body: JSON.stringify({ name: "no csrf" }),
      });
      expect(noCsrf.status).toBe(403);
      expect(((await noCsrf.json()) as any).error.code).toBe("FORBIDDEN");
      // another site (localhost is not 127.0.0.1) posts a form to the admin API: the browser sends no cookie
      // (SameSite=Strict), and it could not add the CSRF header anyway
      evil = Bun.serve({
        port: 0,
        fetch: () =>
          new Response(
            `<!doctype html><form id="f" method="post" enctype="text/plain" action="${r.url}/v1/admin/projects">` +
              `<input name='{"name":"evil","x":"' value='"}'></form><script>document.getElementById("f").submit()</script>`,
            { headers: { "content-type": "text/html" } },
          ),
      });
      alsoAllowed = `localhost:${evil.port}`;
      const evilPage = await browser.newPage();
      try {
        const answered = evilPage.waitForResponse((res) => res.url() === `${r.url}/v1/admin/projects`, {
          timeout: 15_000,
        });
        await evilPage.goto(`http://localhost:${evil.port}/`);
        const res = await answered;
        expect([401, 403]).toContain(res.status());
      } finally {
        await evilPage.close();
        alsoAllowed = null;
      }
      const names = (await r.admin("GET", "/projects")).body.projects.map((p: { name: string }) => p.name);
      expect(names).not.toContain("evil");
      expect(names).not.toContain("no csrf");
    },
    STEP,
  );

  test(
    "channels: every channel of each network; resize the testnet pool and watch it converge",
    async () => {
      await press(link("Channels"));
      await untilText("testnet: 4 of 4 channels");
      await page.select("#resize-network", "testnet");
      await fill("Channel count", "6");
      await fill("Maximum while requests wait", "9");
      await press(button("Resize"));
      await untilText("Resizing testnet");
      await untilText("Grows to at most 9 channels while requests wait");
      await untilText("testnet: 6 of 6 channels ✓", 30_000);
      // the resize is done: its notice goes
      // biome-ignore lint/performance/useDomNodeTextContent: the rendered text is meant
      await page.waitForFunction(() => !document.body.innerText.includes("Resizing testnet"), {
        timeout: 10_000,
        polling: 100,
      });
      expect(await page.$$eval("section[aria-label='testnet pool'] tbody tr", (rows) => rows.length)).toBe(6);
      await shot("channels");
    },
    STEP,
  );

  test(
    "transactions: a sponsored transaction appears live in the table; its detail shows its project by name, the attempts in words, no explorer for the embedded network",
    async () => {
      await press(link("Transactions"));
      await page.waitForSelector(input("Status"));
      await untilText("No transactions match.");
      const user = await r.funded();
      const tx = await r.payment(user);
      const res = await r.post(
        "/v1/sponsor",
        { transaction: tx.toEnvelope().toXDR("base64"), network: "testnet" },
        { "x-api-key": apiKey },
      );
      expect(res.status).toBe(200);
      const inner = res.body.innerHash as string;
      const shortHash = `${inner.slice(0, 8)}…${inner.slice(-8)}`;
      await untilText(shortHash, 10_000).catch(async (e) => {
        console.error(await bodyText());
        throw e;
      }); // polled every 2 s: no reload
      await untilText("success");
      expect(await bodyText()).toContain("Console demo");
      await page.select("#tx-status", "failed");
      await untilText("No transactions match.");
      await page.select("#tx-status", "");
      await untilText(shortHash);
      await shot("transactions");
      await press(link(shortHash));
      await untilText("Attempts");
      await untilText("accepted (PENDING)");
      const text = await bodyText();
      expect(text).toContain(res.body.hash);
      // the project by its name; the attempt that landed says so; no explorer for the embedded network
      expect(text).toContain("Console demo");
      expect(text).toMatch(/accepted \(PENDING\)\s+success/);
      expect(text).toContain("testnet (embedded localnet)");
      expect(text).toContain("no public explorer knows it");
      expect(await page.$$("a[href^='https://stellar.expert']")).toHaveLength(0);
      await shot("transaction");
    },
    STEP,
  );

  test(
    "on a phone: the same pages in one column",
    async () => {
      await press(link("Overview"));
      await untilText("success 1"); // the outcomes of the last 10 minutes: the sponsored transaction
      await shot("overview");
      await page.setViewport(PHONE);
      await press(link("Overview"));
      await untilText("Latest ledger");
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow).toBeLessThanOrEqual(0);
      await shot("phone-overview");
      await press(link("Transactions"));
      await untilText("success");
      expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(
        0,
      );
      await shot("phone-transactions");
      await page.setViewport(DESKTOP);
    },
    STEP,
  );

  test(
    "from the keyboard: every control Tab reaches on a project's page shows its focus",
    async () => {
      await page.setViewport(DESKTOP);
      await page.goto(`${r.url}/console#/projects/${projectId}`, { waitUntil: "load" });
      await page.waitForSelector("#view:not([aria-busy])");
      const seen: { tag: string; outline: string }[] = [];
      for (let i = 0; i < 25; i++) {
        await page.keyboard.press("Tab");
        seen.push(
          await page.evaluate(() => {
            const e = document.activeElement;
            const s = window.getComputedStyle(e);
            return { tag: e.tagName, outline: `${s.outlineStyle} ${s.outlineWidth}` };
          }),
        );
      }
      const controls = seen.filter((f) => f.tag !== "BODY");
      expect(controls.length).toBeGreaterThan(15);
      expect(controls.filter((f) => f.outline.startsWith("none") || f.outline.endsWith(" 0px"))).toEqual([]);
    },
    STEP,
  );

  test(
    "sign out ends the session: the page asks for the token again and the admin API refuses the old cookie",
    async () => {
      csrfSeen = ((await (await fetch(`${r.url}/v1/admin/session`, { headers: { cookie } })).json()) as any).csrfToken;
      await press(button("Sign out"));
      await page.waitForSelector(input("Admin token"), { visible: true });
      await untilText("Signed out.");
      expect((await fetch(`${r.url}/v1/admin/projects`, { headers: { cookie } })).status).toBe(401);
      const change = await fetch(`${r.url}/v1/admin/projects`, {
        method: "POST",
        headers: { cookie, "x-csrf-token": csrfSeen, "content-type": "application/json" },
        body: JSON.stringify({ name: "after sign-out" }),
      });
      expect(change.status).toBe(401);
      await page.reload({ waitUntil: "load" });
      await page.waitForSelector(input("Admin token"), { visible: true });
    },
    STEP,
  );

  test(
    "sign out everywhere ends every console session, another browser's too; the page asks for the token again",
    async () => {
      await fill("Admin token", TEST_ADMIN_TOKEN);
      await press(button("Sign in"));
      await page.waitForSelector(button("Sign out everywhere"), { visible: true });
      const other = await fetch(`${r.url}/v1/admin/session`, {
        method: "POST",
        headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
      });
      const otherCookie = other.headers.get("set-cookie")!.split(";")[0]!;
      expect((await fetch(`${r.url}/v1/admin/session`, { headers: { cookie: otherCookie } })).status).toBe(200);
      const mine = (await page.cookies(`${r.url}/v1/admin/projects`)).find((c) => c.name === "relay_console")!;
      await press(button("Sign out everywhere"));
      await page.waitForSelector(input("Admin token"), { visible: true });
      await untilText("Every console session has ended.");
      for (const c of [otherCookie, `${mine.name}=${mine.value}`])
        expect((await fetch(`${r.url}/v1/admin/session`, { headers: { cookie: c } })).status).toBe(401);
    },
    STEP,
  );

  test("axe-core finds no WCAG 2.2 AA violation on any page shown (desktop and phone)", () => {
    expect(Object.keys(violations).length).toBeGreaterThanOrEqual(8);
    expect(Object.entries(violations).filter(([, v]) => v.length > 0)).toEqual([]);
  });

  test("no request went to any other host (the console works offline); its icon is served, at /favicon.ico too", async () => {
    expect(elsewhere).toEqual([]);
    expect(missing).toEqual([]);
    for (const path of ["/favicon.ico", "/console/assets/favicon.svg"]) {
      const res = await fetch(`${r.url}${path}`);
      expect([res.status, res.headers.get("content-type")]).toEqual([200, "image/svg+xml"]);
      expect(await res.text()).toStartWith("<svg");
    }
  });
});

describe("a relay without ADMIN_TOKEN", () => {
  test(
    "the console says the admin API is disabled",
    async () => {
      const plain = await startTestRelay({ ADMIN_TOKEN: "" });
      const p = await browser.newPage();
      try {
        await p.setViewport(DESKTOP);
        await p.goto(`${plain.url}/console`, { waitUntil: "load" });
        await untilText("The admin API is disabled", 20_000, p);
        expect(await p.$("aria/Admin token")).toBeNull();
        await p.screenshot({ path: join(SHOTS, "disabled.png") as `${string}.png` });
      } finally {
        await p.close();
        await plain.stop();
      }
    },
    STEP,
  );
});
