// The console's session in this page: the CSRF token (in this module's memory only; the session
// itself is an HttpOnly cookie) and which part of the page is shown (loading, disabled, sign-in, view).

import { $ } from "./dom.js";
import { stopTimers } from "./view.js";

/** GET: the session (and its CSRF token); POST: sign in; DELETE: sign out. */
export const SESSION = "/v1/admin/session";

let csrf = null;
/** The session's CSRF token; null while signed out. */
export const csrfToken = () => csrf;
export const setCsrfToken = (token) => {
  csrf = token;
};

export function show(which) {
  for (const id of ["loading", "disabled", "sign-in", "view"]) $(`#${id}`).hidden = id !== which;
  $("#nav").hidden = which !== "view";
  $("#sign-out").hidden = which !== "view";
  $("#sign-out-all").hidden = which !== "view";
}

/** Back to the sign-in form, with `message` (why) above it. */
export function signedOut(message) {
  csrf = null;
  stopTimers();
  show("sign-in");
  $("#sign-in-error").textContent = message ?? "";
  $("#admin-token").focus();
}
