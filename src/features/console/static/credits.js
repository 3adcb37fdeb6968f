// A project's credits: the balance, the top-up (or adjustment, with its reason) and the journal.

import { api } from "./api.js";
import { h, short, table, when, xlm } from "./dom.js";
import { field, form } from "./forms.js";

export async function projectCredits(box, id) {
  const amount = h("input", { required: true, inputmode: "numeric", pattern: "-?[0-9]+" });
  const reference = h("input", { maxlength: 200 });
  // an adjustment (a negative amount needs one: the API refuses it without) says why, in the journal
  const reason = h("input", { maxlength: 500 });
  const balance = h("p", { class: "stat" });
  const journal = h("div");
  const load = async () => {
    const [p, j] = await Promise.all([
      api("GET", `/v1/admin/projects/${id}`),
      api("GET", `/v1/admin/projects/${id}/credits?limit=20`),
    ]);
    balance.textContent = `${xlm(p.creditBalance)} (${BigInt(p.creditBalance).toLocaleString("en")} stroops)`;
    journal.replaceChildren(
      table(
        [
          ["When", (e) => when(e.createdAt)],
          ["Kind", (e) => e.kind],
          ["Amount", (e) => xlm(e.amount), "num"],
          ["Reference", (e) => e.reference ?? (e.txHash ? h("code", null, short(e.txHash)) : "")],
          ["Reason", (e) => e.reason ?? ""],
        ],
        j.entries,
        "No entries yet.",
      ),
    );
  };
  const topUp = async () => {
    await api("POST", `/v1/admin/projects/${id}/credits`, {
      amount: amount.value.trim(),
      ...(reference.value ? { reference: reference.value } : {}),
      ...(reason.value.trim() ? { reason: reason.value.trim() } : {}),
    });
    amount.value = "";
    reference.value = "";
    reason.value = "";
    await load();
  };
  box.append(
    h("h2", null, "Credits"),
    balance,
    form(
      topUp,
      field("Amount (stroops)", amount, "credit-amount"),
      field("Reference", reference, "credit-reference"),
      field("Reason (needed for a negative amount)", reason, "credit-reason"),
      h("button", { type: "submit" }, "Top up"),
    ),
    h("h3", null, "Journal"),
    journal,
  );
  await load();
}
