// Signing in and out. The admin token is sent once, to sign in, and never kept: the session is an
// HttpOnly cookie and its CSRF token lives in session.js's memory.

import { api } from "./api.js";
import { $ } from "./dom.js";
import { render } from "./router.js";
import { SESSION, setCsrfToken, show, signedOut } from "./session.js";
import { stopTimers } from "./view.js";

export async function signIn(ev) {
  ev.preventDefault();
  const input = $("#admin-token");
  const token = input.value;
  input.value = ""; // the token is not kept anywhere
  const err = $("#sign-in-error");
  err.textContent = "";
  const res = await fetch(SESSION, {
    method: "POST",
    headers: { authorization: `Bearer ${token}` },
    credentials: "same-origin",
  });
  const data = await res.json().catch(() => null);
  if (res.status === 201) {
    setCsrfToken(data.csrfToken);
    return signedIn();
  }
  if (res.status === 429)
    err.textContent = `Too many wrong tokens: try again in ${res.headers.get("retry-after") ?? "60"} s.`;
  else if (res.status === 404) show("disabled");
  else err.textContent = "That is not the admin token.";
}

export function signedIn() {
  show("view");
  if (!location.hash || location.hash === "#") location.hash = "#/overview";
  else render();
}

export async function signOut() {
  try {
    await api("DELETE", SESSION);
  } finally {
    signedOut("Signed out.");
  }
}

/** Ends every console session (every browser, every instance), this one too. */
export async function signOutEverywhere() {
  stopTimers();
  try {
    await api("DELETE", "/v1/admin/sessions");
  } finally {
    signedOut("Every console session has ended.");
  }
}
