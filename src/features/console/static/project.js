// A project's page: its name and status above its sections (keys, credits, policy, end users,
// webhooks), each in a module of its own but the end users' look-up, which is small.

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
  view.prepend(h("p", null, h("a", { href: "#/projects" }, "← Projects")));
  view.append(head, keys, credits, policy, users, hooks);
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
