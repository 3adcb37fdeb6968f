/**
 * GET /console: the operator console, a page of static files from src/features/console/static (native ES modules: no
 * framework, no build step, no CDN: it works offline) and the lists it offers, written from the
 * relay's own constants (console-lists.ts), under a strict Content-Security-Policy (its own scripts and styles only,
 * no inline code, not framed). It talks to the admin API with a session cookie (console-session.ts).
 */
import { join } from "node:path";
import { Elysia } from "elysia";
import { RelayError } from "../../kernel/errors.ts";
import { CONSOLE_LISTS_JS } from "./console-lists.ts";

const DIR = join(import.meta.dir, "static");
const JS = "text/javascript; charset=utf-8";
/** The console's modules (console.js the entry); lists.js is written by console-lists.ts, not read. */
const MODULES = [
  "console.js",
  "api.js",
  "channels.js",
  "credits.js",
  "dom.js",
  "forms.js",
  "keys.js",
  "lists.js",
  "overview.js",
  "policy.js",
  "project.js",
  "projects.js",
  "router.js",
  "session.js",
  "sign-in.js",
  "transactions.js",
  "view.js",
  "webhooks.js",
];
/** The console's files and their content types: any other is refused. */
export const CONSOLE_FILES = new Map([
  ["index.html", "text/html; charset=utf-8"],
  ["console.css", "text/css; charset=utf-8"],
  ["favicon.svg", "image/svg+xml"],
  ...MODULES.map((m) => [m, JS] as const),
]);
/** The files written by the relay rather than read from src/features/console/static. */
const WRITTEN = new Map([["lists.js", CONSOLE_LISTS_JS]]);
export const CONSOLE_CSP =
  "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'";

const serve = (file: string) => {
  const type = CONSOLE_FILES.get(file);
  if (!type) throw new RelayError("NOT_FOUND", `no console file ${file}`);
  return new Response(WRITTEN.get(file) ?? Bun.file(join(DIR, file)), {
    headers: {
      "content-type": type,
      "content-security-policy": CONSOLE_CSP,
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
      "x-frame-options": "DENY",
      "cache-control": "no-cache",
    },
  });
};

export function consoleRoutes() {
  const hidden = { detail: { hide: true } };
  return (
    new Elysia({ name: "console.routes" })
      .get("/console", () => serve("index.html"), hidden)
      .get("/console/", () => serve("index.html"), hidden)
      .get("/console/assets/:file", ({ params }) => serve(params.file), hidden)
      // browsers ask for it at the root, whatever the page says
      .get("/favicon.ico", () => serve("favicon.svg"), hidden)
  );
}
