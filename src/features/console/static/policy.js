// A project's policy form: one field per policy field the relay takes, each error shown beside its field,
// the approval secret shown once. The names come from the relay (lists.js); labels and kinds are here.

import { api } from "./api.js";
import { h } from "./dom.js";
import { form } from "./forms.js";
import { FEE_STRATEGIES, POLICY_FIELDS } from "./lists.js";

/**
 * How each policy field is shown, in the form's order: its label and kind (number, integer, stroops,
 * list, text, json, or the list of words a select offers). A field the relay takes that is not here
 * comes last, labelled with its name, as JSON; one here that the relay no longer takes is left out.
 */
const SHOWN = [
  ["requestsPerSecond", "Requests per second", "number"],
  ["burst", "Burst", "integer"],
  ["maxFee", "Max fee (stroops)", "stroops"],
  ["maxOperations", "Max operations", "integer"],
  ["dailySpendLimit", "Daily spend limit (stroops)", "stroops"],
  ["testnetDailySpendLimit", "Testnet daily spend limit (stroops)", "stroops"],
  ["lowBalanceAlert", "Low balance alert (stroops)", "stroops"],
  ["allowedOperations", "Allowed operations (comma-separated; empty: any)", "list"],
  ["feeStrategy", "Fee strategy", FEE_STRATEGIES],
  ["allow", 'Allowlists (JSON: {"contracts": [{"contract", "functions"}], "destinations", "assets"})', "json"],
  ["activeFrom", "Active from (ISO 8601)", "text"],
  ["activeUntil", "Active until (ISO 8601)", "text"],
  ["perUser", 'Per end-user caps a day (JSON: {"maxTransactionsPerDay", "maxFeePerDay"})', "json"],
  ["approval", 'Approval server (JSON: {"url", "timeoutMs", "onFailure"})', "json"],
];
/** The relay's policy fields as [name, label, kind], in the form's order. */
const FIELDS = [
  ...SHOWN.filter(([name]) => POLICY_FIELDS.includes(name)),
  ...POLICY_FIELDS.filter((name) => !SHOWN.some(([n]) => n === name)).map((name) => [name, name, "json"]),
];

export async function projectPolicy(box, p, drawHead) {
  const inputs = {};
  const errors = {};
  const fields = FIELDS.map(([name, label, kind]) => {
    const v = p.policy[name];
    // a list of words (kind is the list): a select of them, with the relay's default first
    const input = Array.isArray(kind)
      ? h(
          "select",
          { name, "aria-describedby": `policy-error-${name}` },
          h("option", { value: "" }, "(default)"),
          kind.map((w) => h("option", { value: w, selected: w === v }, w)),
        )
      : kind === "json"
        ? h(
            "textarea",
            { name, rows: 2, "aria-describedby": `policy-error-${name}` },
            v === null || v === undefined ? "" : JSON.stringify(v),
          )
        : h("input", {
            name,
            inputmode: kind === "list" || kind === "text" ? null : "decimal",
            value: v === null || v === undefined ? "" : Array.isArray(v) ? v.join(", ") : String(v),
            "aria-describedby": `policy-error-${name}`,
          });
    inputs[name] = input;
    errors[name] = h("span", { class: "error", id: `policy-error-${name}` });
    return h(
      "div",
      { class: "field" },
      h("label", { for: `policy-${name}` }, label),
      Object.assign(input, { id: `policy-${name}` }),
      errors[name],
    );
  });
  const value = (name, kind) => {
    const s = inputs[name].value.trim();
    if (s === "") return null;
    if (kind === "list")
      return s
        .split(",")
        .map((x) => x.trim())
        .filter(Boolean);
    if (kind === "stroops" || kind === "text" || Array.isArray(kind)) return s;
    if (kind === "json") {
      try {
        return JSON.parse(s);
      } catch {
        throw Object.assign(new Error(`${name}: not JSON`), { error: { details: { field: `policy.${name}` } } });
      }
    }
    return Number(s);
  };
  const save = async () => {
    for (const [name, input] of Object.entries(inputs)) {
      errors[name].textContent = "";
      input.removeAttribute("aria-invalid");
    }
    const patch = Object.fromEntries(FIELDS.map(([name, , kind]) => [name, value(name, kind)]));
    const updated = await api("PATCH", `/v1/admin/projects/${p.id}`, { policy: patch });
    drawHead(updated);
    const secret = updated.policy.approval?.secret;
    saved.textContent = secret ? `Saved. The approval secret, shown once: ${secret}` : "Saved.";
  };
  save.onError = (e) => {
    const name = String(e.error?.details?.field ?? "")
      .replace(/^policy\./, "")
      .split(/[.[/]/)[0];
    if (errors[name]) {
      errors[name].textContent = e.message;
      inputs[name].setAttribute("aria-invalid", "true");
      inputs[name].focus();
    }
  };
  const saved = h("span", { class: "ok", role: "status" });
  const f = form(save, ...fields, h("button", { type: "submit" }, "Save policy"), saved);
  f.classList.add("grid");
  box.append(h("h2", null, "Policy"), h("p", { class: "muted" }, "Empty: the relay's default."), f);
}
