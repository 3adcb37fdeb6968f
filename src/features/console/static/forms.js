// Form helpers: a labelled field, and a form whose submit runs an action with its errors shown in the
// form's alert line.

import { ApiError } from "./api.js";
import { h } from "./dom.js";

/** `input` with its label (the input gets `id`). */
export function field(label, input, id) {
  input.id = id;
  return h("div", { class: "field" }, h("label", { for: id }, label), input);
}

/** A form whose submit runs `fn` (errors shown in its alert line); the submit button is off meanwhile. */
export function form(fn, ...kids) {
  const err = h("p", { class: "error", role: "alert" });
  const f = h("form", { class: "row" }, ...kids, err);
  f.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    err.textContent = "";
    const buttons = f.querySelectorAll("button");
    for (const b of buttons) b.disabled = true;
    try {
      await fn(f);
    } catch (e) {
      err.textContent = e.message;
      if (e instanceof ApiError && e.error?.details?.field) err.dataset.field = e.error.details.field;
      if (fn.onError) fn.onError(e);
    } finally {
      for (const b of buttons) b.disabled = false;
    }
  });
  return f;
}
