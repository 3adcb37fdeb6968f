// The console's pages by location.hash: the current one is drawn into #view (the previous one's timers
// stopped) and its link in the navigation marked as the current page.

import { channels } from "./channels.js";
import { $, h } from "./dom.js";
import { overview } from "./overview.js";
import { project } from "./project.js";
import { projects } from "./projects.js";
import { csrfToken } from "./session.js";
import { transaction, transactions } from "./transactions.js";
import { showError, stopTimers } from "./view.js";

const ROUTES = [
  [/^#\/overview$/, overview],
  [/^#\/channels$/, channels],
  [/^#\/projects$/, projects],
  [/^#\/projects\/([^/]+)$/, project],
  [/^#\/transactions$/, transactions],
  [/^#\/transactions\/([0-9a-fA-F]{64})$/, transaction],
];

export function render() {
  if (!csrfToken()) return;
  stopTimers();
  const view = $("#view");
  view.replaceChildren();
  const hash = location.hash || "#/overview";
  const [re, fn] = ROUTES.find(([r]) => r.test(hash)) ?? ROUTES[0];
  const section = hash.split("/")[1];
  for (const a of document.querySelectorAll("#nav a"))
    if (a.getAttribute("href") === `#/${section}`) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  view.append(h("p", { id: "view-error", class: "error", role: "alert" }));
  // busy while the page draws its sections (a screen reader waits; so does a click on a control below)
  view.setAttribute("aria-busy", "true");
  fn(view, ...(re.exec(hash) ?? []).slice(1))
    .catch(showError)
    .finally(() => view.removeAttribute("aria-busy"));
}
