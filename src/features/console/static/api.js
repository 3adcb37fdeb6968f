// The admin API from the console: JSON in and out, the session cookie, X-CSRF-Token on changes. A 401
// from the admin API while signed in ends the session in the page.

import { csrfToken, signedOut } from "./session.js";

/** An admin API refusal: its HTTP status and the error object of its body. */
export class ApiError extends Error {
  constructor(status, error) {
    super(error?.message ?? `HTTP ${status}`);
    this.status = status;
    this.error = error;
  }
}

export async function api(method, path, body) {
  const headers = {};
  const csrf = csrfToken();
  if (body !== undefined) headers["content-type"] = "application/json";
  if (method !== "GET" && csrf) headers["x-csrf-token"] = csrf;
  const res = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "same-origin",
    cache: "no-store",
  });
  const data = await res.json().catch(() => null);
  // (an answer to a request sent before signing out does not overwrite the sign-out's message)
  if (res.status === 401 && path.startsWith("/v1/admin") && csrfToken())
    signedOut("Your session has ended: sign in again.");
  if (!res.ok) throw new ApiError(res.status, data?.error);
  return data;
}
