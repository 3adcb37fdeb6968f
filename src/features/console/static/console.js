// The operator console: plain DOM, no framework, no build step, nothing from elsewhere; native modules
// served by src/features/console/console.routes.ts (lists.js is built there from the relay's own lists). It uses the
// admin API only (/v1/admin/*, with the session cookie and X-CSRF-Token on changes) and GET /health.
// This entry wires the page: the sign-in form, the sign-out buttons, the pages by location.hash, and
// whether a session is open already.

import { $ } from "./dom.js";
import { render } from "./router.js";
import { SESSION, setCsrfToken, show, signedOut } from "./session.js";
import { signedIn, signIn, signOut, signOutEverywhere } from "./sign-in.js";

async function start() {
  $("#sign-in-form").addEventListener("submit", signIn);
  $("#sign-out").addEventListener("click", signOut);
  $("#sign-out-all").addEventListener("click", signOutEverywhere);
  window.addEventListener("hashchange", render);
  const res = await fetch(SESSION, { cache: "no-store", credentials: "same-origin" });
  if (res.status === 404) return show("disabled");
  if (res.ok) {
    setCsrfToken((await res.json()).csrfToken);
    return signedIn();
  }
  signedOut();
}

start().catch((e) => {
  show("sign-in");
  $("#sign-in-error").textContent = e.message;
});
