// A project's page: its name and status above its sections (keys, credits, policy, end users, x402,
// webhooks), each in a module of its own but the end users' look-up and the x402 addresses, which are small.

import { api } from "./api.js";
import { projectCredits } from "./credits.js";
import { badge, h } from "./dom.js";
import { field, form } from "./forms.js";
import { projectKeys } from "./keys.js";
import { projectPolicy } from "./policy.js";
import { projectWebhooks } from "./webhooks.js";

export async function project(view, id) {
  const head = h("div");
  const keys = h("section", { class: "card", "aria-label": "Keys" });
  const credits = h("section", { class: "card", "aria-label": "Credits" });
  const policy = h("section", { class: "card", "aria-label": "Policy" });
  const hooks = h("section", { class: "card", "aria-label": "Webhooks" });
  const users = h("section", { class: "card", "aria-label": "End users" });
  const x402 = h("section", { class: "card", "aria-label": "x402 payments" });
  view.prepend(h("p", null, h("a", { href: "#/projects" }, "← Projects")));
  view.append(head, keys, credits, policy, users, x402, hooks);
  const p = await api("GET", `/v1/admin/projects/${encodeURIComponent(id)}`);
  const drawHead = (p) =>
    head.replaceChildren(h("h1", null, p.name, " ", badge(p.status)), h("p", { class: "muted mono" }, p.id));
  drawHead(p);
  await Promise.all([
    projectKeys(keys, id),
    projectCredits(credits, id),
    projectPolicy(policy, p, drawHead),
    projectWebhooks(hooks, id),
  ]);
  projectUsers(users, id);
  projectX402(x402, p);
}

/** The addresses the project accepts x402 payments to: the only ones its key settles. */
function projectX402(box, p) {
  const list = h("textarea", { name: "payTo", rows: "3", placeholder: "one G… or C… address a line" });
  list.value = p.x402.payTo.join("\n");
  const out = h("p", { role: "status" });
  const save = async () => {
    const payTo = list.value.split(/\s+/).filter(Boolean);
    const saved = await api("PATCH", `/v1/admin/projects/${p.id}`, { x402: { payTo } });
    list.value = saved.x402.payTo.join("\n");
    out.textContent = `Saved: ${saved.x402.payTo.length} address(es).`;
  };
  box.append(
    h("h2", null, "x402 payments"),
    h("p", { class: "muted" }, "Its key settles payments to these addresses only (docs/x402.md)."),
    form(save, field("Accepted payTo addresses", list, "x402-pay-to"), h("button", { type: "submit" }, "Save")),
    out,
  );
}

/** An end user's usage today against the policy's perUser caps. */
function projectUsers(box, id) {
  const account = h("input", { name: "account", placeholder: "G… or C…", autocomplete: "off" });
  const out = h("p", { role: "status" });
  const look = async () => {
    const u = await api("GET", `/v1/admin/projects/${id}/users/${encodeURIComponent(account.value.trim())}`);
    out.textContent = `${u.day}: ${u.transactions} transactions, ${u.feeCharged} stroops charged`;
  };
  box.append(
    h("h2", null, "End users"),
    form(look, field("End user account", account, "user-account"), h("button", { type: "submit" }, "Look up")),
    out,
  );
}
