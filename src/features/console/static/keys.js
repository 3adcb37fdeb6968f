// A project's API keys in the operator console: the list (scopes, expiry, last use), creating a key
// with its scopes and an optional expiry, rotating one (the overlap asked, the new key shown once) and
// revoking one. The scopes are the relay's (lists.js).

import { api } from "./api.js";
import { badge, h, table, when } from "./dom.js";
import { field, form } from "./forms.js";
import { KEY_SCOPES as SCOPES } from "./lists.js";
import { showError } from "./view.js";

export async function projectKeys(box, id) {
  const env = h(
    "select",
    null,
    h("option", { value: "test" }, "test (testnet)"),
    h("option", { value: "live" }, "live (mainnet)"),
  );
  const label = h("input", { maxlength: 200 });
  const days = h("input", { type: "number", min: 1, max: 3650, step: 1, inputmode: "numeric" });
  const boxes = SCOPES.map((s) => h("input", { type: "checkbox", id: `key-scope-${s}`, value: s, checked: true }));
  const scopes = h(
    "fieldset",
    { class: "field scopes" },
    h("legend", null, "Scopes"),
    boxes.map((b) => h("label", { for: b.id }, b, ` ${b.value}`)),
  );
  const shown = h("div");
  const rows = h("div");
  const status = (k) => {
    if (k.revokedAt) return badge("revoked");
    if (k.expiresAt && Date.parse(k.expiresAt) <= Date.now()) return badge("expired");
    return badge("active");
  };
  const load = async () => {
    const { keys } = await api("GET", `/v1/admin/projects/${id}/keys`);
    rows.replaceChildren(
      table(
        [
          ["Key", (k) => h("code", { id: `key-${k.id}`, class: "nowrap" }, `${k.prefix}…`)],
          ["Environment", (k) => k.environment],
          ["Label", (k) => k.label ?? ""],
          ["Scopes", (k) => k.scopes.join(", ")],
          ["Created", (k) => when(k.createdAt)],
          ["Expires", (k) => (k.expiresAt ? when(k.expiresAt) : "never")],
          ["Last used", (k) => (k.lastUsedAt ? when(k.lastUsedAt) : "never")],
          ["Status", status],
          [
            "",
            (k) =>
              k.revokedAt
                ? ""
                : [
                    h(
                      "button",
                      {
                        type: "button",
                        class: "secondary",
                        "aria-describedby": `key-${k.id}`,
                        onclick: () => rotate(k),
                      },
                      "Rotate",
                    ),
                    " ",
                    h(
                      "button",
                      { type: "button", class: "danger", "aria-describedby": `key-${k.id}`, onclick: () => revoke(k) },
                      "Revoke",
                    ),
                  ],
          ],
        ],
        keys,
        "No keys yet.",
      ),
    );
  };
  /** The key's secret, shown this once (with Copy). */
  const reveal = (k, title) => {
    const secret = h("code", { id: "new-key" }, k.key);
    const copy = h("button", { type: "button", class: "secondary" }, "Copy");
    copy.addEventListener("click", async () => {
      try {
        await navigator.clipboard.writeText(k.key);
      } catch {
        getSelection().selectAllChildren(secret); // no clipboard (plain HTTP): selected, for Ctrl+C
      }
      copy.textContent = "Copied";
    });
    shown.replaceChildren(h("div", { class: "secret", role: "status" }, h("strong", null, title), secret, copy));
  };
  const revoke = async (k) => {
    if (!confirm(`Revoke ${k.prefix}…? Requests with it are refused at once.`)) return;
    await api("DELETE", `/v1/admin/projects/${id}/keys/${k.id}`).catch(showError);
    await load();
  };
  const rotate = async (k) => {
    const answer = prompt(
      `Rotate ${k.prefix}…: a new key with the same scopes. How many seconds should the old key keep working?`,
      "3600",
    );
    if (answer === null) return;
    const overlapSeconds = /^\s*[0-9]+\s*$/.test(answer) ? Number(answer) : Number.NaN;
    if (!Number.isInteger(overlapSeconds))
      return showError(
        new Error("The overlap must be a whole number of seconds (0 or more): the key was not rotated."),
      );
    try {
      const next = await api("POST", `/v1/admin/projects/${id}/keys/${k.id}/rotate`, { overlapSeconds });
      reveal(next, `New key for ${k.prefix}…, shown once (the old one works ${overlapSeconds} s more):`);
    } catch (e) {
      showError(e);
    }
    await load();
  };
  const create = async () => {
    const picked = boxes.filter((b) => b.checked).map((b) => b.value);
    const k = await api("POST", `/v1/admin/projects/${id}/keys`, {
      environment: env.value,
      ...(label.value ? { label: label.value } : {}),
      ...(picked.length < SCOPES.length ? { scopes: picked } : {}),
      ...(days.value ? { expiresAt: new Date(Date.now() + Number(days.value) * 86_400_000).toISOString() } : {}),
    });
    reveal(k, "New key, shown once:");
    label.value = "";
    days.value = "";
    for (const b of boxes) b.checked = true;
    await load();
  };
  box.append(
    h("h2", null, "API keys"),
    form(
      create,
      field("Environment", env, "key-environment"),
      field("Key label", label, "key-label"),
      scopes,
      field("Expires in (days, optional)", days, "key-expires-days"),
      h("button", { type: "submit" }, "Create key"),
    ),
    shown,
    rows,
  );
  await load();
}
