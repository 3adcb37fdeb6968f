// The operator console: plain DOM, no framework, nothing from elsewhere. It uses the admin API only
// (/v1/admin/*, with the session cookie and X-CSRF-Token on changes) and GET /health. The admin
// token is sent once, to sign in, and never kept: the CSRF token lives in this module's memory.

import { projectKeys } from "./keys.js";

const SESSION = "/v1/admin/session";
const POLICY_FIELDS = [
  ["requestsPerSecond", "Requests per second", "number"],
  ["burst", "Burst", "integer"],
  ["maxFee", "Max fee (stroops)", "stroops"],
  ["maxOperations", "Max operations", "integer"],
  ["dailySpendLimit", "Daily spend limit (stroops)", "stroops"],
  ["testnetDailySpendLimit", "Testnet daily spend limit (stroops)", "stroops"],
  ["lowBalanceAlert", "Low balance alert (stroops)", "stroops"],
  ["allowedOperations", "Allowed operations (comma-separated; empty: any)", "list"],
  ["feeStrategy", "Fee strategy", ["fast", "economy"]],
  ["allow", 'Allowlists (JSON: {"contracts": [{"contract", "functions"}], "destinations", "assets"})', "json"],
  ["activeFrom", "Active from (ISO 8601)", "text"],
  ["activeUntil", "Active until (ISO 8601)", "text"],
  ["perUser", 'Per end-user caps a day (JSON: {"maxTransactionsPerDay", "maxFeePerDay"})', "json"],
  ["approval", 'Approval server (JSON: {"url", "timeoutMs", "onFailure"})', "json"],
];
const STATUSES = ["pending", "submitted", "success", "failed", "rejected", "expired"];

let csrf = null;
let timers = [];
let renderId = 0;
const $ = (sel) => document.querySelector(sel);

/** An element: h("a", { href: "#" }, "text", child…). Text is always text (never parsed as HTML). */
function h(tag, props, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props ?? {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of kids.flat(Infinity))
    if (c !== null && c !== undefined && c !== false) el.append(c instanceof Node ? c : String(c));
  return el;
}

/** Stroops (a decimal string) as XLM. */
function xlm(stroops) {
  if (stroops === null || stroops === undefined) return "–";
  const v = BigInt(stroops);
  const neg = v < 0n;
  const a = neg ? -v : v;
  const frac = (a % 10_000_000n).toString().padStart(7, "0").replace(/0+$/, "");
  return `${neg ? "-" : ""}${(a / 10_000_000n).toLocaleString("en")}${frac ? `.${frac}` : ""} XLM`;
}
const when = (iso) => (iso ? new Date(iso).toLocaleString() : "–");
const short = (s, n = 6) => (s && s.length > 2 * n + 1 ? `${s.slice(0, n)}…${s.slice(-n)}` : (s ?? "–"));
const badge = (s) => h("span", { class: `badge s-${s}` }, s);

class ApiError extends Error {
  constructor(status, error) {
    super(error?.message ?? `HTTP ${status}`);
    this.status = status;
    this.error = error;
  }
}

async function api(method, path, body) {
  const headers = {};
  if (body !== undefined) headers["content-type"] = "application/json";
  if (method !== "GET" && csrf) headers["x-csrf-token"] = csrf;
  const res = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "same-origin",
    cache: "no-store",
  });
  const data = await res.json().catch(() => null);
  // (an answer to a request sent before signing out does not overwrite the sign-out's message)
  if (res.status === 401 && path.startsWith("/v1/admin") && csrf) signedOut("Your session has ended: sign in again.");
  if (!res.ok) throw new ApiError(res.status, data?.error);
  return data;
}

/** Runs `fn` now and every `ms` while the current view is shown. */
function every(ms, fn) {
  const id = renderId;
  const run = () => (id === renderId ? fn().catch(showError) : undefined);
  run();
  timers.push(setInterval(run, ms));
}

function showError(e) {
  const box = $("#view-error");
  if (box) box.textContent = e instanceof Error ? e.message : String(e);
}

function table(columns, rows, empty = "Nothing yet.") {
  if (!rows.length) return h("p", { class: "muted" }, empty);
  return h(
    "div",
    { class: "table-wrap" },
    h(
      "table",
      { class: "stack" },
      h(
        "thead",
        null,
        h(
          "tr",
          null,
          columns.map(([label, , cls]) => h("th", { class: cls }, label)),
        ),
      ),
      h(
        "tbody",
        null,
        rows.map((r) =>
          h(
            "tr",
            null,
            columns.map(([label, cell, cls]) => h("td", { "data-label": label, class: cls }, cell(r))),
          ),
        ),
      ),
    ),
  );
}

