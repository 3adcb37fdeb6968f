// A project's webhooks: the list, a new one registered (its signing secret shown once), and a
// webhook's last deliveries with each attempt.

import { api } from "./api.js";
import { badge, h, table, when } from "./dom.js";
import { field, form } from "./forms.js";
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
  const list = h("div");
  const deliveries = h("div");
  const shown = h("div");
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
  const load = async () => {
    const { webhooks } = await api("GET", `/v1/admin/projects/${id}/webhooks`).catch(() => ({ webhooks: [] }));
    list.replaceChildren(
      table(
        [
          ["URL", (w) => h("code", null, w.url)],
          ["Events", (w) => w.events.join(", ")],
          ["Created", (w) => when(w.createdAt)],
          [
            "",
            (w) =>
              h(
                "button",
                { type: "button", class: "secondary", onclick: () => show(w).catch(showError) },
                "Deliveries",
              ),
          ],
        ],
        webhooks,
        "No webhooks yet.",
      ),
    );
  };
  const url = h("input", { type: "url", name: "url", required: "", placeholder: "https://example.com/hooks/relay" });
  const add = async () => {
    const w = await api("POST", `/v1/admin/projects/${id}/webhooks`, { url: url.value.trim() });
    url.value = "";
    shown.replaceChildren(
      h(
        "div",
        { class: "secret", role: "status" },
        h("strong", null, `Signing secret of ${w.url}, shown once (deliveries are signed with it):`),
        h("code", { id: "new-webhook-secret" }, w.secret),
      ),
    );
    await load();
  };
  box.append(
    h("h2", null, "Webhooks"),
    form(add, field("Webhook URL", url, "webhook-url"), h("button", { type: "submit" }, "Add webhook")),
    shown,
    list,
    deliveries,
  );
  await load();
}
