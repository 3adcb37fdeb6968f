// Overview: per network its health (GET /health), latest ledger, upstream and channel pool, and the
// submissions of the last 10 minutes, their outcomes and the credits spent today; refreshed every 3 s.

import { api } from "./api.js";
import { badge, h, xlm } from "./dom.js";
import { every } from "./view.js";

export async function overview(view) {
  const nets = h("div", { class: "grid" });
  const traffic = h("div", { class: "card" });
  view.prepend(h("h1", null, "Overview"));
  view.append(nets, traffic);
  every(3000, async () => {
    const [health, pools, stats] = await Promise.all([
      fetch("/health", { cache: "no-store" }).then((r) => r.json()),
      api("GET", "/v1/admin/channels"),
      api("GET", "/v1/admin/stats?minutes=10"),
    ]);
    nets.replaceChildren(
      ...Object.entries(health.networks).map(([name, n]) => {
        const pool = pools.pools.find((p) => p.network === name);
        const idle = pool
          ? pool.channels.filter((c) => c.state === "active" && (!c.inFlight || c.inFlight.count === 0)).length
          : 0;
        return h(
          "section",
          { class: "card", "aria-label": name },
          h("h2", null, `${name} `, badge(n.status)),
          h(
            "dl",
            null,
            h("dt", null, "Latest ledger"),
            h("dd", null, n.latestLedger.toLocaleString("en")),
            h("dt", null, "Upstream"),
            h("dd", null, n.upstream),
            h("dt", null, "Pool"),
            h("dd", null, pool ? `${pool.current} of ${pool.target} channels, ${idle} free` : "no channel pool"),
            h("dt", null, "Funder"),
            h("dd", null, pool ? xlm(pool.funder.balance) : "–"),
          ),
          n.lastError ? h("p", { class: "error" }, n.lastError) : null,
        );
      }),
    );
    const minutes = new Map();
    const outcomes = new Map();
    for (const m of stats.perMinute) {
      minutes.set(m.minute, (minutes.get(m.minute) ?? 0) + m.count);
      outcomes.set(m.status, (outcomes.get(m.status) ?? 0) + m.count);
    }
    const now = Math.floor(Date.now() / 60_000) * 60_000;
    const series = Array.from(
      { length: 10 },
      (_, i) => minutes.get(new Date(now - (9 - i) * 60_000).toISOString().replace(/\.\d+Z$/, "Z")) ?? 0,
    );
    const max = Math.max(1, ...series);
    traffic.replaceChildren(
      h("h2", null, "Submissions"),
      h(
        "div",
        { class: "grid" },
        h(
          "div",
          null,
          h("div", { class: "stat" }, String(series.at(-1))),
          h("div", { class: "muted" }, "this minute"),
          h(
            "div",
            { class: "bars", role: "img", "aria-label": `per minute, last 10 minutes: ${series.join(", ")}` },
            series.map((n) => h("span", { style: null, "data-n": n })),
          ),
        ),
        h(
          "div",
          null,
          h("div", { class: "stat" }, xlm(stats.creditsSpentToday)),
          h("div", { class: "muted" }, "credits spent today (UTC)"),
        ),
        h(
          "div",
          null,
          h("div", { class: "muted" }, "Outcomes, last 10 minutes"),
          outcomes.size
            ? h(
                "ul",
                null,
                [...outcomes].map(([s, n]) => h("li", null, badge(s), ` ${n}`)),
              )
            : h("p", { class: "muted" }, "none"),
        ),
      ),
    );
    // bar heights through the CSSOM (the CSP allows no inline style attributes)
    traffic.querySelectorAll(".bars span").forEach((s, i) => {
      s.style.height = `${(100 * series[i]) / max}%`;
    });
  });
}
