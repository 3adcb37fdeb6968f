// The view shown now: its refresh timers (stopped when another view, or the sign-in page, replaces
// it) and its error line.

import { $ } from "./dom.js";

let timers = [];
let renderId = 0;

/** Stops the current view's timers: a run already started is ignored when it ends. */
export function stopTimers() {
  renderId++;
  for (const t of timers) clearInterval(t);
  timers = [];
}

/** Runs `fn` now and every `ms` while the current view is shown. */
export function every(ms, fn) {
  const id = renderId;
  const run = () => (id === renderId ? fn().catch(showError) : undefined);
  run();
  timers.push(setInterval(run, ms));
}

/** Shows an error in the current view's alert line. */
export function showError(e) {
  const box = $("#view-error");
  if (box) box.textContent = e instanceof Error ? e.message : String(e);
}
