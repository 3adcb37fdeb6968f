// Channels: each network's pool (funder, bounds, every channel with its state, balance and holder),
// refreshed every 2 s, and the form that resizes a pool (its notice stays until the pool has converged).

import { api } from "./api.js";
import { badge, h, short, table, xlm } from "./dom.js";
import { field, form } from "./forms.js";
import { every } from "./view.js";

/** Where a key is, in words: its seed held by the relay, sealed in the database, or in the HSM. */
const signerText = (kind) =>
  ({ seed: "seed held by the relay", sealed: "sealed key", pkcs11: "key in the HSM" })[kind] ?? "unknown key";

export async function channels(view) {
  const network = h(
    "select",
    null,
    h("option", { value: "testnet" }, "testnet"),
    h("option", { value: "mainnet" }, "mainnet"),
  );
  const count = h("input", { type: "number", min: 1, max: 1000, required: true, inputmode: "numeric" });
  const max = h("input", { type: "number", min: 1, max: 1000, inputmode: "numeric" });
  const note = h("p", { class: "notice", role: "status", hidden: true });
  const pools = h("div");
  let resizing = null; // the network whose resize the notice tells of, until its pool has converged
  const resize = async () => {
    const r = await api("PUT", "/v1/admin/channels", {
      network: network.value,
      count: Number(count.value),
      ...(max.value ? { max: Number(max.value) } : {}),
    });
    resizing = r.network;
    note.hidden = false;
    note.textContent = `Resizing ${r.network} from ${r.current} to ${r.target} channels…`;
  };
  const converged = (p) => p.current === p.target && !p.totals.creating && !p.totals.draining;
  view.prepend(h("h1", null, "Channels"));
  view.append(
    h(
      "div",
      { class: "card" },
      form(
        resize,
        field("Network", network, "resize-network"),
        field("Channel count", count, "channel-count"),
        field("Maximum while requests wait", max, "channel-max"),
        h("button", { type: "submit" }, "Resize"),
      ),
      note,
    ),
    pools,
  );
  every(2000, async () => {
    const all = await api("GET", "/v1/admin/channels");
    const resized = all.pools.find((x) => x.network === resizing);
    if (resized && converged(resized)) {
      resizing = null;
      note.hidden = true;
      note.textContent = "";
    }
    if (!count.value) {
      const p = all.pools.find((x) => x.network === network.value);
      if (p) count.value = p.target;
      if (p?.max && !max.value) max.value = p.max;
    }
    pools.replaceChildren(
      ...all.pools.map((p) =>
        h(
          "section",
          { class: "card", "aria-label": `${p.network} pool` },
          h(
            "h2",
            null,
            `${p.network}: ${p.current} of ${p.target} channels`,
            converged(p) ? h("span", { class: "ok" }, " ✓") : " (converging)",
          ),
          h(
            "p",
            { class: "muted" },
            `Funder ${short(p.funder.publicKey)} (${signerText(p.funder.signer)}) · ${xlm(p.funder.balance)} · ` +
              `channels ${xlm(p.totals.balance)}`,
            p.instance ? ` · seen from ${p.instance}` : "",
          ),
          h(
            "p",
            { class: "muted", "aria-label": `${p.network} pool bounds` },
            `Grows to at most ${p.max ?? p.target} channels while requests wait · ${p.waiting ?? 0} waiting now`,
          ),
          p.lastError ? h("p", { class: "error" }, p.lastError) : null,
          table(
            [
              ["Address", (c) => h("code", { title: c.publicKey }, short(c.publicKey, 8))],
              ["State", (c) => badge(c.state)],
              ["Balance", (c) => xlm(c.balance), "num"],
              ["In flight", (c) => (c.inFlight ? `${c.inFlight.count} (${xlm(c.inFlight.fees)})` : "–"), "num"],
              ["Key", (c) => signerText(c.signer)],
              ["Holder", (c) => c.holder ?? (p.instance ? "none" : "this relay")],
            ],
            p.channels,
            "No channels.",
          ),
        ),
      ),
      ...all.unavailable.map((u) =>
        h("p", { class: "muted" }, `${u.network}: no channel pool (${u.reason.replace("_", " ")})`),
      ),
    );
  });
}
