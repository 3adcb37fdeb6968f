// The console's DOM helpers: `h` builds an element (text is always text, never parsed as HTML), `$`
// finds one, and the small formatters and the table every page uses.

export const $ = (sel) => document.querySelector(sel);

/** An element: h("a", { href: "#" }, "text", child…). Text is always text (never parsed as HTML). */
export function h(tag, props, ...kids) {
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
export function xlm(stroops) {
  if (stroops === null || stroops === undefined) return "–";
  const v = BigInt(stroops);
  const neg = v < 0n;
  const a = neg ? -v : v;
  const frac = (a % 10_000_000n).toString().padStart(7, "0").replace(/0+$/, "");
  return `${neg ? "-" : ""}${(a / 10_000_000n).toLocaleString("en")}${frac ? `.${frac}` : ""} XLM`;
}
export const when = (iso) => (iso ? new Date(iso).toLocaleString() : "–");
export const short = (s, n = 6) => (s && s.length > 2 * n + 1 ? `${s.slice(0, n)}…${s.slice(-n)}` : (s ?? "–"));
export const badge = (s) => h("span", { class: `badge s-${s}` }, s);

/** A table of `rows`, one column per [label, cell(row), class?]; `empty` said when there is no row. */
export function table(columns, rows, empty = "Nothing yet.") {
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
