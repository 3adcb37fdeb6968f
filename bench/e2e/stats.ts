/** Percentiles and plain-text tables for the benchmark's report. */

/** The p-th percentile (nearest rank) of `values`; NaN when there are none. */
export function pct(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** Milliseconds, rounded: "812", "1,204"; "-" for NaN. */
export const ms = (v: number) => (Number.isFinite(v) ? Math.round(v).toLocaleString("en-US") : "-");

/** A count with thousands separators. */
export const n = (v: number) => v.toLocaleString("en-US");

/**
 * A table with a rule under the header; `align` has one letter per column, `l` or `r`
 * (default: the first column left-aligned, the others right-aligned).
 */
export function table(header: string[], rows: string[][], align?: string): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const left = (i: number) => (align ? align[i] === "l" : i === 0);
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (left(i) ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

/** Counts of each value, as "a 12, b 3" (largest first). */
export function counts(values: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return Object.fromEntries(Object.entries(out).sort((a, b) => b[1] - a[1]));
}
export const countsText = (c: Record<string, number>) =>
  Object.entries(c)
    .map(([k, v]) => `${k} ${n(v)}`)
    .join(", ") || "-";
