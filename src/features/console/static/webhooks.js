// A project's webhooks: the list, and a webhook's last deliveries with each attempt.

import { api } from "./api.js";
import { badge, h, table, when } from "./dom.js";
import { showError } from "./view.js";

/** A delivery's attempts, oldest first: when, the HTTP status or the error, how long it took. */
const attemptList = (log) =>
  log.length
    ? h(
        "ol",
        { class: "attempts" },
        log.map((a) => h("li", null, `${when(a.at)}: ${a.status ?? a.error ?? "no answer"} (${a.durationMs} ms)`)),
      )
    : "–";

export async function projectWebhooks(box, id) {
  const { webhooks } = await api("GET", `/v1/admin/projects/${id}/webhooks`).catch(() => ({ webhooks: [] }));
  const deliveries = h("div");
  const show = async (w) => {
    const { deliveries: d } = await api("GET", `/v1/admin/projects/${id}/webhooks/${w.id}/deliveries?limit=20`);
    deliveries.replaceChildren(
      h("h3", null, `Deliveries to ${w.url}`),
      table(
        [
          ["Event", (x) => x.type],
          ["State", (x) => badge(x.state)],
          ["Attempts", (x) => x.attempts, "num"],
          ["Answer", (x) => x.responseStatus ?? x.lastError ?? ""],
          ["When", (x) => when(x.lastAttemptAt ?? x.createdAt)],
          ["Each attempt", (x) => attemptList(x.attemptLog ?? [])],
        ],
        d,
        "No deliveries yet.",
      ),
    );
  };
  box.append(
    h("h2", null, "Webhooks"),
    table(
      [
        ["URL", (w) => h("code", null, w.url)],
        ["Events", (w) => w.events.join(", ")],
        ["Created", (w) => when(w.createdAt)],
        [
          "",
          (w) =>
            h("button", { type: "button", class: "secondary", onclick: () => show(w).catch(showError) }, "Deliveries"),
        ],
      ],
      webhooks,
      "No webhooks (register them with POST /v1/admin/projects/{id}/webhooks).",
    ),
    deliveries,
  );
}
