/**
 * Reads the `.cpuprofile` that `bun --cpu-prof` writes on exit (Chrome DevTools format: a tree
 * of nodes with call frames; `samples[i]` is the node running at sample i, `timeDeltas[i]` the
 * µs since the previous sample, from `startTime`, epoch µs) and sums each function's self time,
 * and its total time (samples with the function anywhere on the stack, counted once), over the
 * samples inside a time window (the measured phase, not the relay's start-up). Bun samples only
 * while the process runs, so a sample's time is its delta capped at 10 intervals (idle gaps are
 * not work).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { ROOT } from "./procs.ts";

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
}
/** Longest time one sample stands for, µs (the default interval is 1,000 µs). */
const MAX_SAMPLE_US = 10_000;

export interface HotFunction {
  name: string;
  location: string;
  selfMs: number;
  selfPct: number;
  totalMs: number;
  /** The caller its self time came from most (function and location). */
  caller: string;
}

export interface ProfileSummary {
  file: string;
  markdown: string | null;
  /** Time the samples in the window stand for, and how many there were. */
  sampledMs: number;
  samples: number;
  top: HotFunction[];
  /**
   * Sampled time by owner: the package (node_modules) or project file of the innermost frame that
   * has one; "(native)" when no frame does (the HTTP server, timers, sockets).
   */
  owners: { owner: string; ms: number; pct: number }[];
}

/** The package or project file a frame's path belongs to; null for a native or built-in frame. */
function ownerOf(path: string): string | null {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (pkg) return pkg[1]!;
  if (!path.startsWith("/")) return null;
  const rel = relative(ROOT, path);
  return rel.startsWith("..") ? null : rel;
}

/** The profile in `dir` between two epoch-ms instants, summarised: the `limit` functions with the most self time. */
export function summarizeProfile(dir: string, fromMs: number, toMs: number, limit = 15): ProfileSummary {
  const files = readdirSync(dir);
  const file = files.find((f) => f.endsWith(".cpuprofile"));
  if (!file) throw new Error(`no .cpuprofile in ${dir} (found: ${files.join(", ") || "nothing"})`);
  const md = files.find((f) => f.endsWith(".md"));
  const prof = JSON.parse(readFileSync(join(dir, file), "utf8")) as CpuProfile;
  const parent = new Map<number, number>();
  const keyOf = new Map<number, string>();
  const ownerOfNode = new Map<number, string | null>();
  const frames = new Map<string, { name: string; location: string }>();
  for (const node of prof.nodes) {
    for (const c of node.children ?? []) parent.set(c, node.id);
    const { functionName, url, lineNumber } = node.callFrame;
    const path = url.replace(/^file:\/\//, "");
    const location = path ? `${path.startsWith("/") ? relative(ROOT, path) : path}:${lineNumber + 1}` : "(native)";
    const key = `${functionName}@${location}`;
    keyOf.set(node.id, key);
    ownerOfNode.set(node.id, ownerOf(path));
    frames.set(key, { name: functionName || "(anonymous)", location });
  }
  const self = new Map<string, number>();
  const callers = new Map<string, Map<string, number>>();
  const total = new Map<string, number>();
  const owned = new Map<string, number>();
  let sampledUs = 0;
  let samples = 0;
  let at = prof.startTime;
  for (let i = 0; i < prof.samples.length; i++) {
    at += prof.timeDeltas[i] ?? 0;
    if (at < fromMs * 1000 || at > toMs * 1000) continue;
    const dt = Math.min(MAX_SAMPLE_US, prof.timeDeltas[i + 1] ?? 0);
    sampledUs += dt;
    samples++;
    let id: number | undefined = prof.samples[i]!;
    const leaf = keyOf.get(id)!;
    self.set(leaf, (self.get(leaf) ?? 0) + dt);
    const up = parent.get(id);
    if (up !== undefined) {
      const byCaller = callers.get(leaf) ?? new Map<string, number>();
      byCaller.set(keyOf.get(up)!, (byCaller.get(keyOf.get(up)!) ?? 0) + dt);
      callers.set(leaf, byCaller);
    }
    let owner: string | null = null;
    for (let o: number | undefined = id; o !== undefined && owner === null; o = parent.get(o))
      owner = ownerOfNode.get(o) ?? null;
    owned.set(owner ?? "(native)", (owned.get(owner ?? "(native)") ?? 0) + dt);
    const seen = new Set<string>();
    while (id !== undefined) {
      const k = keyOf.get(id)!;
      if (!seen.has(k)) {
        seen.add(k);
        total.set(k, (total.get(k) ?? 0) + dt);
      }
      id = parent.get(id);
    }
  }
  const top = [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit)
    .map(([k, us]) => ({
      ...frames.get(k)!,
      selfMs: us / 1000,
      selfPct: (100 * us) / Math.max(1, sampledUs),
      totalMs: (total.get(k) ?? 0) / 1000,
      caller: topCaller(callers.get(k), frames),
    }));
  const owners = [...owned.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit)
    .map(([owner, us]) => ({ owner, ms: us / 1000, pct: (100 * us) / Math.max(1, sampledUs) }));
  return {
    file: join(dir, file),
    markdown: md ? join(dir, md) : null,
    sampledMs: sampledUs / 1000,
    samples,
    top,
    owners,
  };
}

function topCaller(byCaller: Map<string, number> | undefined, frames: Map<string, { name: string; location: string }>) {
  const top = [...(byCaller ?? [])].sort((a, b) => b[1] - a[1])[0];
  if (!top) return "";
  const f = frames.get(top[0])!;
  return `${f.name} ${f.location}`;
}