function field(label, input, id) {
  input.id = id;
  return h("div", { class: "field" }, h("label", { for: id }, label), input);
}

/** A form whose submit runs `fn` (errors shown in its alert line); the submit button is off meanwhile. */
function form(fn, ...kids) {
  const err = h("p", { class: "error", role: "alert" });
  const f = h("form", { class: "row" }, ...kids, err);
  f.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    err.textContent = "";
    const buttons = f.querySelectorAll("button");
    for (const b of buttons) b.disabled = true;
    try {
      await fn(f);
    } catch (e) {
      err.textContent = e.message;
      if (e instanceof ApiError && e.error?.details?.field) err.dataset.field = e.error.details.field;
      if (fn.onError) fn.onError(e);
    } finally {
      for (const b of buttons) b.disabled = false;
    }
  });
  return f;
}

// ---- session --------------------------------------------------------------------------------------------

function show(which) {
  for (const id of ["loading", "disabled", "sign-in", "view"]) $(`#${id}`).hidden = id !== which;
  $("#nav").hidden = which !== "view";
  $("#sign-out").hidden = which !== "view";
  $("#sign-out-all").hidden = which !== "view";
}

function signedOut(message) {
  csrf = null;
  stopTimers();
  show("sign-in");
  $("#sign-in-error").textContent = message ?? "";
  $("#admin-token").focus();
}

async function start() {
  $("#sign-in-form").addEventListener("submit", signIn);
  $("#sign-out").addEventListener("click", signOut);
  $("#sign-out-all").addEventListener("click", signOutEverywhere);
  window.addEventListener("hashchange", render);
  const res = await fetch(SESSION, { cache: "no-store", credentials: "same-origin" });
  if (res.status === 404) return show("disabled");
  if (res.ok) {
    csrf = (await res.json()).csrfToken;
    return signedIn();
  }
  signedOut();
}

async function signIn(ev) {
  ev.preventDefault();
  const input = $("#admin-token");
  const token = input.value;
  input.value = ""; // the token is not kept anywhere
  const err = $("#sign-in-error");
  err.textContent = "";
  const res = await fetch(SESSION, {
    method: "POST",
    headers: { authorization: `Bearer ${token}` },
    credentials: "same-origin",
  });
  const data = await res.json().catch(() => null);
  if (res.status === 201) {
    csrf = data.csrfToken;
    return signedIn();
  }
  if (res.status === 429)
    err.textContent = `Too many wrong tokens: try again in ${res.headers.get("retry-after") ?? "60"} s.`;
  else if (res.status === 404) show("disabled");
  else err.textContent = "That is not the admin token.";
}

function signedIn() {
  show("view");
  if (!location.hash || location.hash === "#") location.hash = "#/overview";
  else render();
}

async function signOut() {
  try {
    await api("DELETE", SESSION);
  } finally {
    signedOut("Signed out.");
  }
}

/** Ends every console session (every browser, every instance), this one too. */
async function signOutEverywhere() {
  stopTimers();
  try {
    await api("DELETE", "/v1/admin/sessions");
  } finally {
    signedOut("Every console session has ended.");
  }
}

// ---- routing --------------------------------------------------------------------------------------------

function stopTimers() {
  renderId++;
  for (const t of timers) clearInterval(t);
  timers = [];
}

