// Transactions: the live list (filtered by project, network and status; refreshed every 2 s) and one
// transaction's page (its fields, an explorer link and its attempts).

import { api } from "./api.js";
import { badge, h, short, table, when, xlm } from "./dom.js";
import { field } from "./forms.js";
import { STATUSES } from "./lists.js";
import { every, showError } from "./view.js";

export async function transactions(view) {
  const projectSel = h("select", null, h("option", { value: "" }, "all projects"));
  const network = h(
    "select",
    null,
    h("option", { value: "" }, "all networks"),
    h("option", { value: "testnet" }, "testnet"),
    h("option", { value: "mainnet" }, "mainnet"),
  );
  const status = h(
    "select",
    null,
    h("option", { value: "" }, "any status"),
    STATUSES.map((s) => h("option", { value: s }, s)),
  );
  const rows = h("div", { "aria-live": "polite" });
  const names = new Map();
  view.prepend(h("h1", null, "Transactions ", h("span", { class: "badge s-ok" }, "live")));
  view.append(
    h(
      "div",
      { class: "row card" },
      field("Project", projectSel, "tx-project"),
      field("Network", network, "tx-network"),
      field("Status", status, "tx-status"),
    ),
    rows,
  );
  for (const p of (await api("GET", "/v1/admin/projects")).projects) {
    names.set(p.id, p.name);
    projectSel.append(h("option", { value: p.id }, p.name));
  }
  const refresh = async () => {
    const q = new URLSearchParams({ limit: "50" });
    if (projectSel.value) q.set("project", projectSel.value);
    if (network.value) q.set("network", network.value);
    if (status.value) q.set("status", status.value);
    const { transactions: txs } = await api("GET", `/v1/admin/transactions?${q}`);
    rows.replaceChildren(
      table(
        [
          ["Created", (t) => when(t.createdAt)],
          ["Hash", (t) => h("a", { href: `#/transactions/${t.innerHash}`, class: "mono" }, short(t.innerHash, 8))],
          ["Network", (t) => t.network],
          ["Status", (t) => badge(t.status)],
          ["Fee", (t) => (t.feeCharged ? xlm(t.feeCharged) : "–"), "num"],
          ["Project", (t) => (t.projectId ? (names.get(t.projectId) ?? t.projectId) : "anonymous")],
        ],
        txs,
        "No transactions match.",
      ),
    );
  };
  for (const s of [projectSel, network, status]) s.addEventListener("change", () => refresh().catch(showError));
  every(2000, refresh);
}

/** What the network answered to a send, in words (its sendTransaction status). */
const SEND_ANSWERS = {
  PENDING: "accepted (PENDING)",
  DUPLICATE: "already queued (DUPLICATE)",
  TRY_AGAIN_LATER: "busy, sent again (TRY_AGAIN_LATER)",
  ERROR: "refused (ERROR)",
};

export async function transaction(view, hash) {
  view.prepend(h("p", null, h("a", { href: "#/transactions" }, "← Transactions")));
  const box = h("div");
  view.append(box);
  const health = await fetch("/health", { cache: "no-store" })
    .then((r) => r.json())
    .catch(() => null);
  const names = new Map();
  const projectName = async (id) => {
    if (!names.has(id)) names.set(id, (await api("GET", `/v1/admin/projects/${id}`).catch(() => null))?.name ?? id);
    return names.get(id);
  };
  every(2000, async () => {
    const t = await api("GET", `/v1/admin/transactions/${hash}`);
    const local = health?.networks?.[t.network]?.upstream === "localnet";
    const explorer = t.network === "mainnet" ? "public" : "testnet";
    const project = t.projectId
      ? h("a", { href: `#/projects/${t.projectId}` }, await projectName(t.projectId))
      : "anonymous";
    // the attempt that landed carries the transaction's status; an earlier one was replaced by it
    const result = (a) => (a.hash === t.hash ? t.status : t.ledger ? "replaced" : "–");
    box.replaceChildren(
      h("h1", null, "Transaction ", badge(t.status)),
      h(
        "div",
        { class: "card" },
        h(
          "dl",
          null,
          [
            ["Hash", h("code", null, t.hash)],
            ["Inner hash", h("code", null, t.innerHash)],
            ["Network", local ? `${t.network} (embedded localnet)` : t.network],
            ["Ledger", t.ledger ?? "–"],
            ["Fee charged", t.feeCharged ? xlm(t.feeCharged) : "–"],
            ["Project", project],
            ["Created", when(t.createdAt)],
            ["Updated", when(t.updatedAt)],
            ["Error", t.error ? `${t.error.code}: ${t.error.message}` : "–"],
          ].map(([k, v]) => [h("dt", null, k), h("dd", null, v)]),
        ),
        local
          ? h(
              "p",
              { class: "muted" },
              "On the relay's embedded localnet: no public explorer knows it; look it up with getTransaction at ",
              h("code", null, `/localnet/${t.network}/rpc`),
              ".",
            )
          : h(
              "p",
              null,
              h(
                "a",
                {
                  href: `https://stellar.expert/explorer/${explorer}/tx/${t.hash}`,
                  rel: "noopener noreferrer",
                  target: "_blank",
                },
                "View on stellar.expert",
              ),
            ),
      ),
      h("h2", null, "Attempts"),
      table(
        [
          ["Sent", (a) => when(a.sentAt)],
          ["Hash", (a) => h("code", null, short(a.hash, 8))],
          ["Fee bid", (a) => a.feeBid, "num"],
          ["Channel", (a) => h("code", null, short(a.channel, 6))],
          ["Network's answer to the send", (a) => SEND_ANSWERS[a.answer] ?? a.answer ?? "–"],
          ["Result", result],
        ],
        t.attempts,
        "No attempts.",
      ),
    );
  });
}
