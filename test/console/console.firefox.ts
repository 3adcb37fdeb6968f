/**
 * The operator console in Firefox ESR (Debian's firefox-esr, driven by puppeteer-core over WebDriver
 * BiDi), against a relay this test starts: signing in and saving a policy from the keyboard alone;
 * the pages axe-core checks at WCAG 2.2 AA (none may have a violation); no
 * request to any other host. The whole walk is in Chromium (console.browser.ts); this holds the
 * same pages to a second engine. Run with `bun run test:browser`.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { startTestRelay, TEST_ADMIN_TOKEN, type TestRelay } from "../support/relay.ts";
import { axeViolations } from "../support/axe.ts";

declare const document: any;

const FIREFOX = process.env.FIREFOX_PATH ?? "/usr/bin/firefox-esr";
const STEP = { timeout: 60_000 };

let r: TestRelay;
let browser: Browser;
let page: Page;
const elsewhere: string[] = [];
const violations: Record<string, string[]> = {};

const untilText = (text: string, timeout = 20_000) =>
  // biome-ignore lint/performance/useDomNodeTextContent: the rendered text is meant
  page.waitForFunction((t) => document.body.innerText.includes(t), { timeout, polling: 100 }, text);
const checked = async (name: string) => {
  await page.waitForSelector("#view:not([aria-busy])");
  violations[name] = await axeViolations(page);
};
/** The focused element's accessible label (or its text). */
const focusedLabel = () =>
  page.evaluate(() => {
    const e = document.activeElement;
    return (e.labels?.[0]?.textContent ?? e.getAttribute("aria-label") ?? e.textContent ?? "").trim();
  });
/** Presses Tab until the focused element's label starts with `label` (at most 60 times). */
async function tabTo(label: string) {
  for (let i = 0; i < 60; i++) {
    await page.keyboard.press("Tab");
    if ((await focusedLabel()).startsWith(label)) return;
  }
  throw new Error(`no control labelled ${label} reached with Tab`);
}

beforeAll(async () => {
  if (!existsSync(FIREFOX))
    throw new Error(`no browser at ${FIREFOX}: apt-get install firefox-esr (see docs/console.md)`);
  r = await startTestRelay();
  browser = await puppeteer.launch({
    browser: "firefox",
    executablePath: FIREFOX,
    headless: true,
    // a headless window never has the system's focus: without this, :focus matches nothing
    extraPrefsFirefox: { "focusmanager.testmode": true },
  });
  page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 800 });
  const relayHost = new URL(r.url).host;
  await page.setRequestInterception(true);
  page.on("request", (req) => {
    if (new URL(req.url()).host === relayHost) return void req.continue();
    elsewhere.push(req.url());
    void req.abort();
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await r?.stop();
}, 60_000);

describe("the operator console in Firefox ESR", () => {
  test(
    "signing in from the keyboard alone",
    async () => {
      await page.goto(`${r.url}/console`, { waitUntil: "load" });
      await page.waitForSelector("#admin-token");
      await checked("sign-in");
      await tabTo("Admin token");
      await page.keyboard.type(TEST_ADMIN_TOKEN);
      await page.keyboard.press("Enter");
      await untilText("Latest ledger");
      await checked("overview");
    },
    STEP,
  );

  test(
    "a project's page: its policy saved from the keyboard",
    async () => {
      const p = await r.project();
      await page.goto(`${r.url}/console#/projects/${p.id}`, { waitUntil: "load" });
      await untilText("Save policy");
      await checked("project");
      await page.focus("#policy-burst");
      await page.keyboard.down("Control");
      await page.keyboard.press("a");
      await page.keyboard.up("Control");
      await page.keyboard.type("25");
      await page.keyboard.press("Enter"); // the form's own submission, from its field
      await untilText("Saved.");
      expect((await r.admin("GET", `/projects/${p.id}`)).body.policy.burst).toBe(25);
    },
    STEP,
  );

  test(
    "the channels and transactions pages, and a phone's width",
    async () => {
      await page.goto(`${r.url}/console#/channels`, { waitUntil: "load" });
      await untilText("testnet");
      await checked("channels");
      await page.goto(`${r.url}/console#/transactions`, { waitUntil: "load" });
      await page.waitForSelector("#tx-status");
      await checked("transactions");
      await page.setViewport({ width: 390, height: 844 });
      await page.goto(`${r.url}/console#/overview`, { waitUntil: "load" });
      await untilText("Latest ledger");
      await checked("overview-phone");
    },
    STEP,
  );

  test("axe-core finds no WCAG 2.2 AA violation on any of them; no request went to another host", () => {
    expect(Object.keys(violations)).toHaveLength(6);
    expect(Object.entries(violations).filter(([, v]) => v.length > 0)).toEqual([]);
    expect(elsewhere).toEqual([]);
  });
});
