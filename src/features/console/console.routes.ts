/**
 * GET /console: the operator console, a page of static files from src/console (no framework, no
 * CDN: it works offline), under a strict Content-Security-Policy (its own scripts and styles only,
 * no inline code, not framed). It talks to the admin API with a session cookie (console-session.ts).
 */
import { join } from "node:path";
import { Elysia } from "elysia";
import { RelayError } from "../../kernel/errors.ts";

const DIR = join(import.meta.dir, "static");
/** The console's files and their content types. */
export const CONSOLE_FILES = new Map([
  ["index.html", "text/html; charset=utf-8"],
  ["console.css", "text/css; charset=utf-8"],
  ["console.js", "text/javascript; charset=utf-8"],
  ["keys.js", "text/javascript; charset=utf-8"],
]);
export const CONSOLE_CSP =
  "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'";

const serve = (file: string) => {
  const type = CONSOLE_FILES.get(file);
  if (!type) throw new RelayError("NOT_FOUND", `no console file ${file}`);
  return new Response(Bun.file(join(DIR, file)), {
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
  return new Elysia({ name: "console.routes" })
    .get("/console", () => serve("index.html"), hidden)
    .get("/console/", () => serve("index.html"), hidden)
    .get("/console/assets/:file", ({ params }) => serve(params.file), hidden);
}