const ROUTES = [
  [/^#\/overview$/, overview],
  [/^#\/channels$/, channels],
  [/^#\/projects$/, projects],
  [/^#\/projects\/([^/]+)$/, project],
  [/^#\/transactions$/, transactions],
  [/^#\/transactions\/([0-9a-fA-F]{64})$/, transaction],
];

function render() {
  if (!csrf) return;
  stopTimers();
  const view = $("#view");
  view.replaceChildren();
  const hash = location.hash || "#/overview";
  const [re, fn] = ROUTES.find(([r]) => r.test(hash)) ?? ROUTES[0];
  const section = hash.split("/")[1];
  for (const a of document.querySelectorAll("#nav a"))
    if (a.getAttribute("href") === `#/${section}`) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  view.append(h("p", { id: "view-error", class: "error", role: "alert" }));
  fn(view, ...(re.exec(hash) ?? []).slice(1)).catch(showError);
}

// ---- overview -------------------------------------------------------------------------------------------

async function overview(view) {
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

// ---- channels -------------------------------------------------------------------------------------------

async function channels(view) {
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
            `Funder ${short(p.funder.publicKey)} · ${xlm(p.funder.balance)} · channels ${xlm(p.totals.balance)}`,
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

// ---- projects -------------------------------------------------------------------------------------------

async function projects(view) {
  const search = h("input", { type: "search", placeholder: "name or id" });
  const name = h("input", { required: true, maxlength: 200 });
  const list = h("div");
  let all = [];
  const create = async () => {
    const p = await api("POST", "/v1/admin/projects", { name: name.value });
    location.hash = `#/projects/${p.id}`;
  };
  const creating = h(
    "div",
    { class: "card", hidden: true },
    h("h2", null, "New project"),
    form(create, field("Project name", name, "project-name"), h("button", { type: "submit" }, "Create project")),
  );
  const draw = () => {
    const q = search.value.trim().toLowerCase();
    const shown = all.filter((p) => !q || p.name.toLowerCase().includes(q) || p.id.toLowerCase().includes(q));
    list.replaceChildren(
      table(
        [
          ["Name", (p) => h("a", { href: `#/projects/${p.id}` }, p.name)],
          ["Status", (p) => badge(p.status)],
          ["Credits", (p) => xlm(p.creditBalance), "num"],
          ["Created", (p) => when(p.createdAt)],
        ],
        shown,
        q ? "No project matches." : "No projects yet.",
      ),
    );
  };
  search.addEventListener("input", draw);
  view.prepend(h("h1", null, "Projects"));
  view.append(
    h(
      "div",
      { class: "row" },
      field("Search projects", search, "project-search"),
      h(
        "button",
        {
          type: "button",
          onclick: () => {
            creating.hidden = false;
            name.focus();
          },
        },
        "New project",
      ),
    ),
    creating,
    list,
  );
  all = (await api("GET", "/v1/admin/projects")).projects;
  draw();
}

async function project(view, id) {
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
    projectKeys(keys, id, { h, api, table, field, form, when, badge, showError }),
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

async function projectCredits(box, id) {
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

async function projectPolicy(box, p, drawHead) {
  const inputs = {};
  const errors = {};
  const fields = POLICY_FIELDS.map(([name, label, kind]) => {
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
    const patch = Object.fromEntries(POLICY_FIELDS.map(([name, , kind]) => [name, value(name, kind)]));
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

/** A delivery's attempts, oldest first: when, the HTTP status or the error, how long it took. */
const attemptList = (log) =>
  log.length
    ? h(
        "ol",
        { class: "attempts" },
        log.map((a) => h("li", null, `${when(a.at)}: ${a.status ?? a.error ?? "no answer"} (${a.durationMs} ms)`)),
      )
    : "–";

async function projectWebhooks(box, id) {
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

// ---- transactions ---------------------------------------------------------------------------------------

async function transactions(view) {
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

async function transaction(view, hash) {
  view.prepend(h("p", null, h("a", { href: "#/transactions" }, "← Transactions")));
  const box = h("div");
  view.append(box);
  const health = await fetch("/health", { cache: "no-store" })
    .then((r) => r.json())
    .catch(() => null);
  every(2000, async () => {
    const t = await api("GET", `/v1/admin/transactions/${hash}`);
    const local = health?.networks?.[t.network]?.upstream === "localnet";
    const explorer = t.network === "mainnet" ? "public" : "testnet";
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
            ["Network", t.network],
            ["Ledger", t.ledger ?? "–"],
            ["Fee charged", t.feeCharged ? xlm(t.feeCharged) : "–"],
            ["Project", t.projectId ? h("a", { href: `#/projects/${t.projectId}` }, t.projectId) : "anonymous"],
            ["Created", when(t.createdAt)],
            ["Updated", when(t.updatedAt)],
            ["Error", t.error ? `${t.error.code}: ${t.error.message}` : "–"],
          ].map(([k, v]) => [h("dt", null, k), h("dd", null, v)]),
        ),
        h(
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
          local ? h("span", { class: "muted" }, " (an embedded localnet: its transactions are not there)") : null,
        ),
      ),
      h("h2", null, "Attempts"),
      table(
        [
          ["Sent", (a) => when(a.sentAt)],
          ["Hash", (a) => h("code", null, short(a.hash, 8))],
          ["Fee bid", (a) => a.feeBid, "num"],
          ["Channel", (a) => h("code", null, short(a.channel, 6))],
          ["Answer", (a) => a.answer ?? "–"],
        ],
        t.attempts,
        "No attempts.",
      ),
    );
  });
}

start().catch((e) => {
  show("sign-in");
  $("#sign-in-error").textContent = e.message;
});
